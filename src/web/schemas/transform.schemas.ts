// Transform query schemas, generated from the parameter registry (no second list of parameters).
import { MAX_SIDE, paramsFor, type ParamDefinition, type PathSet } from '../../imaging/params.js';
import { AUTO_WIDTH_DEFAULTS, MAX_AUTO_WIDTH } from '../../imaging/srcset-widths.js';

function paramSchema(p: ParamDefinition, set: PathSet): Record<string, unknown> {
  const value: Record<string, unknown> = { type: p.type };
  if (p.minimum !== undefined) value.minimum = p.minimum;
  if (p.maximum !== undefined) value.maximum = p.maximum;
  if (p.multipleOf !== undefined) value.multipleOf = p.multipleOf;
  // A number or one of its words: the number branch first, so "80" is coerced to 80 as before.
  const s: Record<string, unknown> = p.keywords ? { description: p.description, anyOf: [value, { type: 'string', enum: [...p.keywords] }] } : { ...value, description: p.description };
  if (p.enum) s.enum = [...p.enum];
  if (p.pattern !== undefined) s.pattern = p.pattern;
  if (p.example !== undefined) s.examples = [p.example];
  const def = set === 'A' ? p.defaultA : p.defaultB;
  if (def !== undefined) s.default = def;
  return s;
}

export function transformParamProperties(set: PathSet): Record<string, Record<string, unknown>> {
  return Object.fromEntries(paramsFor(set).map((p) => [p.name, paramSchema(p, set)]));
}

export const srcProperty = { type: 'string', minLength: 1, maxLength: 2083, description: 'URL of a base image in the delivery store' };

/** Signed-URL parameters (browser requests without X-API-Key). */
export const signatureProperties = {
  kid: { type: 'string', maxLength: 64, description: 'Credential id that signed the URL' },
  sig: { type: 'string', maxLength: 128, description: 'HMAC-SHA256 (base64url) of the canonical parameters with the API secret' },
  exp: { type: 'integer', minimum: 0, maximum: 99_999_999_999, description: 'Expiry of a signed URL (Unix seconds), signed with the rest; 403 after it' },
};

export const setATransformQuery = {
  $id: 'SetATransformQuery',
  type: 'object',
  properties: { src: srcProperty, ...transformParamProperties('A'), ...signatureProperties },
  required: ['src'],
};

export const setBTransformQuery = {
  $id: 'SetBTransformQuery',
  type: 'object',
  properties: { src: srcProperty, ...transformParamProperties('B') },
  required: ['src'],
};

export const setBServeQuery = {
  $id: 'SetBServeQuery',
  type: 'object',
  // A signature (the owner's kid, sig over the parameters with src = the image id) lifts the keyless limits.
  properties: { ...transformParamProperties('B'), ...signatureProperties },
};

/** Longest lifetime a srcset's signed URLs can be given (one year). */
export const SIGNED_URL_MAX_TTL_SECONDS = 365 * 24 * 3600;

export const srcsetQuery = {
  $id: 'SrcsetQuery',
  type: 'object',
  properties: {
    src: srcProperty,
    w: { type: 'string', default: '400,800,1200', maxLength: 200, description: `Comma-separated widths (1-20 values, each 1-${MAX_SIDE}), or auto: widths about bytes_step bytes apart` },
    min_w: { type: 'integer', minimum: 1, maximum: MAX_AUTO_WIDTH, default: AUTO_WIDTH_DEFAULTS.min_w, description: 'w=auto: the smallest width' },
    max_w: { type: 'integer', minimum: 1, maximum: MAX_AUTO_WIDTH, description: `w=auto: the largest width (default the original's, at most ${MAX_AUTO_WIDTH})` },
    bytes_step: { type: 'integer', minimum: 1000, maximum: 10_000_000, default: AUTO_WIDTH_DEFAULTS.bytes_step, description: 'w=auto: bytes between consecutive widths' },
    max_images: { type: 'integer', minimum: 1, maximum: 20, default: AUTO_WIDTH_DEFAULTS.max_images, description: 'w=auto: at most this many widths (then evenly spaced in bytes)' },
    f: transformParamProperties('A').f,
    q: transformParamProperties('A').q,
    sizes: { type: 'string', maxLength: 1000 },
    ttl: { type: 'integer', minimum: 1, maximum: SIGNED_URL_MAX_TTL_SECONDS, description: 'Seconds the returned signed URLs stay valid (their exp); without it they do not expire' },
  },
  required: ['src'],
};
