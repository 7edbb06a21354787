// Presets (PRESETS): named parameter sets, checked against the registry's schema when the front
// door starts, expanded before a request's plan is resolved. Explicit parameters win.
import { ConfigError, type Config, type PresetValues } from '../../config.js';
import { ServiceError } from '../../errors.js';
import { PRESETTABLE_PARAMS, type TransformRequest } from '../../imaging/params.js';
import { transformParamProperties } from '../schemas/transform.schemas.js';
import { compile } from '../validation.js';

export class PresetBook {
  private readonly presets = new Map<string, TransformRequest>();

  constructor(definitions: Record<string, PresetValues>) {
    const properties = Object.fromEntries(Object.entries(transformParamProperties('B')).filter(([name]) => PRESETTABLE_PARAMS.includes(name)));
    // Defaults are left out: a preset holds only what it names, so explicit parameters can win.
    for (const p of Object.values(properties)) delete p.default;
    const schema = compile<TransformRequest>({ type: 'object', properties, additionalProperties: false });
    for (const [name, values] of Object.entries(definitions)) {
      const copy = { ...values };
      const checked = schema.check(copy, 'query');
      if (!checked.ok) {
        const issue = checked.issues[0];
        throw new ConfigError('PRESETS', `preset "${name}": ${String(issue.loc[issue.loc.length - 1])} ${issue.msg}`);
      }
      this.presets.set(name, checked.value);
    }
  }

  get names(): string[] {
    return [...this.presets.keys()];
  }

  /**
   * The request with its preset's parameters filled in. `given`: the names the caller really sent
   * (the request also holds the schema's defaults, which must not beat the preset).
   */
  expand<T extends TransformRequest>(request: T, given: Iterable<string>): T {
    if (request.preset === undefined) return request;
    const preset = this.presets.get(request.preset);
    if (!preset) {
      throw new ServiceError('invalid_parameter', `Unknown preset "${request.preset}"`, {
        issues: [{ loc: ['query', 'preset'], msg: this.presets.size ? `must be one of: ${this.names.join(', ')}` : 'no presets are configured', type: 'enum' }],
      });
    }
    const sent = new Set(given);
    const explicit = Object.fromEntries(Object.entries(request).filter(([name, value]) => value !== undefined && sent.has(name)));
    delete explicit.preset;
    return { ...request, ...preset, ...explicit } as T;
  }
}

const books = new WeakMap<Config, PresetBook>();

/** The preset book of a configuration (built and checked once). */
export function presetBook(config: Config): PresetBook {
  let book = books.get(config);
  if (!book) {
    book = new PresetBook(config.presets);
    books.set(config, book);
  }
  return book;
}
