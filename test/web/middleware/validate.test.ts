// The one request validation: a route's declared inputs are checked together (every issue in one
// 422, or the route's own refusal), coerced, handed to the controller with types inferred from the
// schemas, and enumerated values are matched without regard to case wherever their schema is used
// (routes, presets, the OpenAPI document).
import { expect } from 'chai';
import type { Request, Response } from 'express';
import { ServiceError } from '../../../src/errors.js';
import { checkFields, inputOf, validate, type InputOf } from '../../../src/web/middleware/validate.js';
import { buildOpenApiDocument } from '../../../src/web/openapi/document.js';
import { mountRoutes, type RouteContext } from '../../../src/web/routes/route-table.js';
import { listImagesInputs, listImagesQuery } from '../../../src/web/schemas/images.schemas.js';
import { passportUploadInputs } from '../../../src/web/schemas/passport.schemas.js';
import { createProjectBody, createProjectInputs } from '../../../src/web/schemas/projects.schemas.js';
import { imagePathInputs, setBTransformQuery, srcsetInputs } from '../../../src/web/schemas/transform.schemas.js';
import { PresetBook } from '../../../src/web/services/presets.js';

/** Runs a route's validation on a request made of these parts; returns the error it throws, or the response. */
function run(inputs: Parameters<typeof validate>[0], parts: { query?: Record<string, string>; body?: unknown; headers?: Record<string, string>; params?: Record<string, string> }) {
  const req = { query: parts.query ?? {}, body: parts.body, headers: parts.headers ?? {}, params: parts.params ?? {} } as unknown as Request;
  const res = { locals: {} } as unknown as Response;
  const handlers = validate(inputs);
  let passed = false;
  try {
    // The JSON body parser is skipped: these bodies are already objects.
    handlers[handlers.length - 1](req, res, () => (passed = true));
  } catch (err) {
    return { error: err as ServiceError, res, passed };
  }
  return { error: undefined, res, passed };
}

describe('request validation (middleware/validate.ts)', () => {
  it('lists every problem of key, query and body in one 422, before authentication', () => {
    const { error, passed } = run(listImagesInputs, { query: { limit: '0', cursor: 'x'.repeat(65) } });
    expect(passed).to.equal(false);
    expect(error).to.be.instanceOf(ServiceError);
    expect(error!.status).to.equal(422);
    expect(error!.extra.issues!.map((i) => i.loc.join('.'))).to.have.members(['header.x-api-key', 'query.limit', 'query.cursor']);
  });

  it('coerces and hands the controller the checked values', () => {
    const { error, res, passed } = run(listImagesInputs, { query: { limit: '7', project: 'trips' }, headers: { 'x-api-key': 'pk_x' } });
    expect(error).to.equal(undefined);
    expect(passed).to.equal(true);
    const { query } = inputOf(res, listImagesInputs);
    expect(query).to.deep.equal({ limit: 7, project: 'trips' });
    const limit: number | undefined = query.limit;
    expect(limit).to.equal(7);
  });

  it("answers with the route's own refusal when it has one (srcset: set A's 400)", () => {
    const { error } = run(srcsetInputs, { query: { src: 'https://cdn.example/u/images/a.jpg', q: '500' } });
    expect(error!.status).to.equal(400);
    expect(error!.message).to.match(/"q"/);
  });

  it('matches enumerated parameters without regard to case (fit=COVER is cover), and still refuses other words', () => {
    const ok = run(imagePathInputs, { query: { src: 'https://x/y.jpg', fit: 'COVER', f: 'WebP' }, headers: { 'x-api-key': 'k' } });
    expect(ok.error).to.equal(undefined);
    expect(inputOf(ok.res, imagePathInputs).query).to.include({ fit: 'cover', f: 'webp' });
    const bad = run(imagePathInputs, { query: { src: 'https://x/y.jpg', fit: 'COVERS' }, headers: { 'x-api-key': 'k' } });
    expect(bad.error!.extra.issues).to.deep.include({ loc: ['query', 'fit'], msg: 'must be one of: contain, cover, fill, inside, outside', type: 'enum' });
  });

  it('a preset naming fit=COVER is accepted as cover; an unknown fit stops the start', () => {
    const book = new PresetBook({ hero: { w: 800, fit: 'COVER' } });
    expect(book.expand({ preset: 'hero' }, ['preset'])).to.deep.include({ w: 800, fit: 'cover' });
    expect(() => new PresetBook({ hero: { fit: 'sideways' } })).to.throw(/fit/);
  });

  it('the OpenAPI document says which parameters are case-insensitive', () => {
    const doc = buildOpenApiDocument({ baseUrl: 'http://localhost:3000', cdnUrl: 'http://localhost:3000/files', servesFiles: true, adminEnabled: false }) as any;
    const fit = doc.paths['/image/{path}'].get.parameters.find((p: { name: string }) => p.name === 'fit');
    expect(fit.schema).to.include({ 'x-case-insensitive': true });
    expect(fit.description).to.match(/case-insensitive/);
  });

  it('checks multipart form fields with the same rules once the upload is received', () => {
    expect(checkFields(passportUploadInputs, { country: 'INDIA', enhance: 'false' })).to.deep.equal({ country: 'india', enhance: false });
    expect(() => checkFields(passportUploadInputs, { face_x: '2' })).to.throw(ServiceError).with.property('status', 422);
  });

  it('a route that declares inputs but leaves them unchecked does not mount', () => {
    const table = { routes: [{ method: 'post' as const, path: '/x', inputs: createProjectInputs, handlers: () => [], openapi: { tags: [], summary: '', operationId: 'x', security: [], responses: {} } }] };
    expect(() => mountRoutes(table, {} as RouteContext)).to.throw(/declares inputs but does not check them/);
  });

  it('types come from the schemas (a wrong type does not compile)', () => {
    const body: InputOf<typeof createProjectBody> = { name: 'Trips', description: null };
    // @ts-expect-error name is required by the schema
    const noName: InputOf<typeof createProjectBody> = { description: 'x' };
    // @ts-expect-error limit is an integer
    const badLimit: InputOf<typeof listImagesQuery> = { limit: 'ten' };
    // @ts-expect-error fit is one of the registry's words
    const badFit: InputOf<typeof setBTransformQuery> = { src: 'https://x', fit: 'sideways' };
    expect([body, noName, badLimit, badFit]).to.have.length(4);
  });
});
