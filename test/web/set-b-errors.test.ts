// Set B error statuses (spec 2.9, 5, 7): for every endpoint, the 422 validation body
// listing every problem at once, 401 for a bad key, 403 (demo gate, quota, public derivative cap,
// default project), 404, 409, 413, 415, 400 and 429 with Retry-After — each with its exact body.
import { expect } from 'chai';
import { Types } from 'mongoose';
import { gif, jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import type { Credential } from '../../src/catalog/api-keys.js';
import { cdnUpload, expectDetail, expectValidation, GB, snapshotUser, tinyJpeg, type CdnUploadBody } from './set-b-helpers.js';

const DEMO_TOKEN = 'demo-token-0123456789';
const DEMO_ORIGIN = 'https://demo.example.com';
const BAD_KEY = 'pk_this-key-does-not-exist-000000';
const MISSING_ID = '0123456789abcdef01234567';

describe('set B errors', function () {
  this.timeout(60_000);
  let svc: TestService;
  let alice: Credential;
  let image: CdnUploadBody;
  let projectId: string;
  const src = () => encodeURIComponent(image.public_url);

  before(async () => {
    svc = await TestService.start({
      env: { MAX_UPLOAD_BYTES: '8192', PUBLIC_DERIVATIVES_PER_IMAGE: '2', DEMO_TOKEN, DEMO_ORIGINS: DEMO_ORIGIN },
    });
    alice = await svc.createUser();
    image = await cdnUpload(svc, alice.key, await tinyJpeg(1, 64, 48), { project: 'Errors', filename: 'err.jpg' });
    const created = await request(svc.url('/cdn/projects'), { method: 'POST', key: alice.key, json: { name: 'Existing' } });
    expect(created.status).to.equal(200);
    projectId = created.body.projectId;
  });
  after(async () => svc?.stop());

  describe('422 validation error body (spec 2.9) lists every problem', () => {
    it('GET /image/{path}: missing X-API-Key and missing src together with every bad transform value', async () => {
      const qs = 'w=0&h=4201&q=0&fit=diagonal&f=gif&blur=101&sharp=-1&bri=-101&con=101&sat=abc&hue=361&gamma=0.5&opt=maybe';
      const res = await request(svc.url(`/image/x.jpg?${qs}`));
      const detail = expectValidation(res, [
        'header.x-api-key',
        'query.src',
        'query.w',
        'query.h',
        'query.q',
        'query.fit',
        'query.f',
        'query.blur',
        'query.sharp',
        'query.bri',
        'query.con',
        'query.sat',
        'query.hue',
        'query.gamma',
        'query.opt',
      ]);
      const byLoc = Object.fromEntries(detail.map((d) => [d.loc.join('.'), d]));
      expect(byLoc['header.x-api-key']).to.deep.equal({ loc: ['header', 'x-api-key'], msg: 'Field required', type: 'missing' });
      expect(byLoc['query.src'].type).to.equal('missing');
      expect(byLoc['query.w'].type).to.equal('greater_than_equal');
      expect(byLoc['query.h'].type).to.equal('less_than_equal');
      expect(byLoc['query.fit'].type).to.equal('enum');
      expect(byLoc['query.fit'].msg).to.include('contain');
      expect(byLoc['query.f'].type).to.equal('enum');
      expect(byLoc['query.sat'].type).to.equal('integer_type');
      expect(byLoc['query.opt'].type).to.equal('boolean_type');
    });

    it('GET /image/{path}: a key is present but src is not an image URL of this service', async () => {
      const res = await request(svc.url(`/image/x.jpg?src=${encodeURIComponent('https://elsewhere.example.com/a/images/b.jpg')}`), { key: alice.key });
      expectValidation(res, ['query.src']);
    });

    it('GET /image/test without a key', async () => {
      expectValidation(await request(svc.url('/image/test')), ['header.x-api-key']);
    });

    it('GET /image/demo/{path}: missing src and out-of-range values (no key needed)', async () => {
      const res = await request(svc.url('/image/demo/x.jpg?w=4201&q=abc&fit=sideways'), { headers: { 'X-Demo-Token': DEMO_TOKEN } });
      expectValidation(res, ['query.src', 'query.w', 'query.q', 'query.fit']);
    });

    it('GET /cdn/{image_id}: bad transform values (public route: no header problem)', async () => {
      const res = await request(svc.url(`/cdn/${image.imageId}?w=0&fit=x&f=bmp&gamma=4`));
      expectValidation(res, ['query.w', 'query.fit', 'query.f', 'query.gamma']);
    });

    it('POST /cdn/upload without a key; with a project name that has no letter or digit', async () => {
      const noKey = await upload(svc.baseUrl, { path: '/cdn/upload', bytes: await tinyJpeg(2) });
      expectValidation(noKey, ['header.x-api-key']);
      const badProject = await upload(svc.baseUrl, { path: '/cdn/upload', key: alice.key, bytes: await tinyJpeg(2), fields: { project: '***' } });
      expectValidation(badProject, ['body.project']);
      expect(await svc.deps.catalog.images.countDocuments({ userId: alice.userId })).to.equal(1);
    });

    it('GET /cdn/images: missing key, limit and cursor out of range together; limit above 100; malformed cursor', async () => {
      const res = await request(svc.url(`/cdn/images?limit=0&cursor=${'a'.repeat(65)}`));
      expectValidation(res, ['header.x-api-key', 'query.limit', 'query.cursor']);
      expectValidation(await request(svc.url('/cdn/images?limit=101'), { key: alice.key }), ['query.limit']);
      expectValidation(await request(svc.url('/cdn/images?limit=ten'), { key: alice.key }), ['query.limit']);
      expectValidation(await request(svc.url('/cdn/images?cursor=not-an-image-id'), { key: alice.key }), ['query.cursor']);
    });

    it('DELETE /cdn/images: missing key and missing imageIds; empty, oversized and malformed lists; non-object body', async () => {
      expectValidation(await request(svc.url('/cdn/images'), { method: 'DELETE', json: {} }), ['header.x-api-key', 'body.imageIds']);
      const del = (json: unknown) => request(svc.url('/cdn/images'), { method: 'DELETE', key: alice.key, json });
      expect(expectValidation(await del({ imageIds: [] }), ['body.imageIds'])[0].type).to.equal('too_short');
      const many = Array.from({ length: 101 }, () => new Types.ObjectId().toHexString());
      expect(expectValidation(await del({ imageIds: many }), ['body.imageIds'])[0].type).to.equal('too_long');
      expectValidation(await del({ imageIds: 'abc' }), ['body.imageIds']);
      expectValidation(await del({ imageIds: [image.imageId, ''] }), ['body.imageIds.1']);
      expectValidation(await del([image.imageId]), ['body']);
      expect(await svc.deps.catalog.images.countDocuments({ userId: alice.userId }), 'nothing deleted').to.equal(1);
    });

    it('GET /cdn/usage and DELETE /cdn/{image_id} without a key', async () => {
      expectValidation(await request(svc.url('/cdn/usage')), ['header.x-api-key']);
      expectValidation(await request(svc.url(`/cdn/${image.imageId}`), { method: 'DELETE' }), ['header.x-api-key']);
    });

    it('projects: GET without key; POST/PATCH/DELETE with every body problem listed', async () => {
      expectValidation(await request(svc.url('/cdn/projects')), ['header.x-api-key']);
      expectValidation(await request(svc.url('/cdn/projects'), { method: 'POST', json: {} }), ['header.x-api-key', 'body.name']);
      expectValidation(
        await request(svc.url('/cdn/projects'), { method: 'POST', key: alice.key, json: { name: '', description: 'd'.repeat(1001) } }),
        ['body.name', 'body.description'],
      );
      expectValidation(await request(svc.url('/cdn/projects'), { method: 'POST', key: alice.key, json: { name: 'x'.repeat(101) } }), ['body.name']);
      expectValidation(await request(svc.url('/cdn/projects'), { method: 'POST', key: alice.key, json: { name: '!!!' } }), ['body.name']);
      expectValidation(await request(svc.url('/cdn/projects'), { method: 'PATCH', json: { name: '' } }), ['header.x-api-key', 'body.projectId', 'body.name']);
      expectValidation(
        await request(svc.url('/cdn/projects'), { method: 'DELETE', json: { moveImagesToDefault: 'maybe' } }),
        ['header.x-api-key', 'body.projectId', 'body.moveImagesToDefault'],
      );
      const projects = await svc.deps.catalog.projects.find({ userId: alice.userId }).lean();
      expect(projects.map((p) => p.slug).sort()).to.deep.equal(['errors', 'existing']);
    });
  });

  describe('401 invalid key: {detail} on every keyed endpoint, nothing changes', () => {
    it('answers 401 everywhere a key is required', async () => {
      const before = await snapshotUser(svc, alice.userId);
      const calls: [string, Promise<{ status: number; headers: Headers; body: any }>][] = [
        ['GET /image/test', request(svc.url('/image/test'), { key: BAD_KEY })],
        ['GET /image/{path}', request(svc.url(`/image/x.jpg?src=${src()}&w=10`), { key: BAD_KEY })],
        ['POST /cdn/upload', upload(svc.baseUrl, { path: '/cdn/upload', key: BAD_KEY, bytes: await tinyJpeg(3) })],
        ['GET /cdn/images', request(svc.url('/cdn/images'), { key: BAD_KEY })],
        ['DELETE /cdn/images', request(svc.url('/cdn/images'), { method: 'DELETE', key: BAD_KEY, json: { imageIds: [image.imageId] } })],
        ['GET /cdn/usage', request(svc.url('/cdn/usage'), { key: BAD_KEY })],
        ['GET /cdn/projects', request(svc.url('/cdn/projects'), { key: BAD_KEY })],
        ['POST /cdn/projects', request(svc.url('/cdn/projects'), { method: 'POST', key: BAD_KEY, json: { name: 'Sneaky' } })],
        ['PATCH /cdn/projects', request(svc.url('/cdn/projects'), { method: 'PATCH', key: BAD_KEY, json: { projectId, name: 'Renamed' } })],
        ['DELETE /cdn/projects', request(svc.url('/cdn/projects'), { method: 'DELETE', key: BAD_KEY, json: { projectId } })],
        ['DELETE /cdn/{image_id}', request(svc.url(`/cdn/${image.imageId}`), { method: 'DELETE', key: BAD_KEY })],
      ];
      for (const [name, call] of calls) {
        const res = await call;
        expect(res.status, name).to.equal(401);
        expectDetail(res, 401, /invalid api key/i);
      }
      expect(await snapshotUser(svc, alice.userId)).to.deep.equal(before);
    });
  });

  describe('403', () => {
    it('demo route without a valid X-Demo-Token or allowed Origin/Referer', async () => {
      const path = `/image/demo/x.jpg?src=${src()}&w=20`;
      const denied: Record<string, string>[] = [
        {},
        { 'X-Demo-Token': 'wrong-token' },
        { Origin: 'https://evil.example.com' },
        { Referer: 'https://evil.example.com/demo.html' },
        { Origin: 'https://demo.example.com.evil.example.com' },
        { Referer: 'not a url' },
      ];
      for (const headers of denied) expectDetail(await request(svc.url(path), { headers }), 403, /demo/i);
      // The same request passes the gate with the token.
      const ok = await request(svc.url(path), { headers: { 'X-Demo-Token': DEMO_TOKEN } });
      expect(ok.status).to.equal(200);
    });

    it('demo route with a src outside DEMO_SOURCES', async () => {
      const outside = encodeURIComponent(`https://images.example.org/${alice.userId}/images/err.jpg`);
      expectDetail(await request(svc.url(`/image/demo/x.jpg?src=${outside}`), { headers: { 'X-Demo-Token': DEMO_TOKEN } }), 403, /source/i);
    });

    it('upload over the storage quota of the plan (free: 1 GB) names the quota and stores nothing', async () => {
      const free = await svc.createUser(undefined, 'free');
      await svc.deps.catalog.usage.updateOne(
        { _id: free.userId },
        { $set: { userId: free.userId, period: 'total', storageBytes: GB - 1000, imageCount: 0 } },
        { upsert: true },
      );
      // The default project exists from the first request on; make it exist before the snapshot.
      expect((await request(svc.url('/cdn/projects'), { key: free.key })).status).to.equal(200);
      const before = await snapshotUser(svc, free.userId);
      const bytes = await tinyJpeg(4, 64, 48); // ~2.5 kB > the 1000 bytes left
      expect(bytes.length).to.be.greaterThan(1000);
      const res = await upload(svc.baseUrl, { path: '/cdn/upload', key: free.key, bytes, filename: 'over.jpg' });
      expectDetail(res, 403, /quota/i);
      expect(res.body.detail).to.include(String(GB));
      const staging = await svc.deps.storage.list('_staging/');
      expect(staging.items, 'staging cleared').to.deep.equal([]);
      expect(await snapshotUser(svc, free.userId)).to.deep.equal(before);
      // Below the quota the same user can still upload.
      const small = await tinyJpeg(5, 8, 8);
      expect(small.length).to.be.lessThan(1000);
      await cdnUpload(svc, free.key, small, { filename: 'fits.jpg' });
    });

    it('public GET /cdn/{id}: the 3rd new derivative is refused (PUBLIC_DERIVATIVES_PER_IMAGE=2), existing ones still served', async () => {
      const own = await cdnUpload(svc, alice.key, await tinyJpeg(6, 64, 48), { filename: 'capped.jpg' });
      const get = (w: number) => request(svc.url(`/cdn/${own.imageId}?w=${w}&f=png`));
      expect((await get(10)).status).to.equal(200);
      expect((await get(20)).status).to.equal(200);
      const refused = await get(30);
      expectDetail(refused, 403, /derivatives/i);
      expect(refused.body.detail).to.match(/limit 2/);
      const again10 = await get(10);
      expect(again10.status).to.equal(200);
      expect(again10.headers.get('x-cache')).to.equal('HIT');
      expect((await get(20)).status).to.equal(200);
      // API-key routes are not capped, and what they create is then servable publicly.
      const viaKey = await request(svc.url(`/image/x.png?src=${encodeURIComponent(own.public_url)}&w=30`), { key: alice.key });
      expect(viaKey.status).to.equal(200);
      expect((await get(30)).status).to.equal(200);
      await svc.derivativesSettled(alice.userId);
      expect(await svc.deps.catalog.derivatives.countDocuments({ imageId: new Types.ObjectId(own.imageId), origin: 'public' })).to.equal(2);
    });

    it('public GET /cdn/{id}: concurrent requests for new sizes cannot pass the cap together', async () => {
      const own = await cdnUpload(svc, alice.key, await tinyJpeg(8, 64, 48), { filename: 'burst.jpg' });
      const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => request(svc.url(`/cdn/${own.imageId}?w=${11 + i}&f=png`))));
      const ok = burst.filter((r) => r.status === 200);
      for (const r of burst.filter((x) => x.status !== 200)) expectDetail(r, 403, /limit 2/);
      expect(ok.length).to.equal(2);
      await svc.derivativesSettled(alice.userId);
      expect(await svc.deps.catalog.derivatives.countDocuments({ imageId: new Types.ObjectId(own.imageId) })).to.equal(2);
      const stored = (await snapshotUser(svc, alice.userId)).storage.filter((o) => o.key.startsWith(`${alice.userId}/images/burst.jpg&`));
      expect(stored).to.have.length(2);
    });

    it('the default project can be neither deleted nor renamed', async () => {
      const list = await request(svc.url('/cdn/projects'), { key: alice.key });
      const def = list.body.projects.find((p: { slug: string }) => p.slug === 'default');
      expect(def).to.be.an('object');
      expectDetail(await request(svc.url('/cdn/projects'), { method: 'DELETE', key: alice.key, json: { projectId: def.projectId } }), 403, /default/i);
      expectDetail(await request(svc.url('/cdn/projects'), { method: 'PATCH', key: alice.key, json: { projectId: def.projectId, name: 'Other' } }), 403, /default/i);
      expect(await svc.deps.catalog.projects.countDocuments({ userId: alice.userId, slug: 'default' })).to.equal(1);
    });
  });

  describe('404', () => {
    it('unknown or malformed image ids, missing sources, unknown projects and routes', async () => {
      expectDetail(await request(svc.url(`/cdn/${MISSING_ID}`)), 404, /not found/i);
      expectDetail(await request(svc.url('/cdn/not-an-object-id')), 404, /not found/i);
      expectDetail(await request(svc.url(`/cdn/${MISSING_ID}`), { method: 'DELETE', key: alice.key }), 404, /not found/i);
      const missingSrc = encodeURIComponent(`${svc.config.cdnUrl}/${alice.userId}/images/nope.jpg`);
      expectDetail(await request(svc.url(`/image/x.jpg?src=${missingSrc}`), { key: alice.key }), 404, /not found/i);
      expectDetail(await request(svc.url(`/image/demo/x.jpg?src=${missingSrc}`), { headers: { 'X-Demo-Token': DEMO_TOKEN } }), 404, /not found/i);
      // The right public id with the wrong extension is not the image either.
      const wrongExt = encodeURIComponent(image.public_url.replace(/\.jpg$/, '.png'));
      expectDetail(await request(svc.url(`/image/x.jpg?src=${wrongExt}`), { key: alice.key }), 404, /not found/i);
      expectDetail(await request(svc.url('/cdn/projects'), { method: 'PATCH', key: alice.key, json: { projectId: MISSING_ID, name: 'X' } }), 404, /project/i);
      expectDetail(await request(svc.url('/cdn/projects'), { method: 'DELETE', key: alice.key, json: { projectId: 'nonsense' } }), 404, /project/i);
      expectDetail(await request(svc.url('/cdn/a/b/c')), 404);
      expectDetail(await request(svc.url(`/files/${alice.userId}/images/nope.jpg`)), 404);
    });
  });

  describe('409', () => {
    it('a second project with the same slug, by create or by rename', async () => {
      expectDetail(await request(svc.url('/cdn/projects'), { method: 'POST', key: alice.key, json: { name: 'existing' } }), 409, /existing/);
      expectDetail(await request(svc.url('/cdn/projects'), { method: 'POST', key: alice.key, json: { name: '  EXISTING!! ' } }), 409, /existing/);
      const other = await request(svc.url('/cdn/projects'), { method: 'POST', key: alice.key, json: { name: 'Other One' } });
      expect(other.status).to.equal(200);
      expectDetail(await request(svc.url('/cdn/projects'), { method: 'PATCH', key: alice.key, json: { projectId: other.body.projectId, name: 'Existing' } }), 409, /existing/);
      const kept = await svc.deps.catalog.projects.findById(other.body.projectId).lean();
      expect(kept?.slug).to.equal('other-one');
    });
  });

  describe('400, 413, 415 on POST /cdn/upload: {detail}, nothing stored', () => {
    async function refused(status: number, bytes: Buffer, pattern: RegExp, filename = 'x.jpg') {
      const user = await svc.createUser();
      const res = await upload(svc.baseUrl, { path: '/cdn/upload', key: user.key, bytes, filename });
      expectDetail(res, status, pattern);
      expect(await svc.deps.catalog.images.countDocuments({ userId: user.userId })).to.equal(0);
      expect((await snapshotUser(svc, user.userId)).storage).to.deep.equal([]);
      expect((await svc.deps.storage.list('_staging/')).items).to.deep.equal([]);
    }

    it('413 over MAX_UPLOAD_BYTES (8 kB here)', async () => {
      const big = await jpeg(800, 600);
      expect(big.length).to.be.greaterThan(8192);
      await refused(413, big, /too large.*maximum upload size/i);
    });

    it('415 for GIF and for text', async () => {
      await refused(415, await gif(), /unsupported file type/i, 'a.gif');
      await refused(415, Buffer.from('just some text, not an image at all\n'.repeat(10)), /unsupported file type/i, 'a.jpg');
    });

    it('422 detail[] with loc ["body","file"] when no file is sent (a required input missing)', async () => {
      const user = await svc.createUser();
      const form = new FormData();
      form.append('project', 'nothing');
      const res = await fetch(svc.url('/cdn/upload'), { method: 'POST', body: form, headers: { 'X-API-Key': user.key } });
      const detail = expectValidation({ status: res.status, headers: res.headers, body: await res.json() }, ['body.file']);
      expect(detail[0]).to.deep.equal({ loc: ['body', 'file'], msg: 'Field required', type: 'missing' });
    });

    it('400 for a body that is not JSON', async () => {
      const res = await request(svc.url('/cdn/images'), { method: 'DELETE', key: alice.key, body: '{"imageIds": [', headers: { 'Content-Type': 'application/json' } });
      expectDetail(res, 400, /json/i);
    });
  });

  describe('429 per-IP rate limits with Retry-After', () => {
    let limited: TestService;
    let owner: Credential;
    let pic: CdnUploadBody;
    before(async () => {
      limited = await TestService.start({ env: { DEMO_RATE_LIMIT_PER_MIN: '3', PUBLIC_RATE_LIMIT_PER_MIN: '5', DEMO_TOKEN } });
      owner = await limited.createUser();
      pic = await cdnUpload(limited, owner.key, await tinyJpeg(7, 32, 32), { filename: 'rl.jpg' });
    });
    after(async () => limited?.stop());

    function expect429(res: { status: number; headers: Headers; body: any }, perMinute: number) {
      expectDetail(res, 429, new RegExp(`${perMinute} per minute`));
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter), `Retry-After ${res.headers.get('retry-after')}`).to.equal(true);
      expect(retryAfter).to.be.within(1, 60);
    }

    it('GET /image/demo/{path}: the 4th request of a minute from one IP (DEMO_RATE_LIMIT_PER_MIN=3)', async () => {
      const get = (ip: string) =>
        request(limited.url(`/image/demo/x.jpg?src=${encodeURIComponent(pic.public_url)}&w=16`), { headers: { 'X-Demo-Token': DEMO_TOKEN, 'X-Forwarded-For': ip } });
      for (let i = 0; i < 3; i++) expect((await get('203.0.113.10')).status).to.equal(200);
      expect429(await get('203.0.113.10'), 3);
      expect((await get('203.0.113.11')).status, 'another client IP is not limited').to.equal(200);
    });

    it('GET /cdn/{image_id}: the 6th new derivative (or unknown image) of a minute from one IP (PUBLIC_RATE_LIMIT_PER_MIN=5); stored ones stay free', async () => {
      const get = (ip: string, query: string, id = pic.imageId) => request(limited.url(`/cdn/${id}?${query}`), { headers: { 'X-Forwarded-For': ip } });
      // Four new derivatives (sizes no other test asked for) and one unknown image use up the minute's budget.
      for (let i = 0; i < 4; i++) expect((await get('198.51.100.20', `w=${21 + i}`)).status).to.equal(200);
      expect((await get('198.51.100.20', 'w=16', '0123456789abcdef01234567')).status).to.equal(404);
      expect429(await get('198.51.100.20', 'w=40'), 5);
      expect429(await get('198.51.100.20', 'w=16', '0123456789abcdef01234567'), 5);
      // Stored derivatives are served like files behind a CDN: not counted, not refused.
      for (let i = 0; i < 10; i++) expect((await get('198.51.100.20', 'w=21')).status).to.equal(200);
      expect((await get('198.51.100.21', 'w=40')).status, 'another client IP is not limited').to.equal(200);
      // Keyed routes are not limited by the public budget.
      expect((await request(limited.url('/cdn/images'), { key: owner.key, headers: { 'X-Forwarded-For': '198.51.100.20' } })).status).to.equal(200);
    });
  });
});
