// The client SDK (`pictor/client`) against the real service (front door, queues, workers with the
// passport queue): every method, typed errors carrying the server's error bodies, URL signing with
// WebCrypto that matches the server's HMAC byte for byte, and a client-signed srcset loaded by
// headless Chromium — signed inside the browser by the same module the dashboard serves.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { PictorApiError, PictorClient, PictorConfigError, PictorNetworkError, canonicalQuery, signedTransformUrlWith, webCryptoHmacSha256, type UploadResult } from '../../src/client/index.js';
import { signedTransformUrl, signQuery, verifyQuery } from '../../src/imaging/signing.js';
import { CORPUS, jpeg, png16 } from '../fixtures/images.js';
import { requireChromium, launchChromium, TEST_OUTPUT } from '../harness/chromium.js';
import { TestService } from '../harness/test-service.js';

const DEMO_TOKEN = 'sdk-demo-token';

async function apiError(promise: Promise<unknown>, status: number): Promise<PictorApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(PictorApiError);
    const e = err as PictorApiError;
    expect(e.status, e.message).to.equal(status);
    return e;
  }
  expect.fail(`expected PictorApiError ${status}`);
}

describe('client SDK: package entry and signing (shared canonical form, pluggable HMAC)', () => {
  it('is importable as pictor/client (package.json exports)', async () => {
    const specifier = 'pictor/client';
    const sdk = (await import(specifier)) as typeof import('../../src/client/index.js');
    expect(sdk.PictorClient).to.equal(PictorClient);
    expect(sdk.PictorApiError).to.equal(PictorApiError);
  });

  const query = { src: 'https://cdn.example/u/images/a b+ü.jpg', w: '800', f: 'webp', q: '75', kid: '0123456789abcdef01234567' };

  it('WebCrypto HMAC equals the server’s node:crypto HMAC, and verifyQuery accepts it', async () => {
    const secret = 'sk_test_secret';
    const sig = await webCryptoHmacSha256(secret, canonicalQuery(query));
    expect(sig).to.equal(signQuery(query, secret));
    expect(verifyQuery(query, secret, sig)).to.equal(true);
    expect(verifyQuery({ ...query, w: '801' }, secret, sig)).to.equal(false);
  });

  it('the async URL builder produces the server’s URL exactly', async () => {
    const credential = { kid: query.kid, secret: 'sk_x' };
    const params = { src: query.src, w: 800, f: 'webp', q: 75 };
    expect(await signedTransformUrlWith('https://api.example', params, credential)).to.equal(signedTransformUrl('https://api.example', params, credential));
  });
});

describe('client SDK against the running service', function () {
  this.timeout(90_000);
  let svc: TestService;
  let client: PictorClient;
  let user: Awaited<ReturnType<TestService['createUser']>>;
  let hero: UploadResult;

  before(async () => {
    svc = await TestService.start({ workerQueues: 'upload-finalize,transform,passport,analyze', env: { DEMO_TOKEN, WORKER_CONCURRENCY: '2' } });
    user = await svc.createUser();
    client = new PictorClient({ baseUrl: svc.baseUrl, apiKey: user.key, keyId: user.keyId, secret: user.secret, demoToken: DEMO_TOKEN });
    hero = await client.upload(await jpeg(1600, 1000), { publicId: 'sdk/hero', project: 'SDK Tests', filename: 'hero.jpg' });
  });
  after(async () => svc?.stop());

  describe('upload', () => {
    it('uploads bytes with a public id and a project', () => {
      expect(hero).to.include({ success: true, error: '', public_id: 'sdk/hero', project: 'sdk-tests', width: 1600, height: 1000, content_type: 'image/jpeg' });
      expect(hero.public_url).to.equal(`${svc.config.cdnUrl}/${user.userId}/images/sdk/hero.jpg`);
      expect(hero.cdn_url).to.equal(hero.public_url);
      expect(hero.imageId).to.match(/^[0-9a-f]{24}$/);
    });

    it('uploads a File and names it after the file when no public id is given', async () => {
      const file = new File([new Uint8Array(await png16(120, 90))], 'Café Menu.png', { type: 'image/png' });
      const res = await client.upload(file);
      expect(res).to.include({ public_id: 'Cafe-Menu', project: 'default', width: 120, height: 90, content_type: 'image/png' });
    });

    it('surfaces 415 with the server’s set B body, 401 for a bad key, and needs a key before sending anything', async () => {
      const e415 = await apiError(client.upload(new TextEncoder().encode('not an image at all'), { filename: 'x.jpg' }), 415);
      expect(e415.body).to.have.property('detail').that.is.a('string');
      expect(e415.detail).to.match(/jpeg|png|webp|avif|type/i);
      expect(e415.requestId).to.be.a('string');
      const bad = new PictorClient({ baseUrl: svc.baseUrl, apiKey: 'pk_wrong' });
      const e401 = await apiError(bad.upload(await jpeg(20, 20)), 401);
      expect(e401.body).to.deep.equal({ detail: 'Invalid API key' });
      const keyless = new PictorClient({ baseUrl: svc.baseUrl });
      try {
        await keyless.usage();
        expect.fail('expected PictorConfigError');
      } catch (err) {
        expect(err).to.be.instanceOf(PictorConfigError);
      }
    });

    it('reports network failures as PictorNetworkError', async () => {
      const dead = new PictorClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'pk_x' });
      try {
        await dead.verifyKey();
        expect.fail('expected PictorNetworkError');
      } catch (err) {
        expect(err).to.be.instanceOf(PictorNetworkError);
      }
    });
  });

  describe('transforms and URLs', () => {
    it('transformUrl lists src then the parameters in registry order, and rejects unknown ones', () => {
      expect(client.transformUrl(hero.public_url, { q: 70, f: 'webp', w: 300 })).to.equal(`${svc.baseUrl}/transform?src=${encodeURIComponent(hero.public_url)}&w=300&q=70&f=webp`);
      expect(() => client.transformUrl(hero.public_url, { fit: 'cover' } as never)).to.throw(TypeError, /fit/);
    });

    it('transform() answers the JSON result; set A errors carry {type, msg, status_code}', async () => {
      const res = await client.transform(hero.public_url, { w: 320, f: 'webp', q: 70 });
      expect(res).to.include({ success: true, error: '', content_type: 'image/webp' });
      const bytes = Buffer.from(await (await fetch(res.public_url)).arrayBuffer());
      expect((await sharp(bytes).metadata()).width).to.equal(320);
      const err = await apiError(client.transform(hero.public_url, { w: 5000 }), 422);
      expect(err.body).to.deep.include({ type: 'image_processing_error', status_code: 422 });
      expect(err.type).to.equal('image_processing_error');
    });

    it('fetchImage() returns the transformed bytes of /image/{path} (set B parameters)', async () => {
      const blob = await client.fetchImage(hero.public_url, { w: 200, h: 200, fit: 'cover', f: 'png' });
      expect(blob.type).to.equal('image/png');
      const meta = await sharp(Buffer.from(await blob.arrayBuffer())).metadata();
      expect([meta.width, meta.height, meta.format]).to.deep.equal([200, 200, 'png']);
      expect(client.imageUrl(hero.public_url, { w: 10, opt: true }, 'a/b.webp')).to.equal(`${svc.baseUrl}/image/a/b.webp?src=${encodeURIComponent(hero.public_url)}&w=10&opt=true`);
    });

    it('fetchImageWithNotes() also answers what the render noted: q=auto\'s quality, remove_bg\'s no-person', async () => {
      const auto = await client.fetchImageWithNotes(hero.public_url, { w: 200, f: 'jpeg', q: 'auto' });
      expect(auto.blob.type).to.equal('image/jpeg');
      expect(auto.notes.quality).to.be.within(10, 95);
      expect(auto.notes.removeBg).to.equal(undefined);
      expect((await client.fetchImageWithNotes(hero.public_url, { w: 200, f: 'jpeg' })).notes).to.deep.equal({});
      // The hero is a synthetic picture without a face.
      expect((await client.fetchImageWithNotes(hero.public_url, { w: 200, f: 'png', remove_bg: true })).notes).to.deep.equal({ removeBg: 'no-person' });
    });

    it('publicImageUrl() addresses /cdn/{imageId} without a key', async () => {
      const res = await fetch(client.publicImageUrl(hero.imageId, { w: 100, f: 'jpeg' }));
      expect(res.status).to.equal(200);
      expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width).to.equal(100);
    });

    it('signedTransformUrl() loads without a key; a tampered copy is refused', async () => {
      const url = await client.signedTransformUrl(hero.public_url, { w: 240, f: 'jpeg', q: 60 });
      expect(url).to.match(new RegExp(`[?&]kid=${user.keyId}&sig=[\\w-]+$`));
      const ok = await fetch(url);
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('content-type')).to.equal('image/jpeg');
      expect((await sharp(Buffer.from(await ok.arrayBuffer())).metadata()).width).to.equal(240);
      const tampered = await fetch(url.replace('w=240', 'w=241'));
      expect(tampered.status).to.equal(401);
      const unsigned = new PictorClient({ baseUrl: svc.baseUrl, apiKey: user.key });
      try {
        await unsigned.signedTransformUrl(hero.public_url, { w: 1 });
        expect.fail('expected PictorConfigError');
      } catch (err) {
        expect(err).to.be.instanceOf(PictorConfigError);
        expect((err as Error).message).to.match(/keys -- list/);
      }
    });

    it('srcset() and signedSrcset() with ttl: URLs with a signed exp that load; the same exp signs the same URL both ways', async () => {
      const server = await client.srcset(hero.public_url, { widths: [200], ttl: 300 });
      const local = await client.signedSrcset(hero.public_url, { widths: [200], ttl: 300, version: hero.version });
      const expOf = (u: string) => Number(new URL(u).searchParams.get('exp'));
      expect(expOf(server.default)).to.be.within(Math.floor(Date.now() / 1000) + 295, Math.floor(Date.now() / 1000) + 300);
      // Both sides compute exp from their clock; within the same second they are the same URL.
      if (expOf(local.default) === expOf(server.default)) expect(local.default).to.equal(server.default);
      for (const url of [server.default, local.default]) expect((await fetch(url)).status).to.equal(200);
    });

    it('srcset() (server-signed) and signedSrcset() (signed here) are identical', async () => {
      const options = { widths: [320, 640, 960, 1280], f: 'webp' as const, q: 72, sizes: '(max-width: 700px) 100vw, 700px' };
      const server = await client.srcset(hero.public_url, options);
      // Signed here with the image's version, the URLs are the server's (which adds the placeholders).
      const urlsOf = (s: { srcset: string; sizes: string; default: string }) => ({ srcset: s.srcset, sizes: s.sizes, default: s.default });
      expect(await client.signedSrcset(hero.public_url, { ...options, version: hero.version })).to.deep.equal(urlsOf(server));
      expect(server.version).to.equal(hero.version);
      expect(server.srcset.split(', ')).to.have.length(4);
      expect(server.default).to.contain('w=640');
      const defaults = await client.srcset(hero.public_url);
      expect(await client.signedSrcset(hero.public_url, { version: hero.version })).to.deep.equal(urlsOf(defaults));
      expect(defaults.sizes).to.equal('(max-width: 1200px) 100vw, 1200px');
      const err = await apiError(client.srcset('https://elsewhere.example/x.jpg'), 422);
      expect(err.body).to.deep.include({ type: 'image_processing_error', status_code: 422 });
    });

    it("srcset() with widths 'auto' sends min_w, max_w, bytes_step and max_images; signedSrcset() refuses 'auto'", async () => {
      const auto = await client.srcset(hero.public_url, { widths: 'auto', f: 'webp', q: 80, min_w: 300, max_w: 1500, bytes_step: 5_000, max_images: 4 });
      const widths = auto.srcset.split(', ').map((e) => Number(e.split(' ')[1].replace('w', '')));
      expect(widths).to.have.length.within(2, 4);
      expect([widths[0], widths.at(-1)]).to.deep.equal([300, 1500]);
      try {
        await client.signedSrcset(hero.public_url, { widths: 'auto' });
        expect.fail('expected a RangeError');
      } catch (err) {
        expect(err).to.be.instanceOf(RangeError);
      }
      const bad = await apiError(client.srcset(hero.public_url, { widths: 'auto', max_images: 0 }), 400);
      expect(bad.body).to.deep.include({ type: 'request_error', status_code: 400 });
    });

    it('info() (keyed) and publicInfo() (no key) tell the same facts; another key gets 404 from info()', async () => {
      const keyed = await client.info(hero.public_url);
      expect(keyed).to.include({ width: 1600, height: 1000, format: 'jpeg', orientation: 1, has_location: false, animated: false, frames: 1 });
      expect(await new PictorClient({ baseUrl: svc.baseUrl }).publicInfo(hero.imageId)).to.deep.equal(keyed);
      const stranger = await svc.createUser();
      await apiError(new PictorClient({ baseUrl: svc.baseUrl, apiKey: stranger.key }).info(hero.public_url), 404);
    });

    it('a client-signed srcset loads in headless Chromium, signed in the browser with WebCrypto', async function () {
      requireChromium();
      const node = await client.signedSrcset(hero.public_url, { widths: [300, 600, 900], f: 'jpeg', q: 70 });
      const browser = await launchChromium({ width: 600, height: 700 });
      try {
        const { page } = browser;
        // Any page of the service's origin: the SDK module is served with the dashboard.
        await page.goto(`${svc.baseUrl}/dashboard/styles.css`);
        const inBrowser = await page.evaluate(
          async ({ baseUrl, keyId, secret, src }) => {
            const sdk = (await import(`${baseUrl}/dashboard/js/client/index.js`)) as typeof import('../../src/client/index.js');
            const c = new sdk.PictorClient({ baseUrl, keyId, secret });
            const set = await c.signedSrcset(src, { widths: [300, 600, 900], f: 'jpeg', q: 70 });
            document.body.replaceChildren();
            const img = document.createElement('img');
            img.sizes = '100vw';
            img.srcset = set.srcset;
            img.src = set.default;
            img.alt = 'signed srcset';
            img.style.width = '100%';
            document.body.append(img);
            await img.decode();
            return { srcset: set.srcset, naturalWidth: img.naturalWidth, currentSrc: img.currentSrc, subtle: typeof crypto.subtle };
          },
          { baseUrl: svc.baseUrl, keyId: user.keyId, secret: user.secret, src: hero.public_url },
        );
        expect(inBrowser.subtle).to.equal('object');
        expect(inBrowser.srcset).to.equal(node.srcset);
        expect(inBrowser.currentSrc).to.contain('w=600');
        expect(inBrowser.naturalWidth).to.equal(600);
        fs.mkdirSync(path.join(TEST_OUTPUT, 'client'), { recursive: true });
        await page.screenshot({ path: path.join(TEST_OUTPUT, 'client', 'signed-srcset-600px.png') });
      } finally {
        await browser.close();
      }
    });
  });

  describe('images', () => {
    it('list pages with a cursor, iterate walks every page, filters by project', async () => {
      for (const n of [1, 2, 3]) await client.upload(await jpeg(40 + n, 30), { publicId: `sdk/page-${n}`, project: 'Paging' });
      const first = await client.images.list({ project: 'paging', limit: 2 });
      expect(first.images.map((i) => i.public_id)).to.deep.equal(['sdk/page-3', 'sdk/page-2']);
      expect(first.has_more).to.equal(true);
      const second = await client.images.list({ project: 'paging', limit: 2, cursor: first.next_cursor! });
      expect(second.images.map((i) => i.public_id)).to.deep.equal(['sdk/page-1']);
      expect(second.has_more).to.equal(false);
      const all: string[] = [];
      for await (const img of client.images.iterate({ project: 'paging', pageSize: 1 })) all.push(img.public_id);
      expect(all).to.deep.equal(['sdk/page-3', 'sdk/page-2', 'sdk/page-1']);
      const err = await apiError(client.images.list({ limit: 1000 }), 422);
      expect(err.issues[0].loc).to.deep.equal(['query', 'limit']);
    });

    it('delete: one id (404 when missing) or several (missing ones reported)', async () => {
      const a = await client.upload(await jpeg(30, 30), { publicId: 'sdk/del-a' });
      const b = await client.upload(await jpeg(30, 30), { publicId: 'sdk/del-b' });
      expect(await client.images.delete(a.imageId)).to.deep.equal({ deleted: [a.imageId], not_found: [] });
      await apiError(client.images.delete(a.imageId), 404);
      expect(await client.images.delete([a.imageId, b.imageId])).to.deep.equal({ deleted: [b.imageId], not_found: [a.imageId] });
    });
  });

  describe('projects, usage, plans, key', () => {
    it('create, list, update, delete (with and without moving images); 409 on a duplicate', async () => {
      const p = await client.projects.create({ name: 'Client Work', description: 'for clients' });
      expect(p).to.include({ name: 'Client Work', slug: 'client-work', description: 'for clients', image_count: 0 });
      const e409 = await apiError(client.projects.create({ name: 'Client Work' }), 409);
      expect(e409.body).to.have.property('detail');
      expect((await client.projects.list()).map((x) => x.slug)).to.include.members(['default', 'sdk-tests', 'client-work']);
      const renamed = await client.projects.update(p.projectId, { name: 'Client Jobs' });
      expect(renamed).to.include({ projectId: p.projectId, name: 'Client Jobs', slug: 'client-jobs' });
      await client.upload(await jpeg(30, 30), { publicId: 'sdk/moved', project: 'Client Jobs' });
      expect(await client.projects.delete(p.projectId, { moveImagesToDefault: true })).to.deep.equal({ deleted: true, projectId: p.projectId, images_moved: 1, images_deleted: 0 });
      const q = await client.projects.create({ name: 'Scratch' });
      await client.upload(await jpeg(30, 30), { publicId: 'sdk/scratch', project: 'Scratch' });
      expect(await client.projects.delete(q.projectId)).to.include({ images_moved: 0, images_deleted: 1 });
      const def = (await client.projects.list()).find((x) => x.slug === 'default')!;
      await apiError(client.projects.delete(def.projectId), 403);
    });

    it('usage() reports storage and transformations against the plan limits; plans() lists the plans', async () => {
      await svc.derivativesSettled(user.userId);
      const usage = await client.usage();
      expect(usage.plan).to.equal('pro');
      expect(usage.image_count).to.be.greaterThan(0);
      expect(usage.storage_bytes).to.be.greaterThan(0);
      expect(usage.transformations).to.be.greaterThan(0);
      expect(usage.limits.storage_bytes).to.equal(100 * 1024 ** 3);
      const plans = await new PictorClient({ baseUrl: svc.baseUrl }).plans();
      expect(plans.map((p) => p.id)).to.deep.equal(['free', 'pro', 'business']);
    });

    it('verifyKey() names the user and plan', async () => {
      expect(await client.verifyKey()).to.deep.equal({ valid: true, user_id: user.userId, plan: 'pro' });
    });
  });

  describe('passport', () => {
    const portrait = () => fs.readFileSync(path.join(CORPUS, 'faces/02_grace_hopper.jpg'));

    it('processes uploaded bytes (demo token from the client options) with a print sheet', async () => {
      const res = await client.passport.process(portrait(), { country: 'usa', includePrintSheet: true, filename: 'hopper.jpg' });
      expect(res.success).to.equal(true);
      expect(res.country).to.equal('usa');
      expect(res.face?.box.width).to.be.within(0.1, 0.9);
      expect(res.checks.length).to.be.greaterThan(5);
      expect(res.checks.find((c) => c.name === 'single_face')?.passed).to.equal(true);
      expect(res.photo).to.include({ width: 600, height: 600, dpi: 300 });
      expect(res.photo.data_url).to.match(/^data:image\/jpeg;base64,/);
      expect(res.print_sheet).to.include({ width: 1800, height: 1200 });
    });

    it('processes a photo at a URL ({src}); 403 without a token or allowed origin', async () => {
      const up = await client.upload(portrait(), { publicId: 'faces/hopper' });
      const res = await client.passport.process({ src: up.public_url }, { country: 'india', removeBackground: false, enhance: false });
      expect(res.country).to.equal('india');
      expect(res.print_sheet).to.equal(null);
      expect(res.photo.width).to.be.greaterThan(0);
      const anonymous = new PictorClient({ baseUrl: svc.baseUrl });
      const err = await apiError(anonymous.passport.process({ src: up.public_url }), 403);
      expect(err.detail).to.match(/demo/i);
      const specs = await anonymous.passport.specs();
      expect(specs.countries).to.deep.equal(['usa', 'india', 'india_visa', 'uk', 'schengen_visa', 'canada', 'china', 'japan']);
    });
  });
});
