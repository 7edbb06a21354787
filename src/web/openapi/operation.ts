// Building blocks of OpenAPI operations, used by the route tables (src/web/routes/*.routes.ts):
// parameters and bodies come from the JSON Schemas the routes validate with, errors and image
// answers from one list each, so an operation states only what is particular to its route.
import type { RouteInputs } from '../middleware/validate.js';
import { IMAGE_MEDIA_TYPES } from '../../api/responses.schemas.js';
import { demoHeaders, requestModeHeaders, requestModeQuery } from '../schemas/request-extras.schemas.js';
import { fileField } from '../schemas/upload.schemas.js';

export type Json = Record<string, unknown>;
export type Schema = { $id?: string; type?: unknown; properties?: Record<string, Json>; required?: readonly string[] } & Json;
type PathSet = 'A' | 'B';

/** One operation of the document (the path and method come from the route). */
export interface Operation {
  tags: string[];
  summary: string;
  description?: string;
  operationId: string;
  security: Json[];
  parameters?: Json[];
  requestBody?: Json;
  responses: Json;
}

export const API_KEY = [{ ApiKeyAuth: [] }];
export const NO_AUTH: Json[] = [];
export const ADMIN = [{ AdminBearer: [] }, { AdminToken: [] }, { AdminBasic: [] }];

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const idOf = (schema: Schema) => {
  if (!schema.$id) throw new Error('schema without $id');
  return schema.$id;
};

export function parametersOf(schema: Schema, where: 'path' | 'query' | 'header'): Json[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, prop]) => {
    const { description, ...rest } = prop as Json & { description?: string };
    return { name, in: where, required: required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

/** `?async=true` and `Prefer: respond-async`, accepted by every upload and by /transform. */
export const requestModeParameters = () => [...parametersOf(requestModeQuery, 'query'), ...parametersOf(requestModeHeaders, 'header')];
/** The demo gate's `X-Demo-Token` (and the Origin/Referer it also accepts). */
export const demoParameters = () => parametersOf(demoHeaders, 'header');

export function pathParameter(name: string, description: string): Json {
  return { name, in: 'path', required: true, description, schema: { type: 'string', minLength: 1 } };
}

/**
 * A route's operation with what its declared inputs say: path and query parameters before the
 * operation's own (headers, demo and request-mode switches), and its JSON body.
 */
export function withInputs(op: Operation, inputs: RouteInputs | undefined): Operation {
  if (!inputs) return op;
  const declared = [...(inputs.params ? parametersOf(inputs.params as Schema, 'path') : []), ...(inputs.query ? parametersOf(inputs.query as Schema, 'query') : [])];
  const parameters = [...declared, ...(op.parameters ?? [])];
  const requestBody = op.requestBody ?? (inputs.body ? jsonBody(inputs.body as Schema) : undefined);
  return { ...op, ...(parameters.length > 0 ? { parameters } : {}), ...(requestBody ? { requestBody } : {}) };
}

/** The schema behind each JSON body, so the document lists exactly the bodies its routes take. */
const BODY_SCHEMAS = new WeakMap<object, Schema>();

export function jsonBody(schema: Schema): Json {
  const body = { required: true, content: { 'application/json': { schema: ref(idOf(schema)) } } };
  BODY_SCHEMAS.set(body, schema);
  return body;
}

export function jsonBodySchema(body: Json | undefined): Schema | undefined {
  return body ? BODY_SCHEMAS.get(body) : undefined;
}

/** multipart/form-data: the `file` part plus the form fields of a schema. */
export function multipartBody(fields: Schema | null, extra: Record<string, Json> = {}): Json {
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: { type: 'object', properties: { file: fileField, ...(fields?.properties ?? {}), ...extra }, required: ['file'] },
        encoding: { file: { contentType: IMAGE_MEDIA_TYPES.join(', ') } },
      },
    },
  };
}

export const json = (name: string, description = 'OK') => ({ description, content: { 'application/json': { schema: ref(name) } } });
/** A response of one media type with a plain schema (HTML pages, text, files). */
export const plain = (description: string, mediaType: string, schema: Json = { type: 'string' }) => ({ description, content: { [mediaType]: { schema } } });

export const binaryImage = { type: 'string', format: 'binary' };
export const imageMediaTypes = () => Object.fromEntries(IMAGE_MEDIA_TYPES.map((t) => [t, { schema: binaryImage }]));
export const imageHeaders = {
  ETag: { schema: { type: 'string' } },
  'Cache-Control': {
    schema: { type: 'string' },
    description: 'URLs naming the version (`v`, and derivative files): public, max-age=31536000, immutable; unversioned URLs and originals: public, max-age=UNVERSIONED_MAX_AGE (60 s), must-revalidate (ETag)',
  },
  'X-Cache': { schema: { type: 'string', enum: ['HIT', 'MISS'] }, description: 'HIT: the derivative existed; MISS: a worker made it for this request' },
};

export function imageResponses(description: string, cacheHeader = true): Json {
  const headers = cacheHeader ? imageHeaders : { ETag: imageHeaders.ETag, 'Cache-Control': imageHeaders['Cache-Control'] };
  return {
    '200': { description, headers, content: imageMediaTypes() },
    '206': { description: 'A byte range (`Range: bytes=…`)', content: { 'application/octet-stream': { schema: binaryImage } } },
    '304': { description: 'Not modified (`If-None-Match` matched the ETag)' },
    '416': { description: 'Range not satisfiable' },
  };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request (set A: missing file; malformed multipart, a second file, a form field too long, bad URL parameters, invalid public_id or JSON, a body that does not match its Content-Encoding)',
  401: 'Invalid, revoked or missing API key; unsigned or tampered signed URL',
  403: 'Forbidden (demo gate, storage quota, public derivative cap, default project)',
  404: 'Not found (also for other users’ resources)',
  409: 'Conflict (project slug exists)',
  413: 'Too large (upload over MAX_UPLOAD_BYTES or the plan limit, image over MAX_INPUT_PIXELS, JSON body over 100 kB)',
  415: 'Unsupported or corrupt image (decided by the bytes); a JSON body in a charset other than UTF-8 or an unknown Content-Encoding',
  422: 'A parameter out of range or of the wrong type (set B: also a missing `file`), or an unprocessable image',
  429: 'Per-IP rate limit (Retry-After)',
  503: 'A backing service is unavailable or the queue is full (Retry-After)',
  504: 'The job did not finish within JOB_TIMEOUT_MS (the message names the job id)',
};

/** Error responses in the shape of a path set: A `{type, msg, status_code}`, B `{detail}` (422: a list). */
export function errors(set: PathSet, statuses: number[]): Json {
  const out: Json = {};
  for (const status of statuses) {
    let schema: Json;
    if (set === 'A') schema = ref('SetAError');
    else if (status === 422) schema = { oneOf: [ref('SetBValidationError'), ref('SetBError')] };
    else schema = ref('SetBError');
    out[String(status)] = { description: STATUS_TEXT[status] ?? 'Error', content: { 'application/json': { schema } } };
  }
  return out;
}
