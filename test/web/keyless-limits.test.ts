// Bounded keyless work: output caps on /cdn/{id} and the demo route with
// and without the owner's key or signature, rounding of continuous parameters before the key,
// the demo route's own per-image budget and origin, demo sources judged on the parsed URL.
import { expect } from 'chai';
import { Types } from 'mongoose';
import sharp from 'sharp';
import { freePort } from '../../scripts/lib/redis-server.js';
import type { Credential } from '../../src/catalog/api-keys.js';
import { signQuery } from '../../src/imaging/signing.js';
import { jpeg } from '../fixtures/images.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectDetail, type CdnUploadBody } from './set-b-helpers.js';

const DEMO_TOKEN = 'demo-token-keyless-limits';
const MAX_SIDE = 1000;

async function dims(res: { status: number; bytes: Buffer; body: unknown }): Promise<[number, number]> {
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  const meta = await sharp(res.bytes).metadata();
  return [meta.width!, meta.height!];
}

describe('keyless limits on /cdn/{id} and the demo route', function () {
  this.timeout(90_000);
  let svc: TestService;
  let owner: Credential;
  let other: Credential;
  let photo: CdnUploadBody; // 1200×800

  before(async () => {
    svc = await TestService.start({
      env: {
        KEYLESS_MAX_SIDE: String(MAX_SIDE),
        DEMO_TOKEN,
        DEMO_DERIVATIVES_PER_IMAGE: '2',
        PUBLIC_DERIVATIVES_PER_IMAGE: '40',
        PUBLIC_RATE_LIMIT_PER_MIN: '10000',
        DEMO_RATE_LIMIT_PER_MIN: '10000',
      },
    });
    owner = await svc.createUser('usera');
    other = await svc.createUser('userb');
    photo = await cdnUpload(svc, owner.key, await jpeg(1200, 800), { filename: 'a.jpg' });
  });
  after(async () => svc?.stop());

  const cdn = (query: string, init: Parameters<typeof request>[1] = {}) => request(svc.url(`/cdn/${photo.imageId}?${query}`), init);

  describe('output size without a key', () => {
    it('no side above KEYLESS_MAX_SIDE and none above the original\'s, whatever w/h/fit ask for', async () => {
      // The expensive request: a 4200² PNG. The box keeps its shape, shrunk to fit.
      expect(await dims(await cdn('w=4200&h=4200&fit=fill&f=png'))).to.deep.equal([800, 800]);
      expect(await dims(await cdn('w=3000&f=jpeg'))).to.deep.equal([1000, 667]);
      expect(await dims(await cdn('f=jpeg')), 'no w/h: the original, within the cap').to.deep.equal([1000, 667]);
      for (const query of ['h=4200&f=jpeg', 'w=4200&h=10&fit=outside&f=jpeg', 'w=2000&h=2000&fit=inside&f=jpeg', 'w=1100&h=900&fit=cover&f=jpeg', 'w=100&h=4000&fit=contain&f=jpeg']) {
        const [w, h] = await dims(await cdn(query));
        expect(w, query).to.be.at.most(Math.min(1200, MAX_SIDE));
        expect(h, query).to.be.at.most(800);
      }
      expect(await dims(await cdn('w=640&f=jpeg')), 'below the caps nothing changes').to.deep.equal([640, 427]);
      // A small crop blown up, dpr, a quarter turn (the original turned) and padding (the whole output under the cap).
      for (const query of ['crop=0,0,50,50&w=4000&f=jpeg', 'dpr=4&w=900&f=jpeg']) {
        const [w, h] = await dims(await cdn(query));
        expect(w, query).to.be.at.most(Math.min(1200, MAX_SIDE));
        expect(h, query).to.be.at.most(800);
      }
      const [turnedW, turnedH] = await dims(await cdn('rot=90&h=4000&f=jpeg'));
      expect([turnedW, turnedH]).to.satisfy(([w, h]: number[]) => w <= 800 && h <= Math.min(1200, MAX_SIDE));
      for (const query of ['pad=1000&f=jpeg', 'w=1200&pad=300&f=jpeg']) {
        const [w, h] = await dims(await cdn(query));
        expect(Math.max(w, h), query).to.be.at.most(MAX_SIDE);
      }
    });

    it('the owner\'s key or signature lifts the caps; another user\'s key does not; a wrong one is 401', async () => {
      expect(await dims(await cdn('w=2400&f=jpeg', { key: owner.key }))).to.deep.equal([2400, 1600]);
      expect(await dims(await cdn('w=2400&f=jpeg', { key: other.key }))).to.deep.equal([1000, 667]);
      expectDetail(await cdn('w=2400&f=jpeg', { key: 'pk_not_a_key' }), 401, /invalid api key/i);

      // Signed form of /cdn/{id}: the parameters with src = the image id, then kid.
      const query = { w: '2200', f: 'jpeg', kid: owner.keyId };
      const sig = signQuery({ src: photo.imageId, ...query }, owner.secret);
      const qs = (q: Record<string, string>) => new URLSearchParams(q).toString();
      expect(await dims(await cdn(qs({ ...query, sig })))).to.deep.equal([2200, 1467]);
      expectDetail(await cdn(qs({ ...query, w: '2300', sig })), 401, /signature/i);
      const expired = { ...query, exp: String(Math.floor(Date.now() / 1000) - 5) };
      expectDetail(await cdn(qs({ ...expired, sig: signQuery({ src: photo.imageId, ...expired }, owner.secret) })), 403, /expired/i);
      // Another user's valid signature is keyless: capped.
      const foreign = { w: '2200', f: 'jpeg', kid: other.keyId };
      expect(await dims(await cdn(qs({ ...foreign, sig: signQuery({ src: photo.imageId, ...foreign }, other.secret) })))).to.deep.equal([1000, 667]);
    });
  });

  describe('continuous parameters are rounded before the derivative key', () => {
    it('blur 1.01 and 1.02 (and sharp, gamma near one step) are one derivative on /cdn/{id}', async () => {
      const first = await cdn('w=120&f=png&blur=1.01&sharp=2.26&gamma=1.51');
      expect(first.status).to.equal(200);
      expect(first.headers.get('x-cache')).to.equal('MISS');
      const second = await cdn('w=120&f=png&blur=1.02&sharp=2.4&gamma=1.54');
      expect(second.headers.get('x-cache')).to.equal('HIT');
      expect(second.headers.get('etag')).to.equal(first.headers.get('etag'));
      expect(Buffer.compare(first.bytes, second.bytes)).to.equal(0);
      await svc.derivativesSettled(owner.userId);
      const keys = (await svc.deps.catalog.derivatives.find({ imageId: photo.imageId, _id: /&w=120&/ }, { _id: 1 }).lean()).map((d) => d._id);
      expect(keys).to.have.length(1);
      expect(keys[0]).to.include('&blur=1&sharp=2.5&').and.include('&gamma=1.5');
      // A value a step away is another derivative.
      expect((await cdn('w=120&f=png&blur=1.3&sharp=2.4&gamma=1.54')).headers.get('x-cache')).to.equal('MISS');
    });

    it('the same rounding on /transform (set A) and /image/{path}: one stored URL for 1.01 and 1.02', async () => {
      const src = encodeURIComponent(photo.public_url);
      const a = await request(svc.url(`/transform?src=${src}&w=90&f=png&blur=1.01`), { key: owner.key });
      const b = await request(svc.url(`/transform?src=${src}&w=90&f=png&blur=1.02`), { key: owner.key });
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(b.body.url).to.equal(a.body.url);
      expect(b.headers.get('x-cache')).to.equal('HIT');
      const c = await request(svc.url(`/image/x.png?src=${src}&w=90&blur=1.02`), { key: owner.key });
      expect(c.headers.get('x-cache')).to.equal('HIT');
    });
  });

  describe('the demo route', () => {
    const demo = (src: string, query: string) => request(svc.url(`/image/demo/d.jpg?src=${encodeURIComponent(src)}&${query}`), { headers: { 'X-Demo-Token': DEMO_TOKEN } });

    it('has the keyless caps and its own per-image budget and origin, apart from /cdn/{id}\'s', async () => {
      const img = await cdnUpload(svc, owner.key, await jpeg(600, 400), { filename: 'budget.jpg' });
      expect(await dims(await demo(img.public_url, 'w=3000&f=jpeg'))).to.deep.equal([600, 400]);
      expect((await demo(img.public_url, 'w=100&f=jpeg')).status).to.equal(200);
      const third = await demo(img.public_url, 'w=101&f=jpeg');
      expectDetail(third, 403, /2 derivatives made through the demo route \(limit 2\)/);
      // Existing demo derivatives are still served.
      expect((await demo(img.public_url, 'w=100&f=jpeg')).headers.get('x-cache')).to.equal('HIT');
      // /cdn/{id} still has its whole budget for this image.
      for (const w of [110, 111, 112]) expect((await request(svc.url(`/cdn/${img.imageId}?w=${w}&f=jpeg`))).status).to.equal(200);
      await svc.derivativesSettled(owner.userId);
      const origins = await svc.deps.catalog.derivatives.aggregate<{ _id: string; n: number }>([{ $match: { imageId: new Types.ObjectId(img.imageId) } }, { $group: { _id: '$origin', n: { $sum: 1 } } }]);
      expect(Object.fromEntries(origins.map((o) => [o._id, o.n]))).to.deep.equal({ demo: 2, public: 3 });
    });
  });
});

describe('DEMO_SOURCES on the parsed URL', function () {
  this.timeout(60_000);
  let svc: TestService;
  let a: CdnUploadBody;
  let b: CdnUploadBody;

  before(async () => {
    // DEMO_SOURCES names one user's folder of this service's CDN URL, so the port is chosen first.
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    svc = await TestService.start({ env: { DEMO_TOKEN, PORT: String(port), BASE_URL: baseUrl, DEMO_SOURCES: `${baseUrl}/files/usera` } });
    const ua = await svc.createUser('usera');
    const ub = await svc.createUser('userb');
    a = await cdnUpload(svc, ua.key, await jpeg(64, 48), { filename: 'a.jpg' });
    b = await cdnUpload(svc, ub.key, await jpeg(64, 48), { filename: 'b.jpg' });
  });
  after(async () => svc?.stop());

  const demoRaw = (rawSrc: string) => request(svc.url(`/image/demo/d.jpg?w=32&src=${encodeURIComponent(rawSrc)}`), { headers: { 'X-Demo-Token': DEMO_TOKEN } });

  it('serves a source under the allowed folder', async () => {
    expect((await demoRaw(a.public_url)).status).to.equal(200);
  });

  it('refuses dot segments, raw or percent-encoded, and encoded separators, that would reach another user\'s image', async () => {
    const cdn = svc.config.cdnUrl;
    const escapes = [
      `${cdn}/usera/../userb/images/b.jpg`,
      `${cdn}/usera/%2e%2e/userb/images/b.jpg`,
      `${cdn}/usera/%2E%2e/userb/images/b.jpg`,
      `${cdn}/usera/.%2e/userb/images/b.jpg`,
      `${cdn}/usera/./../userb/images/b.jpg`,
      `${cdn}/usera%2f..%2fuserb/images/b.jpg`,
      `${cdn}/usera\\..\\userb/images/b.jpg`,
      `${cdn}/userb/images/b.jpg`,
      `${cdn}/useraX/images/b.jpg`,
    ];
    for (const src of escapes) expectDetail(await demoRaw(src), 403, /not allowed/);
    expect(b.public_url).to.equal(`${cdn}/userb/images/b.jpg`);
  });
});
