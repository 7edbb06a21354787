// Set B image routes (spec 4.2): GET /image/test, GET /image/{path} (vanity extension,
// f, fit modes, caching headers), GET /image/demo/{path} (gate, sources, keyless cap at KEYLESS_MAX_SIDE=2000).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { Credential } from '../../src/catalog/api-keys.js';
import { CORPUS, jpeg, stats } from '../fixtures/images.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectDetail, usageOf, type CdnUploadBody } from './set-b-helpers.js';

const DEMO_TOKEN = 'demo-token-abcdefghij';
const DEMO_ORIGINS = 'https://demo.example.com,http://localhost:3000';

describe('set B image routes', function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: Credential;
  let small: CdnUploadBody; // 400×200 JPEG
  let photo: CdnUploadBody; // 2560×1703 corpus JPEG

  before(async () => {
    svc = await TestService.start({ env: { DEMO_TOKEN, DEMO_ORIGINS, WORKER_CONCURRENCY: '2', KEYLESS_MAX_SIDE: '2000' } });
    user = await svc.createUser();
    small = await cdnUpload(svc, user.key, await jpeg(400, 200), { filename: 'wide.jpg' });
    photo = await cdnUpload(svc, user.key, fs.readFileSync(path.join(CORPUS, 'photos/Chelsea.jpg')), { filename: 'Chelsea.jpg' });
    expect([photo.width, photo.height]).to.deep.equal([2560, 1703]);
  });
  after(async () => svc?.stop());

  const img = (image: CdnUploadBody, vanity: string, query = '') =>
    svc.url(`/image/${vanity}?src=${encodeURIComponent(image.public_url)}${query ? '&' + query : ''}`);

  describe('GET /image/test', () => {
    it('answers exactly {valid: true, user_id, plan} for a good key', async () => {
      const res = await request(svc.url('/image/test'), { key: user.key });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ valid: true, user_id: user.userId, plan: 'pro' });
      const free = await svc.createUser(undefined, 'free');
      expect((await request(svc.url('/image/test'), { key: free.key })).body).to.deep.equal({ valid: true, user_id: free.userId, plan: 'free' });
    });

    it('401 {detail} for a bad key, also under the X-API-KEY spelling', async () => {
      expectDetail(await request(svc.url('/image/test'), { headers: { 'X-API-KEY': 'pk_nope' } }), 401, /invalid api key/i);
      expect((await request(svc.url('/image/test'), { headers: { 'X-API-KEY': user.key } })).body.valid).to.equal(true);
    });
  });

  describe('GET /image/{path}', () => {
    it('the vanity extension picks the output format when f is absent', async () => {
      const cases: [string, string, string][] = [
        ['a.png', 'png', 'image/png'],
        ['a.webp', 'webp', 'image/webp'],
        ['a.avif', 'heif', 'image/avif'],
        ['a.jpg', 'jpeg', 'image/jpeg'],
        ['a.jpeg', 'jpeg', 'image/jpeg'],
        ['deep/folder/name.PNG', 'png', 'image/png'],
      ];
      for (const [vanity, format, mime] of cases) {
        const res = await request(img(small, vanity, 'w=80'), { key: user.key, headers: { Accept: 'image/avif,image/webp,*/*' } });
        expect(res.status, vanity).to.equal(200);
        expect(res.headers.get('content-type'), vanity).to.equal(mime);
        expect(res.headers.get('vary'), `${vanity}: format does not depend on Accept`).to.equal(null);
        const meta = await sharp(res.bytes).metadata();
        expect([meta.format, meta.width, meta.height], vanity).to.deep.equal([format, 80, 40]);
      }
    });

    it('f overrides the vanity extension; f=auto negotiates from Accept with Vary: Accept', async () => {
      const webp = await request(img(small, 'a.png', 'w=80&f=webp'), { key: user.key });
      expect((await sharp(webp.bytes).metadata()).format).to.equal('webp');
      const jpg = await request(img(small, 'a.avif', 'w=80&f=jpg'), { key: user.key });
      expect(jpg.headers.get('content-type')).to.equal('image/jpeg');
      const auto = await request(img(small, 'a.png', 'w=80&f=auto'), { key: user.key, headers: { Accept: 'image/avif,image/webp,*/*;q=0.8' } });
      expect(auto.status).to.equal(200);
      expect(auto.headers.get('content-type')).to.equal('image/avif');
      expect(auto.headers.get('vary')).to.equal('Accept');
    });

    it('without f and without an extension, the format follows Accept (avif, webp, else the source format)', async () => {
      const accepts: [string, string][] = [
        ['image/avif,image/webp,image/*,*/*;q=0.8', 'image/avif'],
        ['image/webp,*/*', 'image/webp'],
        ['image/jpeg,image/png', 'image/jpeg'],
        ['', 'image/jpeg'],
      ];
      const etags = new Set<string>();
      for (const [accept, mime] of accepts) {
        const res = await request(img(small, 'plain-name', 'w=64'), { key: user.key, headers: accept ? { Accept: accept } : {} });
        expect(res.status, accept).to.equal(200);
        expect(res.headers.get('content-type'), accept).to.equal(mime);
        expect(res.headers.get('vary'), accept).to.equal('Accept');
        etags.add(res.headers.get('etag') ?? '');
      }
      expect(etags.size, 'one derivative per negotiated format').to.equal(3);
    });

    it('fit modes contain/cover/fill/inside/outside (case-insensitive), by decoded dimensions and pixels', async () => {
      const get = async (fit: string) => {
        const res = await request(img(small, 'fit.png', `w=100&h=100&fit=${fit}`), { key: user.key });
        expect(res.status, fit).to.equal(200);
        const { data, info } = await sharp(res.bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
        const alphaAt = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
        return { width: info.width, height: info.height, alphaAt, etag: res.headers.get('etag') };
      };
      // 400×200 source into a 100×100 box.
      const contain = await get('CONTAIN');
      expect([contain.width, contain.height]).to.deep.equal([100, 100]);
      expect(contain.alphaAt(50, 5), 'contain pads (transparent in PNG)').to.equal(0);
      expect(contain.alphaAt(50, 50)).to.equal(255);
      const cover = await get('Cover');
      expect([cover.width, cover.height]).to.deep.equal([100, 100]);
      expect(cover.alphaAt(50, 5), 'cover crops: no padding').to.equal(255);
      const fill = await get('fIlL');
      expect([fill.width, fill.height]).to.deep.equal([100, 100]);
      expect(fill.alphaAt(50, 5)).to.equal(255);
      const inside = await get('INSIDE');
      expect([inside.width, inside.height]).to.deep.equal([100, 50]);
      const outside = await get('outside');
      expect([outside.width, outside.height]).to.deep.equal([200, 100]);
      const byDefault = await request(img(small, 'fit.png', 'w=100&h=100'), { key: user.key });
      expect(byDefault.headers.get('etag'), 'contain is the default (same derivative)').to.equal(contain.etag);
      expect(byDefault.headers.get('x-cache')).to.equal('HIT');
      // Fill distorts, cover crops: their pixels differ.
      const fillPng = await request(img(small, 'fit.png', 'w=100&h=100&fit=fill'), { key: user.key });
      const coverPng = await request(img(small, 'fit.png', 'w=100&h=100&fit=cover'), { key: user.key });
      expect(fillPng.bytes.equals(coverPng.bytes)).to.equal(false);
    });

    it('only w (or only h) keeps the aspect ratio', async () => {
      const w = await sharp((await request(img(small, 'a.png', 'w=120'), { key: user.key })).bytes).metadata();
      expect([w.width, w.height]).to.deep.equal([120, 60]);
      const h = await sharp((await request(img(small, 'a.png', 'h=30&fit=cover'), { key: user.key })).bytes).metadata();
      expect([h.width, h.height]).to.deep.equal([60, 30]);
    });

    it('applies the effect parameters (sat=-100 is grey, blur lowers sharpness)', async () => {
      const grey = await request(img(small, 'g.png', 'w=100&sat=-100'), { key: user.key });
      const channels = (await stats(grey.bytes)).channels.slice(0, 3).map((c) => c.mean);
      expect(Math.max(...channels) - Math.min(...channels)).to.be.lessThan(1.5);
      const plain = await stats((await request(img(small, 'b.png', 'w=200'), { key: user.key })).bytes);
      const blurred = await stats((await request(img(small, 'b.png', 'w=200&blur=20'), { key: user.key })).bytes);
      expect(blurred.sharpness).to.be.lessThan(plain.sharpness);
    });

    it('ETag / If-None-Match → 304 (no body, no bandwidth), immutable Cache-Control with v, X-Cache MISS then HIT', async () => {
      // Immutable because the URL names the original's version; without v it is revalidated.
      const version = (small as CdnUploadBody & { version: string }).version;
      const unversioned = await request(img(small, 'etag.webp', 'w=77'), { key: user.key });
      expect(unversioned.headers.get('x-cache')).to.equal('MISS');
      expect(unversioned.headers.get('cache-control')).to.equal('public, max-age=60, must-revalidate');
      const url = img(small, 'etag.webp', `w=77&v=${version}`);
      const first = await request(url, { key: user.key });
      expect(first.status).to.equal(200);
      expect(first.headers.get('x-cache')).to.equal('HIT');
      expect(first.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      const etag = first.headers.get('etag');
      expect(etag).to.match(/^"[^"]+"$/);
      const second = await request(url, { key: user.key });
      expect(second.headers.get('x-cache')).to.equal('HIT');
      expect(second.headers.get('etag')).to.equal(etag);
      expect(second.bytes.equals(first.bytes)).to.equal(true);
      const before = (await usageOf(svc, user.key)).bandwidth_bytes;
      const notModified = await request(url, { key: user.key, headers: { 'If-None-Match': etag! } });
      expect(notModified.status).to.equal(304);
      expect(notModified.bytes.length).to.equal(0);
      expect(notModified.headers.get('etag')).to.equal(etag);
      expect(notModified.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect((await usageOf(svc, user.key)).bandwidth_bytes, '304 sends no bytes').to.equal(before);
      const withAuto = await request(img(small, 'etag', 'w=77&f=auto'), { key: user.key, headers: { Accept: 'image/webp', 'If-None-Match': etag! } });
      expect(withAuto.status, 'same derivative → same validator').to.equal(304);
      expect(withAuto.headers.get('vary')).to.equal('Accept');
    });

    it('src must be one of the caller\'s own base images', async () => {
      const other = await svc.createUser();
      expectDetail(await request(img(small, 'a.jpg', 'w=10'), { key: other.key }), 404, /not found/i);
    });
  });

  describe('GET /image/demo/{path}', () => {
    const demo = (query: string, headers: Record<string, string> = { 'X-Demo-Token': DEMO_TOKEN }) =>
      request(svc.url(`/image/demo/demo.webp?src=${encodeURIComponent(photo.public_url)}&${query}`), { headers });

    it('allowed with X-Demo-Token, an allowed Origin or an allowed Referer; otherwise 403', async () => {
      const allowed: Record<string, string>[] = [
        { 'X-Demo-Token': DEMO_TOKEN },
        { Origin: 'https://demo.example.com' },
        { Origin: 'http://localhost:3000' },
        { Referer: 'https://demo.example.com/gallery/page.html?x=1' },
      ];
      for (const headers of allowed) {
        const res = await demo('w=64', headers);
        expect(res.status, JSON.stringify(headers)).to.equal(200);
        expect(res.headers.get('content-type')).to.equal('image/webp');
        expect((await sharp(res.bytes).metadata()).width).to.equal(64);
      }
      const denied: Record<string, string>[] = [{}, { 'X-Demo-Token': DEMO_TOKEN + 'x' }, { Origin: 'https://other.example.com' }, { Referer: 'http://localhost:3001/' }];
      for (const headers of denied) expectDetail(await demo('w=64', headers), 403, /demo/i);
    });

    it('refuses a src outside DEMO_SOURCES (default: this CDN)', async () => {
      const elsewhere = encodeURIComponent(photo.public_url.replace(svc.config.cdnUrl, 'https://cdn.example.net'));
      expectDetail(await request(svc.url(`/image/demo/x.jpg?src=${elsewhere}`), { headers: { 'X-Demo-Token': DEMO_TOKEN } }), 403, /source/i);
    });

    it('caps the output at KEYLESS_MAX_SIDE (2000 px here) and the original\'s size', async () => {
      const dims = async (query: string) => {
        const res = await demo(query);
        expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(200);
        const meta = await sharp(res.bytes).metadata();
        return [meta.width, meta.height];
      };
      const at = (w: number) => [w, Math.round((photo.height * w) / photo.width)];
      expect(await dims('w=3000')).to.deep.equal(at(2000));
      expect(await dims('q=50'), 'no w/h on a 2560 px wide source').to.deep.equal(at(2000));
      // No side above the original's either (1703 px high): the square box shrinks to 1703².
      expect(await dims('w=2500&h=2500&fit=fill')).to.deep.equal([photo.height, photo.height]);
      const capped = [await dims('h=1800'), await dims('w=1900&h=1900&fit=outside'), await dims('h=4200&fit=inside')];
      for (const [w, h] of capped) expect(Math.max(w!, h!)).to.be.at.most(2000);
      expect(await dims('w=800'), 'below the cap nothing changes').to.deep.equal(at(800));
    });
  });
});
