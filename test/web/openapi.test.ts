// GET /openapi.json: a valid OpenAPI 3.1 document (checked by an OpenAPI validator package) that
// matches the Express routes in both directions, and whose response schemas describe what the
// running service really answers.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'chai';
import type { Express } from 'express';
import { createApp } from '../../src/web/app.js';
import { buildOpenApiDocument } from '../../src/web/openapi/document.js';
import { routeOptions } from '../../src/web/routes/route-table.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Walked {
  /** `METHOD /path` of every route, path parameters written `{}`. */
  routes: Set<string>;
  /** Paths where a sub-router or sub-app is mounted (its own paths are its business). */
  mounts: Set<string>;
}

/** `/cdn/:image_id` and `/cdn/{image_id}` → `/cdn/{}`; `*splat` → `{}`; no trailing slash. */
export function normalizePath(p: string): string {
  const out = p
    .replace(/\{[^}]+\}/g, '{}')
    .replace(/:[A-Za-z0-9_]+/g, '{}')
    .replace(/\*[A-Za-z0-9_]+/g, '{}')
    .replace(/\/+$/, '');
  return out === '' ? '/' : out;
}

/** Walks app.router.stack: routes of routers mounted at `/`, and the paths of other mounts. */
export function walkRoutes(app: Express): Walked {
  const walked: Walked = { routes: new Set(), mounts: new Set() };
  const visit = (stack: any[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths: string[] = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        const methods = Object.keys(layer.route.methods).filter((m) => layer.route.methods[m] && m !== '_all');
        for (const p of paths) for (const m of methods) walked.routes.add(`${m.toUpperCase()} ${normalizePath(prefix + p)}`);
        continue;
      }
      const handle = layer.handle;
      const isRouter = Array.isArray(handle?.stack);
      const isApp = typeof handle?.handle === 'function' && typeof handle?.set === 'function';
      if (!isRouter && !isApp) continue; // plain middleware (path-set, auth, rate limits, 404)
      const raw: string[] = Array.isArray(layer.rawPath) ? layer.rawPath : [layer.rawPath ?? '/'];
      for (const mount of raw) {
        if (mount === '/' && isRouter) visit(handle.stack, prefix);
        else walked.mounts.add(normalizePath(prefix + mount));
      }
    }
  };
  visit((app as any).router.stack, '');
  return walked;
}

/** Operations (`METHOD /path`) of a document, path parameters written `{}`. */
function documentedOperations(doc: Json): Set<string> {
  const documented = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const m of METHODS) if (item[m]) documented.add(`${m.toUpperCase()} ${normalizePath(path)}`);
  }
  return documented;
}

/** What one side has and the other lacks: routes, mounted sub-apps, documented operations. */
function compareWithApp(app: Express, doc: Json) {
  const { routes, mounts } = walkRoutes(app);
  const documented = documentedOperations(doc);
  const documentedMounts = new Set([...documented].map((d) => d.split(' ')[1]));
  return {
    routes,
    mounts,
    undocumented: [...routes].filter((r) => !documented.has(r)),
    undocumentedMounts: [...mounts].filter((m) => !documentedMounts.has(m)),
    withoutRoute: [...documented].filter((d) => !routes.has(d) && !mounts.has(d.split(' ')[1])),
  };
}

describe('OpenAPI document (GET /openapi.json)', function () {
  this.timeout(60_000);
  let svc: TestService;
  let doc: Json;
  let key: string;
  let ajv: Ajv2020;

  before(async () => {
    svc = await TestService.start({ workers: 1, env: { ADMIN_TOKEN: 'openapi-admin-token' } });
    key = (await svc.createUser()).key;
    const res = await request(svc.url('/openapi.json'));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    doc = res.body;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormatsModule as unknown as { default: (a: Ajv2020) => void }).default(ajv);
    ajv.addFormat('binary', true);
    ajv.addSchema(doc, 'openapi.json');
  });
  after(async () => {
    await svc?.stop();
  });

  /** Validates a real answer against the schema the document gives for it. */
  function expectDocumented(path: string, method: string, res: { status: number; headers: Headers; body: unknown }) {
    const responses = doc.paths[path]?.[method]?.responses;
    expect(responses, `${method} ${path} documented`).to.be.an('object');
    const response = responses[String(res.status)];
    expect(response, `${method} ${path} documents status ${res.status}`).to.be.an('object');
    const mediaType = (res.headers.get('content-type') ?? '').split(';')[0];
    expect(Object.keys(response.content ?? {}), `${method} ${path} ${res.status} media types`).to.include(mediaType);
    if (mediaType !== 'application/json') return;
    const pointer = `#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${res.status}/content/application~1json/schema`;
    const validate = ajv.compile({ $ref: `openapi.json${pointer}` });
    const ok = validate(res.body);
    expect(ok, `${method} ${path} ${res.status}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(res.body).slice(0, 500)}`).to.equal(true);
  }

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).to.match(/^3\.1\./);
    const result = await new Validator().validate(doc);
    expect(result.valid, JSON.stringify(result.errors, null, 1)).to.equal(true);
    expect(doc.components.securitySchemes.ApiKeyAuth).to.deep.equal({ type: 'apiKey', in: 'header', name: 'X-API-Key', description: doc.components.securitySchemes.ApiKeyAuth.description });
    const ids = Object.values(doc.paths).flatMap((item: any) => METHODS.filter((m) => item[m]).map((m) => item[m].operationId));
    expect(new Set(ids).size, 'unique operationIds').to.equal(ids.length);
  });

  it('every Express route is documented and every documented path and method is a route', () => {
    const { routes, mounts, undocumented, undocumentedMounts, withoutRoute } = compareWithApp(createApp(svc.deps), doc);
    expect(routes.size).to.be.greaterThan(20);
    expect(undocumented, 'routes missing from the document').to.deep.equal([]);
    expect(undocumentedMounts, 'mounted sub-apps missing from the document').to.deep.equal([]);
    expect(withoutRoute, 'documented operations without a route').to.deep.equal([]);
    // The ones this feature adds are among them.
    for (const r of ['GET /openapi.json', 'GET /docs', 'GET /metrics', 'GET /jobs/{}', 'GET /files/{}']) expect(routes.has(r), r).to.equal(true);
    expect(mounts.has('/admin/queues')).to.equal(true);
  });

  it('lists /files and /admin/queues exactly when the app mounts them (local, GCS on this origin, GCS elsewhere)', () => {
    const cases = [
      { storageDriver: 'local', cdnUrl: svc.deps.config.cdnUrl, adminToken: '', files: true },
      // GCS with CDN_URL on this service (the default): the front door serves the objects.
      { storageDriver: 'gcs', cdnUrl: `${svc.baseUrl}/media`, adminToken: 'openapi-admin-token', files: true },
      // GCS behind a CDN of its own: no /files route here, and none in the document.
      { storageDriver: 'gcs', cdnUrl: 'https://cdn.example.test/bucket', adminToken: '', files: false },
    ] as const;
    for (const c of cases) {
      const config = { ...svc.deps.config, storageDriver: c.storageDriver, cdnUrl: c.cdnUrl, adminToken: c.adminToken };
      const generated = buildOpenApiDocument(routeOptions(config));
      const label = `${c.storageDriver} ${c.cdnUrl} admin=${c.adminToken !== ''}`;
      const { routes, mounts, undocumented, undocumentedMounts, withoutRoute } = compareWithApp(createApp({ ...svc.deps, config }), generated);
      expect({ undocumented, undocumentedMounts, withoutRoute }, label).to.deep.equal({ undocumented: [], undocumentedMounts: [], withoutRoute: [] });
      const filesRoute = `GET ${normalizePath(new URL(c.cdnUrl).pathname)}/{}`;
      expect(routes.has(filesRoute), `${label}: ${filesRoute} mounted`).to.equal(c.files);
      expect(documentedOperations(generated).has(filesRoute), `${label}: ${filesRoute} documented`).to.equal(c.files);
      expect(mounts.has('/admin/queues'), `${label}: queue dashboard`).to.equal(c.adminToken !== '');
    }
  });

  it('parameters come from the validation schemas: transform ranges, enums, signed-URL params, bodies', () => {
    const params = (path: string, method = 'get') => Object.fromEntries((doc.paths[path][method].parameters ?? []).map((p: Json) => [`${p.in}:${p.name}`, p]));
    const transform = params('/transform');
    expect(transform['query:src'].required).to.equal(true);
    expect(transform['query:w'].schema).to.include({ type: 'integer', minimum: 1, maximum: 4200, default: 1280 });
    expect(transform['query:f'].schema.enum).to.deep.equal(['auto', 'webp', 'avif', 'jpeg', 'jpg', 'png']);
    expect(transform['query:gamma'].schema).to.include({ minimum: 1, maximum: 3 });
    expect(transform['query:kid']).to.be.an('object');
    expect(transform['query:sig']).to.be.an('object');
    expect(transform['query:fit'], 'fit is set B only').to.equal(undefined);
    const image = params('/image/{path}');
    expect(image['path:path'].required).to.equal(true);
    expect(image['query:fit'].schema.enum).to.include('cover');
    expect(image['query:opt'].schema.type).to.equal('boolean');
    expect(params('/cdn/images')['query:limit'].schema).to.include({ minimum: 1, maximum: 100, default: 50 });
    expect(params('/image/demo/{path}')['header:X-Demo-Token']).to.be.an('object');
    expect(params('/passport-photo/demo/process')['query:country'].schema.enum).to.deep.equal(['usa', 'india', 'india_visa', 'uk', 'schengen_visa', 'canada', 'china', 'japan']);
    expect(doc.paths['/cdn/images'].delete.requestBody.content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/DeleteImagesBody' });
    expect(doc.components.schemas.DeleteImagesBody.required).to.deep.equal(['imageIds']);
    const cdnUpload = doc.paths['/cdn/upload'].post.requestBody.content['multipart/form-data'].schema;
    expect(cdnUpload.required).to.deep.equal(['file']);
    expect(cdnUpload.properties.file.format).to.equal('binary');
    expect(cdnUpload.properties.project).to.be.an('object');
    expect(doc.paths['/passport-photo/demo/process'].post.requestBody.content['multipart/form-data'].schema.properties.face_x).to.include({ minimum: 0, maximum: 1 });
    // Error shapes per set.
    expect(doc.paths['/upload'].post.responses['401'].content['application/json'].schema.$ref).to.equal('#/components/schemas/SetAError');
    expect(doc.paths['/cdn/usage'].get.responses['422'].content['application/json'].schema.oneOf[0].$ref).to.equal('#/components/schemas/SetBValidationError');
    // Security: key on key routes, none on public ones, key or signature on /transform.
    expect(doc.paths['/cdn/images'].get.security).to.deep.equal([{ ApiKeyAuth: [] }]);
    expect(doc.paths['/cdn/{image_id}'].get.security).to.deep.equal([]);
    expect(doc.paths['/transform'].get.security).to.deep.equal([{ ApiKeyAuth: [] }, {}]);
    expect(doc.paths['/metrics'].get.security.length).to.be.greaterThan(0);
  });

  it('documented 200 bodies and error shapes match what the service answers', async () => {
    const bytes = await jpeg(320, 240);
    expectDocumented('/', 'get', await request(svc.url('/')));
    expectDocumented('/health', 'get', await request(svc.url('/health')));
    expectDocumented('/plans', 'get', await request(svc.url('/plans')));
    expectDocumented('/passport-photo/specs', 'get', await request(svc.url('/passport-photo/specs')));
    expectDocumented('/image/test', 'get', await request(svc.url('/image/test'), { key }));

    const upA = await upload(svc.baseUrl, { bytes, key, query: { public_id: 'docs/one' } });
    expectDocumented('/upload', 'post', upA);
    const src = upA.body.public_url as string;
    expectDocumented('/transform', 'get', await request(svc.url(`/transform?src=${encodeURIComponent(src)}&w=100`), { key }));
    const srcset = await request(svc.url(`/generate/srcset?src=${encodeURIComponent(src)}&w=100,200`), { key });
    expectDocumented('/generate/srcset', 'get', srcset);
    // A signed URL answers with image bytes, a documented media type.
    expectDocumented('/transform', 'get', await request(srcset.body.default, { headers: { Accept: 'image/webp' } }));

    const upB = await upload(svc.baseUrl, { bytes, key, path: '/cdn/upload', fields: { project: 'Docs' } });
    expectDocumented('/cdn/upload', 'post', upB);
    expectDocumented('/cdn/images', 'get', await request(svc.url('/cdn/images?limit=5'), { key }));
    expectDocumented('/cdn/usage', 'get', await request(svc.url('/cdn/usage'), { key }));
    expectDocumented('/cdn/{image_id}', 'get', await request(svc.url(`/cdn/${upB.body.imageId}?w=40`)));
    expectDocumented('/files/{key}', 'get', await request(src));

    const created = await request(svc.url('/cdn/projects'), { method: 'POST', key, json: { name: 'Schema check', description: null } });
    expectDocumented('/cdn/projects', 'post', created);
    expectDocumented('/cdn/projects', 'get', await request(svc.url('/cdn/projects'), { key }));
    expectDocumented('/cdn/projects', 'patch', await request(svc.url('/cdn/projects'), { method: 'PATCH', key, json: { projectId: created.body.projectId, description: 'x' } }));
    expectDocumented('/cdn/projects', 'delete', await request(svc.url('/cdn/projects'), { method: 'DELETE', key, json: { projectId: created.body.projectId } }));
    expectDocumented('/cdn/{image_id}', 'delete', await request(svc.url(`/cdn/${upB.body.imageId}`), { method: 'DELETE', key }));
    expectDocumented('/cdn/images', 'delete', await request(svc.url('/cdn/images'), { method: 'DELETE', key, json: { imageIds: [upB.body.imageId] } }));

    // Async mode: 202, then the job status.
    const queued = await upload(svc.baseUrl, { bytes, key, query: { async: 'true', public_id: 'docs/async' } });
    expectDocumented('/upload', 'post', queued);
    let job: Awaited<ReturnType<typeof request>>;
    const deadline = Date.now() + 20_000;
    do {
      job = await request(svc.url(`/jobs/${queued.body.job_id}`), { key });
      if (job.body?.state === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);
    expect(job.body.state).to.equal('completed');
    expectDocumented('/jobs/{id}', 'get', job);

    // Error shapes: set A, set B validation, set B detail string.
    expectDocumented('/upload', 'post', await upload(svc.baseUrl, { bytes, key: 'pk_wrong' }));
    expectDocumented('/transform', 'get', await request(svc.url(`/transform?src=${encodeURIComponent(src)}&w=99999`), { key }));
    expectDocumented('/cdn/usage', 'get', await request(svc.url('/cdn/usage')));
    expectDocumented('/cdn/images', 'get', await request(svc.url('/cdn/images?limit=0'), { key }));
    expectDocumented('/jobs/{id}', 'get', await request(svc.url('/jobs/up-nothing'), { key }));
  });
});
