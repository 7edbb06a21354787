// The OpenAPI 3.1 document of the front door. Paths, methods, parameters and responses come from
// the route tables the app is mounted from (src/web/routes/*.routes.ts); parameters and bodies
// from the JSON Schemas the routes validate with. test/web/openapi.test.ts checks the document
// against the Express routes in both directions.
import { SIGNED_NAMES } from '../../imaging/signing-core.js';
import { PASSPORT_COUNTRIES } from '../../passport/specs.js';
import { SERVICE_VERSION } from '../controllers/status.controller.js';
import { routeTables } from '../routes/index.js';
import { openApiPath, type RouteOptions } from '../routes/route-table.js';
import { RESPONSE_SCHEMAS } from '../../api/responses.schemas.js';
import { API_KEY, idOf, jsonBodySchema, withInputs, type Json, type Operation, type Schema } from './operation.js';

export type OpenApiOptions = RouteOptions;

/** A schema as a component: without its `$id` (which would change the base of inner `$ref`s). */
function component(schema: Schema): Json {
  const { $id: _id, ...rest } = schema;
  return rest;
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
    if (paths[path][method]) throw new Error(`${method.toUpperCase()} ${path} is in the route tables twice`);
    paths[path][method] = op;
  };
  const requestSchemas = new Set<Schema>();
  for (const table of routeTables(options)) {
    for (const route of table.routes) {
      const operation = withInputs(route.openapi, route.inputs);
      add(openApiPath(route.path), route.method, operation);
      const body = jsonBodySchema(operation.requestBody);
      if (body) requestSchemas.add(body);
      if (route.alias) add(route.alias.path, route.method, { ...operation, summary: route.alias.summary, operationId: route.alias.operationId });
    }
  }
  const tagged = (name: string) => Object.values(paths).some((item) => Object.values(item).some((op) => op.tags.includes(name)));

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
      { name: 'Upload', description: 'POST /upload answers errors as `{type, msg, status_code}` (set A), POST /cdn/upload as `{detail}` (set B)' },
      { name: 'Transform', description: 'GET /transform (JSON, or bytes for a signed URL; set A errors) and the image routes serving bytes (set B errors)' },
      { name: 'Srcset', description: 'Signed responsive URLs; set A errors' },
      { name: 'Images', description: 'Your images: listing, deletion, usage, the key check' },
      { name: 'CDN', description: 'Public delivery by image id' },
      { name: 'Projects' },
      { name: 'Plans' },
      { name: 'Passport', description: `Passport and visa photos: ${PASSPORT_COUNTRIES.join(', ')}` },
      { name: 'Jobs', description: 'Async mode' },
      { name: 'Status' },
      ...(tagged('Files') ? [{ name: 'Files' }] : []),
      { name: 'Documentation' },
      { name: 'Operations', description: 'Monitoring and the queue dashboard' },
    ],
    security: API_KEY,
    paths,
    components: {
      // Response bodies, and the JSON request bodies the route tables name.
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
