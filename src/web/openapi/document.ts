// The OpenAPI 3.1 document of the front door, generated from the JSON Schemas the routes validate
// with (src/web/schemas/*, themselves generated from the parameter registry for transforms):
// parameters, bodies and responses are derived from those objects, never listed a second time.
// test/web/openapi.test.ts checks it against the Express routes in both directions.
import { SIGNED_NAMES } from '../../imaging/signing-core.js';
import { SERVICE_VERSION } from '../controllers/status.controller.js';
import { passportUploadFields, passportUrlQuery } from '../schemas/passport.schemas.js';
import { PASSPORT_COUNTRIES } from '../../passport/specs.js';
import { demoHeaders, fileField, publicIdProperty, requestModeHeaders, requestModeQuery, setAUploadQuery } from '../schemas/request-extras.schemas.js';
import { IMAGE_MEDIA_TYPES, RESPONSE_SCHEMAS } from '../schemas/responses.schemas.js';
import { createProjectBody, deleteImagesBody, deleteProjectBody, listImagesQuery, updateProjectBody, uploadFields } from '../schemas/set-b.schemas.js';
import { setATransformQuery, setBServeQuery, setBTransformQuery, srcsetQuery } from '../schemas/transform.schemas.js';
import { DOCS_ASSETS } from './docs-assets.js';

export interface OpenApiOptions {
  baseUrl: string;
  cdnUrl: string;
  /** Local storage: the front door serves stored objects at CDN_URL's path. */
  servesFiles: boolean;
  /** ADMIN_TOKEN is set: /metrics needs it and /admin/queues exists. */
  adminEnabled: boolean;
}

type Json = Record<string, unknown>;
type Schema = { $id?: string; type?: unknown; properties?: Record<string, Json>; required?: string[] } & Json;
type PathSet = 'A' | 'B';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const idOf = (schema: Schema) => {
  if (!schema.$id) throw new Error('schema without $id');
  return schema.$id;
};
/** A schema as a component: without its `$id` (which would change the base of inner `$ref`s). */
function component(schema: Schema): Json {
  const { $id: _id, ...rest } = schema;
  return rest;
}

function parametersOf(schema: Schema, where: 'query' | 'header'): Json[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, prop]) => {
    const { description, ...rest } = prop as Json & { description?: string };
    return { name, in: where, required: required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

function pathParameter(name: string, description: string): Json {
  return { name, in: 'path', required: true, description, schema: { type: 'string', minLength: 1 } };
}

function jsonBody(schema: Schema): Json {
  return { required: true, content: { 'application/json': { schema: ref(idOf(schema)) } } };
}

/** multipart/form-data: the `file` part plus the form fields of a schema. */
function multipartBody(fields: Schema | null, extra: Record<string, Json> = {}): Json {
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

const json = (name: string, description = 'OK') => ({ description, content: { 'application/json': { schema: ref(name) } } });

const binaryImage = { type: 'string', format: 'binary' };
const imageHeaders = {
  ETag: { schema: { type: 'string' } },
  'Cache-Control': {
    schema: { type: 'string' },
    description: 'URLs naming the version (`v`, and derivative files): public, max-age=31536000, immutable; unversioned URLs and originals: public, max-age=UNVERSIONED_MAX_AGE (60 s), must-revalidate (ETag)',
  },
  'X-Cache': { schema: { type: 'string', enum: ['HIT', 'MISS'] }, description: 'HIT: the derivative existed; MISS: a worker made it for this request' },
};
function imageResponses(description: string, cacheHeader = true): Json {
  const headers = cacheHeader ? imageHeaders : { ETag: imageHeaders.ETag, 'Cache-Control': imageHeaders['Cache-Control'] };
  return {
    '200': { description, headers, content: Object.fromEntries(IMAGE_MEDIA_TYPES.map((t) => [t, { schema: binaryImage }])) },
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

function errors(set: PathSet, statuses: number[]): Json {
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

const API_KEY = [{ ApiKeyAuth: [] }];
const NO_AUTH: Json[] = [];

interface Operation {
  tags: string[];
  summary: string;
  description?: string;
  operationId: string;
  security?: Json[];
  parameters?: Json[];
  requestBody?: Json;
  responses: Json;
}

/** Order of the signed parameters (src/imaging/signing-core.ts): src, the registry's parameters, exp, kid. */
const SIGNED_ORDER = SIGNED_NAMES.join(', ');

const INFO_DESCRIPTION = `Pictor: image upload, on-the-fly transformation, responsive srcset, projects and usage, and passport photos.

**Authentication.** Send your API key in the \`X-API-Key\` header (use **Authorize** above, then *Try it out*). Keys are created with \`npm run keys -- create\`.

**Signed URLs.** Browsers send no header, so \`GET /transform\` also accepts a signed URL: \`kid\` (the credential id) and \`sig\` = base64url(HMAC-SHA256(API secret, canonical query)). The canonical query is \`name=encodeURIComponent(value)\` pairs joined by \`&\` for \`src\`, the transform parameters, \`exp\` and \`kid\`, in registry order (\`${SIGNED_ORDER}\`), omitting absent ones. An optional \`exp\` (Unix seconds) makes the URL expire (403 after it). \`GET /generate/srcset\` returns such URLs (\`ttl\` seconds sets their \`exp\`); a signed request answers with the image bytes.

**Two path sets.** Set A (\`/upload\`, \`/transform\`, \`/generate/srcset\`) answers errors as \`{type, msg, status_code}\`; every other route answers \`{detail: "…"}\`, or 422 \`{detail: [{loc, msg, type}]}\` listing every invalid input.

**Async.** Uploads and \`/transform\` accept \`Prefer: respond-async\` or \`?async=true\`: 202 with \`/jobs/{id}\`.`;

export function buildOpenApiDocument(options: OpenApiOptions): Json {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const paths: Record<string, Record<string, Operation>> = {};
  const add = (path: string, method: string, op: Operation) => {
    paths[path] ??= {};
    paths[path][method] = op;
  };

  const modeParams = [...parametersOf(requestModeQuery, 'query'), ...parametersOf(requestModeHeaders, 'header')];
  const demoParams = parametersOf(demoHeaders, 'header');

  // ── Status ──
  add('/', 'get', { tags: ['Status'], summary: 'API root with basic information', operationId: 'getRoot', security: NO_AUTH, responses: { '200': json('ApiRoot') } });
  add('/health', 'get', {
    tags: ['Status'],
    summary: 'Health check for monitoring',
    description: 'Checks Redis, the catalog, storage and live worker heartbeats.',
    operationId: 'getHealth',
    security: NO_AUTH,
    responses: { '200': json('Health'), '503': json('Health', 'A check failed') },
  });

  // ── Set A ──
  add('/upload', 'post', {
    tags: ['Set A'],
    summary: 'Upload an image',
    operationId: 'uploadA',
    security: API_KEY,
    parameters: [...parametersOf(setAUploadQuery, 'query'), ...modeParams],
    requestBody: multipartBody(null, { public_id: { ...publicIdProperty, description: 'Same as the query parameter (the query wins)' } }),
    responses: { '200': json('UploadResult'), '202': json('JobAccepted', 'Accepted (async mode)'), ...errors('A', [400, 401, 403, 413, 415, 503, 504]) },
  });
  add('/transform', 'get', {
    tags: ['Set A'],
    summary: 'Transform a stored image',
    description:
      'With `X-API-Key`: the JSON transform result. Without it, a signed URL (`kid` + `sig`, see above) answers with the image bytes, the format negotiated from `Accept` when `f=auto`. Only `w` keeps the aspect ratio; `w` and `h` crop to fill; neither fits inside 1280×720.',
    operationId: 'transformA',
    security: [...API_KEY, {}],
    parameters: [...parametersOf(setATransformQuery, 'query'), ...modeParams],
    responses: {
      '200': {
        description: 'JSON result (API key) or the image bytes (signed URL)',
        headers: { 'X-Cache': imageHeaders['X-Cache'] },
        content: { 'application/json': { schema: ref('TransformResult') }, ...Object.fromEntries(IMAGE_MEDIA_TYPES.map((t) => [t, { schema: binaryImage }])) },
      },
      '202': json('JobAccepted', 'Accepted (async mode)'),
      '304': { description: 'Not modified (signed URL with a matching If-None-Match)' },
      ...errors('A', [400, 401, 403, 404, 422, 503, 504]),
    },
  });
  add('/generate/srcset', 'get', {
    tags: ['Set A'],
    summary: 'Generate srcset, sizes and a default URL',
    description: 'Entries are signed `/transform` URLs that load in browsers without a key.',
    operationId: 'generateSrcset',
    security: API_KEY,
    parameters: parametersOf(srcsetQuery, 'query'),
    responses: { '200': json('SrcsetResult'), ...errors('A', [400, 401, 404, 422]) },
  });

  // ── Set B: images ──
  const setBQuery = parametersOf(setBTransformQuery, 'query');
  add('/image/test', 'get', {
    tags: ['Set B: images'],
    summary: 'Validate credentials',
    operationId: 'imageTest',
    security: API_KEY,
    responses: { '200': json('ImageTestResult'), ...errors('B', [401, 422]) },
  });
  add('/image/demo/{path}', 'get', {
    tags: ['Set B: images'],
    summary: 'Public demo of transformations',
    description: 'Allowed with `X-Demo-Token` = DEMO_TOKEN or an Origin/Referer in DEMO_ORIGINS; `src` only from DEMO_SOURCES; output at most 2000 px per side; rate-limited per IP.',
    operationId: 'imageDemo',
    security: NO_AUTH,
    parameters: [pathParameter('path', 'Vanity name; an image extension (.jpg, .png, .webp, .avif) sets the format when `f` is absent'), ...setBQuery, ...demoParams],
    responses: { ...imageResponses('The transformed image'), ...errors('B', [403, 404, 422, 429, 503, 504]) },
  });
  add('/image/{path}', 'get', {
    tags: ['Set B: images'],
    summary: 'Process and serve one of your images with transformations',
    operationId: 'imagePath',
    security: API_KEY,
    parameters: [pathParameter('path', 'Vanity name (may contain "/"); an image extension sets the format when `f` is absent'), ...setBQuery],
    responses: { ...imageResponses('The transformed image'), ...errors('B', [401, 404, 422, 503, 504]) },
  });

  // ── Set B: CDN ──
  add('/cdn/upload', 'post', {
    tags: ['Set B: CDN'],
    summary: 'Upload an image into a project',
    operationId: 'cdnUpload',
    security: API_KEY,
    parameters: modeParams,
    requestBody: multipartBody(uploadFields, { public_id: publicIdProperty }),
    responses: { '200': json('CdnUploadResult'), '202': json('JobAccepted', 'Accepted (async mode)'), ...errors('B', [400, 401, 403, 413, 415, 422, 503, 504]) },
  });
  add('/cdn/images', 'get', {
    tags: ['Set B: CDN'],
    summary: 'List your images (newest first)',
    operationId: 'listImages',
    security: API_KEY,
    parameters: parametersOf(listImagesQuery, 'query'),
    responses: { '200': json('ImageList'), ...errors('B', [401, 422]) },
  });
  add('/cdn/images', 'delete', {
    tags: ['Set B: CDN'],
    summary: 'Delete images',
    description: 'Removes originals, derivatives and their bytes from usage.',
    operationId: 'deleteImages',
    security: API_KEY,
    requestBody: jsonBody(deleteImagesBody),
    responses: { '200': json('DeleteImagesResult'), ...errors('B', [400, 401, 413, 415, 422]) },
  });
  add('/cdn/usage', 'get', {
    tags: ['Set B: CDN'],
    summary: 'Storage and bandwidth usage',
    operationId: 'getUsage',
    security: API_KEY,
    responses: { '200': json('Usage'), ...errors('B', [401, 422]) },
  });
  add('/cdn/{image_id}', 'delete', {
    tags: ['Set B: CDN'],
    summary: 'Delete one image',
    operationId: 'deleteImage',
    security: API_KEY,
    parameters: [pathParameter('image_id', 'imageId')],
    responses: { '200': json('DeleteImagesResult'), ...errors('B', [401, 404, 422]) },
  });
  add('/cdn/{image_id}', 'get', {
    tags: ['Set B: CDN'],
    summary: 'Serve an optimized image (public)',
    description: `Public (the spec declares no key). Existing derivatives are always served; new ones are capped per image (PUBLIC_DERIVATIVES_PER_IMAGE) and the route is rate-limited per IP. Without w and dpr, the client hints Sec-CH-Width/Width and Sec-CH-DPR/DPR are honoured (Accept-CH, Vary). With PUBLIC_PRESETS_ONLY=true only preset, f and v are accepted (403 otherwise). A \`v\` naming a replaced version answers 404.`,
    operationId: 'cdnServe',
    security: NO_AUTH,
    parameters: [pathParameter('image_id', 'imageId'), ...parametersOf(setBServeQuery, 'query')],
    responses: { ...imageResponses('The image'), ...errors('B', [403, 404, 422, 429, 503, 504]) },
  });

  // ── Set B: projects ──
  add('/cdn/projects', 'get', { tags: ['Projects'], summary: 'List projects', operationId: 'listProjects', security: API_KEY, responses: { '200': json('ProjectList'), ...errors('B', [401, 422]) } });
  add('/cdn/projects', 'post', {
    tags: ['Projects'],
    summary: 'Create a project',
    operationId: 'createProject',
    security: API_KEY,
    requestBody: jsonBody(createProjectBody),
    responses: { '200': json('Project'), ...errors('B', [400, 401, 409, 413, 415, 422]) },
  });
  add('/cdn/projects', 'patch', {
    tags: ['Projects'],
    summary: 'Rename or describe a project',
    operationId: 'updateProject',
    security: API_KEY,
    requestBody: jsonBody(updateProjectBody),
    responses: { '200': json('Project'), ...errors('B', [400, 401, 403, 404, 409, 413, 415, 422]) },
  });
  add('/cdn/projects', 'delete', {
    tags: ['Projects'],
    summary: 'Delete a project',
    description: '`moveImagesToDefault: false` (default) deletes its images; true moves them to the default project.',
    operationId: 'deleteProject',
    security: API_KEY,
    requestBody: jsonBody(deleteProjectBody),
    responses: { '200': json('DeleteProjectResult'), ...errors('B', [400, 401, 403, 404, 413, 415, 422]) },
  });

  // ── Plans ──
  add('/plans', 'get', { tags: ['Plans'], summary: 'Plan information', operationId: 'listPlans', security: NO_AUTH, responses: { '200': json('Plans') } });
  add('/plans/', 'get', { tags: ['Plans'], summary: 'Plan information (trailing-slash form)', operationId: 'listPlansSlash', security: NO_AUTH, responses: { '200': json('Plans') } });

  // ── Passport ──
  const passportResponses = {
    '200': {
      description: 'The photo with its compliance report (JSON), or the JPEG itself with `Accept: image/jpeg`',
      content: { 'application/json': { schema: ref('PassportResult') }, 'image/jpeg': { schema: binaryImage } },
    },
    ...errors('B', [400, 403, 404, 413, 415, 422, 429, 503, 504]),
  };
  add('/passport-photo/specs', 'get', {
    tags: ['Passport'],
    summary: 'Passport specifications of every supported country',
    operationId: 'passportSpecs',
    security: NO_AUTH,
    responses: { '200': json('PassportSpecs') },
  });
  add('/passport-photo/demo/process', 'get', {
    tags: ['Passport'],
    summary: 'Process a passport photo from a URL',
    description: 'Gated like the image demo (X-Demo-Token or an allowed Origin/Referer); rate-limited per IP.',
    operationId: 'passportFromUrl',
    security: NO_AUTH,
    parameters: [...parametersOf(passportUrlQuery, 'query'), ...demoParams],
    responses: passportResponses,
  });
  add('/passport-photo/demo/process', 'post', {
    tags: ['Passport'],
    summary: 'Process an uploaded passport photo',
    description: 'Gated like the image demo (X-Demo-Token or an allowed Origin/Referer); rate-limited per IP.',
    operationId: 'passportUpload',
    security: NO_AUTH,
    parameters: demoParams,
    requestBody: multipartBody(passportUploadFields),
    responses: passportResponses,
  });

  // ── Jobs ──
  add('/jobs/{id}', 'get', {
    tags: ['Jobs'],
    summary: 'State of an async job (owner only)',
    description: 'When completed, the body the synchronous call would have returned; finished jobs are kept for an hour.',
    operationId: 'getJob',
    security: API_KEY,
    parameters: [pathParameter('id', 'Job id from a 202 answer')],
    responses: { '200': json('JobStatus'), ...errors('B', [401, 404, 422]) },
  });

  // ── Local storage ──
  if (options.servesFiles) {
    const cdnPath = new URL(options.cdnUrl).pathname.replace(/\/+$/, '');
    if (cdnPath) {
      add(`${cdnPath}/{key}`, 'get', {
        tags: ['Files'],
        summary: 'A stored object (local storage mode)',
        description: 'Public URLs returned by uploads and transforms point here when STORAGE_DRIVER=local. `key` is `<user_id>/images/<public_id>.<ext>` (may contain "/").',
        operationId: 'getFile',
        security: NO_AUTH,
        parameters: [pathParameter('key', 'Storage key')],
        responses: { ...imageResponses('The stored image', false), ...errors('B', [404]) },
      });
    }
  }

  // ── Documentation and operations ──
  const admin = [{ AdminBearer: [] }, { AdminToken: [] }, { AdminBasic: [] }];
  add('/openapi.json', 'get', {
    tags: ['Documentation'],
    summary: 'This OpenAPI document',
    operationId: 'getOpenApi',
    security: NO_AUTH,
    responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } },
  });
  add('/docs', 'get', {
    tags: ['Documentation'],
    summary: 'Interactive documentation (Swagger UI)',
    operationId: 'getDocs',
    security: NO_AUTH,
    responses: { '200': { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } } },
  });
  add('/docs/{asset}', 'get', {
    tags: ['Documentation'],
    summary: 'Static files of the documentation UI',
    operationId: 'getDocsAsset',
    security: NO_AUTH,
    parameters: [{ name: 'asset', in: 'path', required: true, schema: { type: 'string', enum: Object.keys(DOCS_ASSETS) } }],
    responses: { '200': { description: 'The file', content: { '*/*': { schema: binaryImage } } }, ...errors('B', [404]) },
  });
  add('/dashboard', 'get', {
    tags: ['Documentation'],
    summary: 'Web dashboard',
    description: 'Upload, gallery, transform playground, srcset, usage, projects and the passport demo in the browser; paste an API key (kept in session storage). Its static files are served under /dashboard/.',
    operationId: 'getDashboard',
    security: NO_AUTH,
    responses: { '200': { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } }, ...errors('B', [404]) },
  });
  add('/metrics', 'get', {
    tags: ['Operations'],
    summary: 'Prometheus metrics',
    description: options.adminEnabled
      ? 'Requires the admin token (ADMIN_TOKEN): `Authorization: Bearer <token>`, `X-Admin-Token: <token>` or Basic with the token as password.'
      : 'Public: ADMIN_TOKEN is not set on this deployment (set it to protect this route).',
    operationId: 'getMetrics',
    security: options.adminEnabled ? admin : NO_AUTH,
    responses: {
      '200': { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
      ...(options.adminEnabled ? errors('B', [401]) : {}),
    },
  });
  if (options.adminEnabled) {
    add('/admin/queues', 'get', {
      tags: ['Operations'],
      summary: 'Queue dashboard (Bull Board)',
      description: 'Jobs of every queue by state, with retry/clean/promote actions. Requires the admin token; a browser asks for it (any user name, the token as password). Disabled (404) when ADMIN_TOKEN is empty.',
      operationId: 'getQueueDashboard',
      security: admin,
      responses: { '200': { description: 'HTML page (its API lives under /admin/queues/api/)', content: { 'text/html': { schema: { type: 'string' } } } }, ...errors('B', [401]) },
    });
  }

  const requestSchemas = [deleteImagesBody, createProjectBody, updateProjectBody, deleteProjectBody] as Schema[];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Pictor',
      version: SERVICE_VERSION,
      description: INFO_DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      { url: basePath || '/', description: 'This server' },
      { url: options.baseUrl, description: 'BASE_URL' },
    ],
    tags: [
      { name: 'Set A', description: 'Upload, transform and srcset; errors `{type, msg, status_code}`' },
      { name: 'Set B: images', description: 'Transformations served as image bytes' },
      { name: 'Set B: CDN', description: 'Image management, usage and public delivery' },
      { name: 'Projects' },
      { name: 'Plans' },
      { name: 'Passport', description: `Passport and visa photos: ${PASSPORT_COUNTRIES.join(', ')}` },
      { name: 'Jobs', description: 'Async mode' },
      { name: 'Status' },
      ...(options.servesFiles ? [{ name: 'Files' }] : []),
      { name: 'Documentation' },
      { name: 'Operations', description: 'Monitoring and the queue dashboard' },
    ],
    security: API_KEY,
    paths,
    components: {
      schemas: Object.fromEntries([...RESPONSE_SCHEMAS, ...requestSchemas].map((s) => [idOf(s as Schema), component(s as Schema)])),
      securitySchemes: {
        ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key (pk_…); also accepted as X-API-KEY' },
        AdminBearer: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
        AdminToken: { type: 'apiKey', in: 'header', name: 'X-Admin-Token', description: 'ADMIN_TOKEN' },
        AdminBasic: { type: 'http', scheme: 'basic', description: 'Any user name, ADMIN_TOKEN as the password (what a browser prompts for)' },
      },
    },
  };
}
