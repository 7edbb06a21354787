// ajv-compiled JSON Schemas: the single source for request validation (and the OpenAPI document).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ServiceError, type ValidationIssue } from '../errors.js';

export type Location = 'query' | 'body' | 'header' | 'path';

const ajv = new Ajv({ allErrors: true, coerceTypes: true, strict: true, allowUnionTypes: true });
// ajv-formats is CommonJS: under NodeNext its function is the module's `default` property.
const addFormats = (addFormatsModule as unknown as { default: (a: Ajv) => Ajv }).default;
addFormats(ajv);

/**
 * `x-case-insensitive: true` on a string schema: the value is lower-cased before its enum is
 * checked, so `fit=COVER` is `cover` wherever the schema is used (routes, presets) and the
 * OpenAPI document says so.
 */
export const CASE_INSENSITIVE = 'x-case-insensitive';
ajv.addKeyword({
  keyword: CASE_INSENSITIVE,
  schemaType: 'boolean',
  modifying: true,
  before: 'enum',
  compile: (folds: boolean) => (data: unknown, ctx) => {
    if (folds && typeof data === 'string' && ctx?.parentData !== undefined) (ctx.parentData as Record<string | number, unknown>)[ctx.parentDataProperty] = data.toLowerCase();
    return true;
  },
});

const ISSUE_TYPES: Record<string, string> = {
  required: 'missing',
  minimum: 'greater_than_equal',
  maximum: 'less_than_equal',
  exclusiveMinimum: 'greater_than',
  exclusiveMaximum: 'less_than',
  enum: 'enum',
  minLength: 'string_too_short',
  maxLength: 'string_too_long',
  pattern: 'string_pattern_mismatch',
  multipleOf: 'multiple_of',
  minItems: 'too_short',
  maxItems: 'too_long',
  additionalProperties: 'extra_forbidden',
  format: 'value_error',
};

function toIssue(location: Location, err: ErrorObject): ValidationIssue {
  const path = err.instancePath
    .split('/')
    .slice(1)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
  if (err.keyword === 'required') path.push((err.params as { missingProperty: string }).missingProperty);
  if (err.keyword === 'additionalProperties') path.push((err.params as { additionalProperty: string }).additionalProperty);
  const type = err.keyword === 'type' ? `${String((err.params as { type: string }).type).split(',')[0]}_type` : (ISSUE_TYPES[err.keyword] ?? err.keyword);
  let msg = err.message ?? 'is invalid';
  if (err.keyword === 'enum') msg = `must be one of: ${(err.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  if (err.keyword === 'required') msg = 'Field required';
  return { loc: [location, ...path], msg, type };
}

/**
 * A value matching none of an anyOf's branches (q: a number or auto) is one issue: the first
 * branch's type, the branches' messages joined ("must be >= 1 or must be one of: auto, …").
 */
function withUnionsMerged(errors: ErrorObject[], location: Location): ValidationIssue[] {
  const branchesOf = (union: ErrorObject) => errors.filter((e) => e !== union && e.schemaPath.startsWith(union.schemaPath.replace(/\/anyOf$/, '/anyOf/')));
  const unions = errors.filter((e) => e.keyword === 'anyOf');
  const inUnion = new Set(unions.flatMap(branchesOf));
  return errors
    .filter((e) => !inUnion.has(e))
    .map((e) => {
      if (e.keyword !== 'anyOf') return toIssue(location, e);
      const branches = branchesOf(e).map((b) => toIssue(location, b));
      return branches.length > 0 ? { loc: branches[0].loc, msg: branches.map((b) => b.msg).join(' or '), type: branches[0].type } : toIssue(location, e);
    });
}

export interface CompiledSchema<T> {
  schema: object;
  /** Coerces in place and returns the value, or the list of every problem found. */
  check(data: unknown, location: Location): { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };
}

const COMPILED = new WeakMap<object, CompiledSchema<unknown>>();

/** The compiled form of a schema object, compiled once however many routes use it. */
export function compiled<T>(schema: object): CompiledSchema<T> {
  let found = COMPILED.get(schema);
  if (!found) {
    found = compile(schema);
    COMPILED.set(schema, found);
  }
  return found as CompiledSchema<T>;
}

export function compile<T>(schema: object): CompiledSchema<T> {
  const fn: ValidateFunction = ajv.compile(schema);
  return {
    schema,
    check(data, location) {
      if (fn(data)) return { ok: true, value: data as T };
      const seen = new Set<string>();
      const issues = withUnionsMerged(fn.errors ?? [], location).filter((i) => {
        const k = JSON.stringify(i.loc) + i.type;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
      return { ok: false, issues };
    },
  };
}

/** A 422 carrying every issue (set B renders it as detail[]; set A names the first parameter). */
export function validationError(issues: ValidationIssue[]): ServiceError {
  const first = issues[0];
  const name = first ? String(first.loc[first.loc.length - 1]) : 'request';
  return new ServiceError('invalid_parameter', `Invalid value for "${name}": ${first?.msg ?? 'invalid'}`, { issues });
}

/** Set A's answer to incorrect URL parameters (spec 7): 400 naming the first. */
export function badUrlParameter(issues: ValidationIssue[]): ServiceError {
  const issue = issues[0];
  return new ServiceError('bad_request', `Invalid "${String(issue.loc[1])}": ${issue.msg}`);
}

/** Query values arrive as strings; an empty value means "not given" for optional parameters. */
export function queryObject(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) {
    if (v === '' || v === undefined) continue;
    out[k] = v;
  }
  return out;
}
