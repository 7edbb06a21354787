// Transform query schemas, generated from the parameter registry (no second list of parameters),
// and the inputs of the routes that take them. Their value types come from the registry too
// (ParamValues): nothing here restates a parameter.
import { MAX_SIDE, paramsFor, type ParamDefinition, type ParamValues, type PathSet } from '../../imaging/params.js';
import { SRCSET_WIDTHS } from '../../imaging/srcset.js';
import { AUTO_WIDTH_DEFAULTS, MAX_AUTO_WIDTH } from '../../imaging/srcset-widths.js';
import { ServiceError, type ValidationIssue } from '../../errors.js';
import type { InputOf, RouteInputs, TypedSchema } from '../middleware/validate.js';
import { CASE_INSENSITIVE, badUrlParameter, validationError } from '../validation.js';
import { imageIdParams } from './images.schemas.js';

function paramSchema(p: ParamDefinition, set: PathSet): Record<string, unknown> {
  const value: Record<string, unknown> = { type: p.type };
  if (p.minimum !== undefined) value.minimum = p.minimum;
  if (p.maximum !== undefined) value.maximum = p.maximum;
  if (p.multipleOf !== undefined) value.multipleOf = p.multipleOf;
  // A number or one of its words: the number branch first, so "80" is coerced to 80 as before.
  const s: Record<string, unknown> = p.keywords ? { description: p.description, anyOf: [value, { type: 'string', enum: [...p.keywords] }] } : { ...value, description: p.description };
  if (p.enum) {
    s.enum = [...p.enum];
    s[CASE_INSENSITIVE] = true;
  }
  if (p.pattern !== undefined) s.pattern = p.pattern;
  if (p.example !== undefined) s.examples = [p.example];
  const def = set === 'A' ? p.defaultA : p.defaultB;
  if (def !== undefined) s.default = def;
  return s;
}

export function transformParamProperties(set: PathSet): Record<string, Record<string, unknown>> {
  return Object.fromEntries(paramsFor(set).map((p) => [p.name, paramSchema(p, set)]));
}

export const srcProperty = { type: 'string', minLength: 1, maxLength: 2083, description: 'URL of a base image in the delivery store' } as const;

/** Signed-URL parameters (browser requests without X-API-Key). */
export const signatureProperties = {
  kid: { type: 'string', maxLength: 64, description: 'Credential id that signed the URL' },
  sig: { type: 'string', maxLength: 128, description: 'HMAC-SHA256 (base64url) of the canonical parameters with the API secret' },
  exp: { type: 'integer', minimum: 0, maximum: 99_999_999_999, description: 'Expiry of a signed URL (Unix seconds), signed with the rest; 403 after it' },
} as const;

type ObjectSchema = { type: 'object'; properties: Record<string, unknown> };

/**
 * An object schema of fixed properties with transform parameters of a path set (all, or the ones
 * named) inserted after the property `at` (default: the last): its value type is the fixed
 * part's, inferred, and the registry's.
 */
function withTransformParams<S extends ObjectSchema, P extends PathSet, N extends keyof ParamValues<P> = keyof ParamValues<P>>(set: P, schema: S, options: { at?: string; only?: readonly N[] } = {}) {
  const params = Object.entries(transformParamProperties(set)).filter(([name]) => !options.only || (options.only as readonly string[]).includes(name));
  const fixed = Object.entries(schema.properties);
  const cut = options.at === undefined ? fixed.length : fixed.findIndex(([name]) => name === options.at) + 1;
  const properties = Object.fromEntries([...fixed.slice(0, cut), ...params, ...fixed.slice(cut)]);
  return { ...schema, properties } as unknown as TypedSchema<InputOf<S> & Pick<ParamValues<P>, N>> & S;
}

export const setATransformQuery = withTransformParams('A', { $id: 'SetATransformQuery', type: 'object', properties: { src: srcProperty, ...signatureProperties }, required: ['src'] } as const, { at: 'src' });
export const setBTransformQuery = withTransformParams('B', { $id: 'SetBTransformQuery', type: 'object', properties: { src: srcProperty }, required: ['src'] } as const);
// A signature (the owner's kid, sig over the parameters with src = the image id) lifts the keyless limits.
export const setBServeQuery = withTransformParams('B', { $id: 'SetBServeQuery', type: 'object', properties: signatureProperties } as const);

/** Longest lifetime a srcset's signed URLs can be given (one year). */
export const SIGNED_URL_MAX_TTL_SECONDS = 365 * 24 * 3600;

export const srcsetQuery = withTransformParams(
  'A',
  {
    $id: 'SrcsetQuery',
    type: 'object',
    properties: {
      src: srcProperty,
      w: { type: 'string', default: SRCSET_WIDTHS.default.join(','), maxLength: 200, description: `Comma-separated widths (1-${SRCSET_WIDTHS.maxCount} values, each 1-${MAX_SIDE}), or auto: widths about bytes_step bytes apart` },
      min_w: { type: 'integer', minimum: 1, maximum: MAX_AUTO_WIDTH, default: AUTO_WIDTH_DEFAULTS.min_w, description: 'w=auto: the smallest width' },
      max_w: { type: 'integer', minimum: 1, maximum: MAX_AUTO_WIDTH, description: `w=auto: the largest width (default the original's, at most ${MAX_AUTO_WIDTH})` },
      bytes_step: { type: 'integer', minimum: 1000, maximum: 10_000_000, default: AUTO_WIDTH_DEFAULTS.bytes_step, description: 'w=auto: bytes between consecutive widths' },
      max_images: { type: 'integer', minimum: 1, maximum: SRCSET_WIDTHS.maxCount, default: AUTO_WIDTH_DEFAULTS.max_images, description: 'w=auto: at most this many widths (then evenly spaced in bytes)' },
      sizes: { type: 'string', maxLength: 1000 },
      ttl: { type: 'integer', minimum: 1, maximum: SIGNED_URL_MAX_TTL_SECONDS, description: 'Seconds the returned signed URLs stay valid (their exp); without it they do not expire' },
    },
    required: ['src'],
  } as const,
  { at: 'w', only: ['f', 'q'] },
);

/** GET /transform: a missing or bad `src` is set A's 400 (incorrect URL parameters), any other parameter its 422. */
function refuseTransform(issues: ValidationIssue[]): ServiceError {
  const srcIssue = issues.find((i) => i.loc[1] === 'src');
  if (srcIssue) return new ServiceError('bad_request', `Missing or invalid "src": ${srcIssue.msg}`);
  return validationError(issues);
}

export const transformInputs = { query: setATransformQuery, refuse: refuseTransform } as const satisfies RouteInputs;
export const srcsetInputs = { query: srcsetQuery, refuse: badUrlParameter } as const satisfies RouteInputs;
export const imagePathInputs = { apiKey: true, query: setBTransformQuery } as const satisfies RouteInputs;
export const imageDemoInputs = { query: setBTransformQuery } as const satisfies RouteInputs;
export const cdnServeInputs = { params: imageIdParams, query: setBServeQuery } as const satisfies RouteInputs;

/** GET /image/info?src= (keyed) and GET /cdn/{image_id}/info (public): an original's info. */
export const imageInfoQuery = { $id: 'ImageInfoQuery', type: 'object', properties: { src: srcProperty }, required: ['src'] } as const;
export const imageInfoInputs = { apiKey: true, query: imageInfoQuery } as const satisfies RouteInputs;
export const cdnInfoInputs = { params: imageIdParams } as const satisfies RouteInputs;
