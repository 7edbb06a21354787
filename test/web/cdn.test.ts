// Set B CDN management (spec 4.2): POST /cdn/upload, GET /cdn/images, DELETE /cdn/images,
// DELETE /cdn/{image_id}, GET /cdn/{image_id} and GET /cdn/usage — successes and their exact bodies.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import type { Credential } from '../../src/catalog/api-keys.js';
import { avif, jpeg, pngWithAlpha, webp } from '../fixtures/images.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectDetail, GB, listAll, storedObjects, tinyJpeg, usageOf, type CdnUploadBody } from './set-b-helpers.js';

/** The version and placeholders of an image (docs/transformations.md). */
const DESCRIPTION_KEYS = ['version', 'thumbhash', 'dominant_color', 'lqip', 'faces'];
const UPLOAD_KEYS = ['success', 'error', 'public_url', 'cdn_url', 'size', 'content_type', 'imageId', 'project', 'public_id', 'width', 'height', 'checksum', ...DESCRIPTION_KEYS];
const LISTED_KEYS = ['imageId', 'public_url', 'public_id', 'project', 'format', 'width', 'height', 'size', 'checksum', 'created_at', ...DESCRIPTION_KEYS];
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('set B CDN endpoints', function () {
  this.timeout(60_000);
  let svc: TestService;

  before(async () => {
    svc = await TestService.start({ env: { WORKER_CONCURRENCY: '4' } });
  });
  after(async () => svc?.stop());

  describe('POST /cdn/upload', () => {
    it('answers the upload result plus imageId and project; the URL serves the uploaded bytes', async () => {
      const user = await svc.createUser();
      const bytes = await jpeg(320, 200);
      const body = await cdnUpload(svc, user.key, bytes, { filename: 'Beach Day.jpg' });
      expect(Object.keys(body).sort()).to.deep.equal([...UPLOAD_KEYS].sort());
      expect(body).to.deep.include({
        success: true,
        error: '',
        public_url: `${svc.config.cdnUrl}/${user.userId}/images/Beach-Day.jpg`,
        size: bytes.length,
        content_type: 'image/jpeg',
        project: 'default',
        public_id: 'Beach-Day',
        width: 320,
        height: 200,
        checksum: sha256(bytes),
      });
      expect(body.cdn_url).to.equal(body.public_url);
      expect(body.imageId).to.match(/^[0-9a-f]{24}$/);
      const got = await request(body.public_url);
      expect(got.status).to.equal(200);
      expect(got.bytes.equals(bytes)).to.equal(true);
      const doc = await svc.deps.catalog.images.findById(body.imageId).lean();
      expect(doc?.userId).to.equal(user.userId);
    });

    it('stores JPEG, PNG, WebP and AVIF with their content types', async () => {
      const user = await svc.createUser();
      const cases: [Buffer, string, string, string][] = [
        [await pngWithAlpha(), 'a.png', 'image/png', 'png'],
        [await webp(), 'b.webp', 'image/webp', 'webp'],
        [await avif(), 'c.avif', 'image/avif', 'avif'],
        [await tinyJpeg(1), 'd.jpeg', 'image/jpeg', 'jpg'],
      ];
      for (const [bytes, filename, mime, ext] of cases) {
        const body = await cdnUpload(svc, user.key, bytes, { filename, mime: 'application/octet-stream' });
        expect(body.content_type, filename).to.equal(mime);
        expect(body.public_url, filename).to.match(new RegExp(`\\.${ext}$`));
      }
    });

    it('project: absent → default; a new name creates the project (slug); an existing name or slug reuses it', async () => {
      const user = await svc.createUser();
      const a = await cdnUpload(svc, user.key, await tinyJpeg(2), { filename: 'a.jpg', project: 'Holiday Pics 2024' });
      expect(a.project).to.equal('holiday-pics-2024');
      const b = await cdnUpload(svc, user.key, await tinyJpeg(3), { filename: 'b.jpg', project: 'holiday-pics-2024' });
      const c = await cdnUpload(svc, user.key, await tinyJpeg(4), { filename: 'c.jpg', project: 'Holiday Pics 2024' });
      const d = await cdnUpload(svc, user.key, await tinyJpeg(5), { filename: 'd.jpg', project: '' });
      expect([b.project, c.project, d.project]).to.deep.equal(['holiday-pics-2024', 'holiday-pics-2024', 'default']);
      const projects = await request(svc.url('/cdn/projects'), { key: user.key });
      const holiday = projects.body.projects.find((p: { slug: string }) => p.slug === 'holiday-pics-2024');
      expect(holiday).to.deep.include({ name: 'Holiday Pics 2024', image_count: 3 });
      expect(projects.body.projects.map((p: { slug: string }) => p.slug).sort()).to.deep.equal(['default', 'holiday-pics-2024']);
    });
  });

  describe('GET /cdn/images', () => {
    let user: Credential;
    const uploaded: CdnUploadBody[] = [];
    before(async () => {
      user = await svc.createUser();
      for (let i = 0; i < 5; i++) uploaded.push(await cdnUpload(svc, user.key, await tinyJpeg(10 + i, 20 + i, 10), { filename: `img${i}.jpg`, project: i % 2 ? 'Odd' : undefined }));
    });

    it('lists the caller\'s images newest first with the documented fields; default limit 50', async () => {
      const res = await request(svc.url('/cdn/images'), { key: user.key });
      expect(res.status).to.equal(200);
      expect(Object.keys(res.body).sort()).to.deep.equal(['has_more', 'images', 'next_cursor']);
      expect(res.body.has_more).to.equal(false);
      expect(res.body.next_cursor).to.equal(null);
      const images = res.body.images as Record<string, unknown>[];
      expect(images.map((i) => i.imageId)).to.deep.equal(uploaded.map((u) => u.imageId).reverse());
      images.forEach((item, idx) => {
        const up = uploaded[uploaded.length - 1 - idx];
        expect(Object.keys(item).sort()).to.deep.equal([...LISTED_KEYS].sort());
        expect(item).to.deep.include({ imageId: up.imageId, public_url: up.public_url, public_id: up.public_id, project: up.project, format: 'jpeg', width: up.width, height: up.height, size: up.size, checksum: up.checksum });
        expect(new Date(item.created_at as string).toISOString()).to.equal(item.created_at);
      });
    });

    it('pages with limit and cursor (next_cursor = last imageId of the page)', async () => {
      const first = await request(svc.url('/cdn/images?limit=2'), { key: user.key });
      expect(first.body.images.map((i: { imageId: string }) => i.imageId)).to.deep.equal([uploaded[4].imageId, uploaded[3].imageId]);
      expect(first.body.has_more).to.equal(true);
      expect(first.body.next_cursor).to.equal(uploaded[3].imageId);
      const second = await request(svc.url(`/cdn/images?limit=2&cursor=${first.body.next_cursor}`), { key: user.key });
      expect(second.body.images.map((i: { imageId: string }) => i.imageId)).to.deep.equal([uploaded[2].imageId, uploaded[1].imageId]);
      const third = await request(svc.url(`/cdn/images?limit=2&cursor=${second.body.next_cursor}`), { key: user.key });
      expect(third.body).to.deep.include({ has_more: false, next_cursor: null });
      expect(third.body.images.map((i: { imageId: string }) => i.imageId)).to.deep.equal([uploaded[0].imageId]);
      const exact = await request(svc.url('/cdn/images?limit=5'), { key: user.key });
      expect(exact.body).to.deep.include({ has_more: false, next_cursor: null });
      expect(exact.body.images).to.have.length(5);
    });

    it('filters by project slug; an unknown slug lists nothing', async () => {
      const odd = await listAll(svc, user.key, { project: 'odd' });
      expect(odd.map((i) => i.imageId)).to.deep.equal([uploaded[3].imageId, uploaded[1].imageId]);
      const def = await listAll(svc, user.key, { project: 'default' });
      expect(def.map((i) => i.imageId)).to.deep.equal([uploaded[4].imageId, uploaded[2].imageId, uploaded[0].imageId]);
      const none = await request(svc.url('/cdn/images?project=no-such-project'), { key: user.key });
      expect(none.body).to.deep.equal({ images: [], next_cursor: null, has_more: false });
    });
  });

  describe('GET /cdn/{image_id} (public)', () => {
    it('serves the image bytes with transform parameters, negotiation and caching headers, without a key', async () => {
      const user = await svc.createUser();
      const up = await cdnUpload(svc, user.key, await jpeg(400, 200), { filename: 'serve.jpg' });
      const plain = await request(svc.url(`/cdn/${up.imageId}`));
      expect(plain.status).to.equal(200);
      expect(plain.headers.get('content-type')).to.equal('image/jpeg');
      const meta = await sharp(plain.bytes).metadata();
      expect([meta.format, meta.width, meta.height], 'no w/h: original size').to.deep.equal(['jpeg', 400, 200]);
      // No w: the Width client hint could have chosen one. No v: cacheable briefly, then revalidated.
      expect(plain.headers.get('vary')).to.equal('Accept, Sec-CH-Width, Width');
      expect(plain.headers.get('cache-control')).to.equal('public, max-age=60, must-revalidate');
      const webpRes = await request(svc.url(`/cdn/${up.imageId}?w=100`), { headers: { Accept: 'image/webp,*/*' } });
      const wm = await sharp(webpRes.bytes).metadata();
      expect([wm.format, wm.width, wm.height]).to.deep.equal(['webp', 100, 50]);
      const png = await request(svc.url(`/cdn/${up.imageId}?w=50&h=50&fit=cover&f=png`));
      const pm = await sharp(png.bytes).metadata();
      expect([pm.format, pm.width, pm.height]).to.deep.equal(['png', 50, 50]);
      // f fixed: no Accept; a size without dpr: the DPR client hint could have changed it.
      expect(png.headers.get('vary')).to.equal('Sec-CH-DPR, DPR');
      const etag = png.headers.get('etag')!;
      const notModified = await request(svc.url(`/cdn/${up.imageId}?w=50&h=50&fit=COVER&f=png`), { headers: { 'If-None-Match': etag } });
      expect(notModified.status).to.equal(304);
    });
  });

  describe('DELETE /cdn/images and DELETE /cdn/{image_id}', () => {
    it('removes originals, derivatives (storage and catalog) and usage; lists deleted and not_found; repeating is harmless', async () => {
      const user = await svc.createUser();
      const ups: CdnUploadBody[] = [];
      for (let i = 0; i < 4; i++) ups.push(await cdnUpload(svc, user.key, await tinyJpeg(30 + i, 40, 30), { filename: `del${i}.jpg` }));
      for (const up of ups.slice(0, 3)) {
        expect((await request(svc.url(`/cdn/${up.imageId}?w=20&f=png`))).status).to.equal(200);
        expect((await request(svc.url(`/image/x.webp?src=${encodeURIComponent(up.public_url)}&w=10`), { key: user.key })).status).to.equal(200);
      }
      await svc.derivativesSettled(user.userId);
      const before = await usageOf(svc, user.key);
      // Derivative bytes count toward storage (docs/limits.md).
      const derivativeBytes = (await storedObjects(svc, user.userId)).filter((o) => o.key.includes('&v=')).reduce((s, o) => s + o.size, 0);
      expect(derivativeBytes).to.be.above(0);
      expect(before).to.deep.include({ image_count: 4, derivative_count: 6, derivative_bytes: derivativeBytes, storage_bytes: ups.reduce((s, u) => s + u.size, 0) + derivativeBytes });

      const missing = '0123456789abcdef01234567';
      const res = await request(svc.url('/cdn/images'), { method: 'DELETE', key: user.key, json: { imageIds: [ups[0].imageId, ups[1].imageId, missing, ups[0].imageId, 'garbage'] } });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ deleted: [ups[0].imageId, ups[1].imageId], not_found: [missing, 'garbage'] });
      const one = await request(svc.url(`/cdn/${ups[2].imageId}`), { method: 'DELETE', key: user.key });
      expect(one.status).to.equal(200);
      expect(one.body).to.deep.equal({ deleted: [ups[2].imageId], not_found: [] });

      const left = await storedObjects(svc, user.userId);
      expect(left.map((o) => o.key)).to.deep.equal([`${user.userId}/images/del3.jpg`]);
      expect(await svc.deps.catalog.derivatives.countDocuments({ userId: user.userId })).to.equal(0);
      expect((await listAll(svc, user.key)).map((i) => i.imageId)).to.deep.equal([ups[3].imageId]);
      const after = await usageOf(svc, user.key);
      expect(after).to.deep.include({ image_count: 1, derivative_count: 0, derivative_bytes: 0, storage_bytes: ups[3].size });
      expectDetail(await request(svc.url(`/cdn/${ups[0].imageId}`)), 404, /not found/i);
      expect((await request(ups[0].public_url)).status).to.equal(404);

      const again = await request(svc.url('/cdn/images'), { method: 'DELETE', key: user.key, json: { imageIds: [ups[0].imageId, ups[1].imageId] } });
      expect(again.body).to.deep.equal({ deleted: [], not_found: [ups[0].imageId, ups[1].imageId] });
      expectDetail(await request(svc.url(`/cdn/${ups[2].imageId}`), { method: 'DELETE', key: user.key }), 404, /not found/i);
      expect(await usageOf(svc, user.key)).to.deep.equal(after);
    });
  });

  describe('GET /cdn/usage', () => {
    it('answers the documented fields, counting this month\'s bandwidth and transformations, with the plan limits', async () => {
      const user = await svc.createUser(undefined, 'free');
      const empty = await usageOf(svc, user.key);
      const now = new Date();
      const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
      expect(empty).to.deep.equal({
        storage_bytes: 0,
        image_count: 0,
        derivative_count: 0,
        derivative_bytes: 0,
        bandwidth_bytes: 0,
        transformations: 0,
        period_start: periodStart,
        plan: 'free',
        limits: { storage_bytes: GB, bandwidth_bytes_per_month: 10 * GB, transformations_per_month: 5000, max_upload_bytes: 10 * 1024 * 1024 },
      });
      const up = await cdnUpload(svc, user.key, await tinyJpeg(40, 50, 40), { filename: 'u.jpg' });
      const original = await request(up.public_url);
      const derived = await request(svc.url(`/cdn/${up.imageId}?w=25&f=png`));
      const derivedAgain = await request(svc.url(`/cdn/${up.imageId}?w=25&f=png`));
      await svc.derivativesSettled(user.userId);
      const usage = await usageOf(svc, user.key);
      expect(usage).to.deep.include({
        storage_bytes: up.size + derived.bytes.length,
        image_count: 1,
        derivative_count: 1,
        derivative_bytes: derived.bytes.length,
        transformations: 1,
        bandwidth_bytes: original.bytes.length + derived.bytes.length + derivedAgain.bytes.length,
      });
    });
  });
});
