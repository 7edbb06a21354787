// POST /upload (set A, spec 2.1, 2.4, 4.1, 5, 7, 8): body and URL shape, auth, type/size/corruption
// checks from the bytes, public ids, catalog record and usage, and replacement of an image.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { readUsage } from '../../src/catalog/usage.js';
import { avif, gif, jpeg, pixelBombPng, pngWithAlpha, stats, tiff, truncated, webp } from '../fixtures/images.js';
import { request, upload, type UploadArgs } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

/** Every file under the storage root (sidecars and temp files included); empty directories are ignored. */
function walkFiles(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else out.push(path.relative(root, full));
    }
  };
  if (fs.existsSync(root)) visit(root);
  return out.sort();
}

function solid(r: number, g: number, b: number, width = 320, height = 240): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r, g, b } } }).jpeg({ quality: 95 }).toBuffer();
}

const SVG = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="red"/></svg>\n');
const TEXT = Buffer.from('hello, this is plain text and certainly not an image\n'.repeat(20));

describe('POST /upload', function () {
  this.timeout(60_000);
  let svc: TestService;

  before(async () => {
    svc = await TestService.start();
  });
  after(async () => svc?.stop());

  /** Sends an upload that must be refused with `status`, and checks nothing was stored or counted. */
  async function expectRejected(svcUnderTest: TestService, status: number, args: Omit<UploadArgs, 'key'> & { key?: string }, type = 'request_error') {
    const user = await svcUnderTest.createUser();
    const before = walkFiles(svcUnderTest.storageDir);
    const res = await upload(svcUnderTest.baseUrl, { key: user.key, ...args });
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body).to.be.an('object');
    expect(res.body.type).to.equal(type);
    expect(res.body.status_code).to.equal(status);
    expect(res.body.msg).to.be.a('string').and.not.equal('');
    expect(walkFiles(svcUnderTest.storageDir), 'nothing stored').to.deep.equal(before);
    expect(await svcUnderTest.deps.catalog.images.countDocuments({ userId: user.userId }), 'no catalog entry').to.equal(0);
    const usage = await readUsage(svcUnderTest.deps.catalog, user.userId);
    expect(usage.storageBytes, 'no storage counted').to.equal(0);
    expect(usage.imageCount, 'no image counted').to.equal(0);
    return res;
  }

  describe('success', () => {
    it('answers 200 with the spec body, a URL of the spec shape that serves the uploaded bytes', async () => {
      const user = await svc.createUser();
      const bytes = await jpeg(640, 480);
      const res = await upload(svc.baseUrl, { key: user.key, bytes, filename: 'holiday.jpg', mime: 'image/jpeg', query: { public_id: 'trips/holiday-1' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/application\/json/);
      expect(res.body.success).to.equal(true);
      expect(res.body.error).to.equal('');
      expect(res.body.public_url).to.equal(res.body.cdn_url);
      expect(res.body.public_url).to.equal(`${svc.config.cdnUrl}/${user.userId}/images/trips/holiday-1.jpg`);
      expect(res.body.public_url.length).to.be.within(1, 2083);
      expect(res.body.size).to.equal(bytes.length);
      expect(res.body.content_type).to.equal('image/jpeg');

      const got = await request(res.body.public_url);
      expect(got.status).to.equal(200);
      expect(got.headers.get('content-type')).to.equal('image/jpeg');
      expect(got.bytes.equals(bytes), 'original bytes kept as uploaded').to.equal(true);
      const meta = await sharp(got.bytes).metadata();
      expect([meta.format, meta.width, meta.height]).to.deep.equal(['jpeg', 640, 480]);
    });

    it('records owner, public id, format, dimensions, bytes, checksum and storage key, and grows usage by the size', async () => {
      const user = await svc.createUser();
      const first = await webp(300, 200);
      const second = await pngWithAlpha(120, 90);
      const r1 = await upload(svc.baseUrl, { key: user.key, bytes: first, filename: 'a.webp', query: { public_id: 'one' } });
      expect(r1.status, JSON.stringify(r1.body)).to.equal(200);
      expect(r1.body.content_type).to.equal('image/webp');
      expect((await readUsage(svc.deps.catalog, user.userId)).storageBytes).to.equal(first.length);
      const r2 = await upload(svc.baseUrl, { key: user.key, bytes: second, filename: 'b.png', query: { public_id: 'two' } });
      expect(r2.status, JSON.stringify(r2.body)).to.equal(200);

      const doc = await svc.deps.catalog.images.findOne({ userId: user.userId, publicId: 'one' }).lean();
      expect(doc).to.not.equal(null);
      expect(doc!.userId).to.equal(user.userId);
      expect(doc!.publicId).to.equal('one');
      expect(doc!.format).to.equal('webp');
      expect(doc!.width).to.equal(300);
      expect(doc!.height).to.equal(200);
      expect(doc!.bytes).to.equal(first.length);
      expect(doc!.checksum).to.equal(createHash('sha256').update(first).digest('hex'));
      expect(doc!.storageKey).to.equal(`${user.userId}/images/one.webp`);
      expect(svc.deps.storage.publicUrl(doc!.storageKey)).to.equal(r1.body.public_url);
      const stored = await svc.deps.storage.read(doc!.storageKey);
      expect(stored.equals(first)).to.equal(true);

      const usage = await readUsage(svc.deps.catalog, user.userId);
      expect(usage.storageBytes).to.equal(first.length + second.length);
      expect(usage.imageCount).to.equal(2);
    });

    it('accepts the key in X-API-Key and in X-API-KEY', async () => {
      const user = await svc.createUser();
      for (const headerName of ['X-API-Key', 'X-API-KEY', 'x-api-key']) {
        const res = await upload(svc.baseUrl, { key: user.key, headerName, bytes: await jpeg(64, 48), filename: `h-${headerName}.jpg` });
        expect(res.status, `${headerName}: ${JSON.stringify(res.body)}`).to.equal(200);
        expect(res.body.success).to.equal(true);
      }
    });

    for (const [name, make, ext, mime, format] of [
      ['JPEG', () => jpeg(200, 100), 'jpg', 'image/jpeg', 'jpeg'],
      ['PNG', () => pngWithAlpha(200, 100), 'png', 'image/png', 'png'],
      ['WebP', () => webp(200, 100), 'webp', 'image/webp', 'webp'],
      ['AVIF', () => avif(200, 100), 'avif', 'image/avif', 'heif'],
    ] as const) {
      it(`accepts ${name} and stores it as .${ext}`, async () => {
        const user = await svc.createUser();
        const bytes = await make();
        const res = await upload(svc.baseUrl, { key: user.key, bytes, filename: `pic.${ext}`, query: { public_id: `kind-${ext}` } });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body.public_url).to.equal(`${svc.config.cdnUrl}/${user.userId}/images/kind-${ext}.${ext}`);
        expect(res.body.content_type).to.equal(mime);
        const got = await request(res.body.public_url);
        expect(got.bytes.equals(bytes)).to.equal(true);
        const meta = await sharp(got.bytes).metadata();
        expect(meta.format).to.equal(format);
        expect([meta.width, meta.height]).to.deep.equal([200, 100]);
      });
    }

    it('decides the type from the bytes: a PNG named .jpg and declared image/jpeg is stored as .png', async () => {
      const user = await svc.createUser();
      const bytes = await pngWithAlpha(50, 40);
      const res = await upload(svc.baseUrl, { key: user.key, bytes, filename: 'disguised.jpg', mime: 'image/jpeg' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.content_type).to.equal('image/png');
      expect(res.body.public_url).to.equal(`${svc.config.cdnUrl}/${user.userId}/images/disguised.png`);
      const got = await request(res.body.public_url);
      expect(got.headers.get('content-type')).to.equal('image/png');
      expect((await sharp(got.bytes).metadata()).format).to.equal('png');
    });

    it('derives the public id from the file name: extension dropped, non-ASCII transliterated', async () => {
      const user = await svc.createUser();
      const res = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(40, 30), filename: 'Café Crème.jpg' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const url = new URL(res.body.public_url);
      const file = decodeURIComponent(url.pathname.split('/').pop()!);
      expect(file).to.match(/^[A-Za-z0-9_.-]+\.jpg$/);
      expect(file).to.equal('Cafe-Creme.jpg');
      expect(res.body.public_url).to.equal(`${svc.config.cdnUrl}/${user.userId}/images/Cafe-Creme.jpg`);
      const doc = await svc.deps.catalog.images.findOne({ userId: user.userId }).lean();
      expect(doc!.publicId).to.equal('Cafe-Creme');
      expect((await request(res.body.public_url)).status).to.equal(200);
    });

    it('accepts a public id of exactly 200 characters with nested segments', async () => {
      const user = await svc.createUser();
      const publicId = 'a/b.c/' + 'x'.repeat(194);
      expect(publicId.length).to.equal(200);
      const res = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(40, 30), query: { public_id: publicId } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.public_url).to.equal(`${svc.config.cdnUrl}/${user.userId}/images/${publicId}.jpg`);
      expect((await request(res.body.public_url)).status).to.equal(200);
    });

    it('stores EXIF-rotated uploads as uploaded and records their upright dimensions', async () => {
      const user = await svc.createUser();
      const bytes = await sharp(await jpeg(400, 200)).withMetadata({ orientation: 6 }).jpeg().toBuffer();
      const res = await upload(svc.baseUrl, { key: user.key, bytes, query: { public_id: 'sideways' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect((await request(res.body.public_url)).bytes.equals(bytes)).to.equal(true);
      const doc = await svc.deps.catalog.images.findOne({ userId: user.userId, publicId: 'sideways' }).lean();
      expect([doc!.width, doc!.height]).to.deep.equal([200, 400]);
    });
  });

  describe('replacement', () => {
    it('re-uploading a public id replaces the image; its earlier derivatives are no longer served', async () => {
      const user = await svc.createUser();
      const red = await solid(230, 20, 20);
      const blue = await solid(20, 20, 230, 200, 200);
      const r1 = await upload(svc.baseUrl, { key: user.key, bytes: red, query: { public_id: 'swap' } });
      expect(r1.status, JSON.stringify(r1.body)).to.equal(200);
      const transform = () => request(svc.url(`/transform?src=${encodeURIComponent(r1.body.public_url)}&w=100&f=png`), { key: user.key });
      const t1 = await transform();
      expect(t1.status, JSON.stringify(t1.body)).to.equal(200);
      const old = await request(t1.body.public_url);
      expect(old.status).to.equal(200);
      const oldStats = await stats(old.bytes);
      expect(oldStats.channels[0].mean).to.be.greaterThan(oldStats.channels[2].mean + 100);

      const r2 = await upload(svc.baseUrl, { key: user.key, bytes: blue, query: { public_id: 'swap' } });
      expect(r2.status, JSON.stringify(r2.body)).to.equal(200);
      expect(r2.body.public_url).to.equal(r1.body.public_url);
      expect((await request(r2.body.public_url)).bytes.equals(blue)).to.equal(true);
      expect((await request(t1.body.public_url)).status, 'old derivative URL').to.equal(404);

      const t2 = await transform();
      expect(t2.status, JSON.stringify(t2.body)).to.equal(200);
      expect(t2.body.public_url).to.not.equal(t1.body.public_url);
      const fresh = await request(t2.body.public_url);
      expect(fresh.status).to.equal(200);
      const meta = await sharp(fresh.bytes).metadata();
      expect([meta.width, meta.height]).to.deep.equal([100, 100]);
      const s = await stats(fresh.bytes);
      expect(s.channels[2].mean).to.be.greaterThan(s.channels[0].mean + 100);

      expect(await svc.deps.catalog.images.countDocuments({ userId: user.userId })).to.equal(1);
      const usage = await readUsage(svc.deps.catalog, user.userId);
      // Derivative bytes count toward storage once the worker's ledger records their batch (workers/derivative-ledger.ts),
      // which may or may not have happened by now; both counters move in one update, so the originals' share is exact
      // either way, and the derivatives' is the fresh one's or none (the replaced version's taken back).
      expect(usage.storageBytes - usage.derivativeBytes, 'the original replaced, not added').to.equal(blue.length);
      expect([0, fresh.bytes.length], 'derivative bytes').to.include(usage.derivativeBytes);
      expect(usage.imageCount).to.equal(1);
      const doc = await svc.deps.catalog.images.findOne({ userId: user.userId }).lean();
      expect(doc!.checksum).to.equal(createHash('sha256').update(blue).digest('hex'));
      expect([doc!.width, doc!.height]).to.deep.equal([200, 200]);
    });

    it('replacing with another format moves the image to the new extension and removes the old object', async () => {
      const user = await svc.createUser();
      const r1 = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(60, 40), query: { public_id: 'fmt' } });
      expect(r1.status).to.equal(200);
      const png = await pngWithAlpha(60, 40);
      const r2 = await upload(svc.baseUrl, { key: user.key, bytes: png, query: { public_id: 'fmt' } });
      expect(r2.status, JSON.stringify(r2.body)).to.equal(200);
      expect(r2.body.public_url).to.equal(`${svc.config.cdnUrl}/${user.userId}/images/fmt.png`);
      expect((await request(r1.body.public_url)).status).to.equal(404);
      expect((await request(r2.body.public_url)).bytes.equals(png)).to.equal(true);
      expect((await readUsage(svc.deps.catalog, user.userId)).storageBytes).to.equal(png.length);
    });
  });

  describe('authentication', () => {
    it('refuses a missing key with 401 unauthorized_error', async () => {
      await expectRejected(svc, 401, { key: '', bytes: await jpeg(40, 30) }, 'unauthorized_error');
    });

    it('refuses an invalid key with 401 unauthorized_error', async () => {
      await expectRejected(svc, 401, { key: 'pk_not-a-real-key', bytes: await jpeg(40, 30) }, 'unauthorized_error');
    });
  });

  describe('rejections', () => {
    it('no file → 400', async () => {
      const user = await svc.createUser();
      const before = walkFiles(svc.storageDir);
      const form = new FormData();
      form.append('note', 'no file here');
      const res = await fetch(svc.url('/upload'), { method: 'POST', body: form, headers: { 'X-API-Key': user.key } });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(body).to.deep.include({ type: 'request_error', status_code: 400 });
      expect(walkFiles(svc.storageDir)).to.deep.equal(before);
      expect(await svc.deps.catalog.images.countDocuments({ userId: user.userId })).to.equal(0);
    });

    it('no multipart body at all → 400', async () => {
      const user = await svc.createUser();
      const res = await request(svc.url('/upload'), { method: 'POST', key: user.key });
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.include({ type: 'request_error', status_code: 400 });
    });

    it('an empty file → 400', async () => {
      await expectRejected(svc, 400, { bytes: Buffer.alloc(0), filename: 'empty.jpg' });
    });

    for (const [name, make, filename, mime] of [
      ['GIF', gif, 'anim.gif', 'image/gif'],
      ['TIFF', tiff, 'scan.tiff', 'image/tiff'],
      ['plain text', async () => TEXT, 'notes.txt', 'text/plain'],
      ['SVG', async () => SVG, 'logo.svg', 'image/svg+xml'],
      ['text renamed .jpg (declared image/jpeg)', async () => TEXT, 'photo.jpg', 'image/jpeg'],
      ['GIF renamed .png (declared image/png)', gif, 'photo.png', 'image/png'],
    ] as const) {
      it(`${name} → 415`, async () => {
        const res = await expectRejected(svc, 415, { bytes: await make(), filename, mime });
        expect(res.body.msg).to.match(/unsupported|JPEG, PNG, WebP or AVIF/i);
      });
    }

    it('a truncated JPEG → 415 saying it is corrupt', async () => {
      const res = await expectRejected(svc, 415, { bytes: truncated(await jpeg(640, 480)), filename: 'cut.jpg', mime: 'image/jpeg' });
      expect(res.body.msg).to.match(/corrupt/i);
    });

    it('a PNG whose header claims more pixels than MAX_INPUT_PIXELS (pixel bomb) → 413', async () => {
      const res = await expectRejected(svc, 413, { bytes: await pixelBombPng(), filename: 'bomb.png', mime: 'image/png' });
      expect(res.body.msg).to.match(/pixels/i);
    });

    for (const bad of ['../x', 'a//b', 'a/./b', 'x'.repeat(201), 'a b', '/abs', 'trail/', 'a/../b', 'ü']) {
      it(`public_id ${JSON.stringify(bad.length > 40 ? `${bad.slice(0, 5)}…(${bad.length} chars)` : bad)} → 400`, async () => {
        const res = await expectRejected(svc, 400, { bytes: await jpeg(40, 30), query: { public_id: bad } });
        expect(res.body.msg).to.match(/public_id/);
      });
    }

    it('an empty public_id → 400', async () => {
      await expectRejected(svc, 400, { bytes: await jpeg(40, 30), query: { public_id: '' } });
    });
  });

  describe('size limit (MAX_UPLOAD_BYTES)', () => {
    const LIMIT = 100_000;
    let small: TestService;
    before(async () => {
      small = await TestService.start({ env: { MAX_UPLOAD_BYTES: String(LIMIT) } });
    });
    after(async () => small?.stop());

    async function noisyJpeg(minBytes: number): Promise<Buffer> {
      // Random pixels compress badly, so the file size is predictable from the pixel count.
      for (let side = 200; ; side += 100) {
        const raw = Buffer.alloc(side * side * 3);
        for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
        const bytes = await sharp(raw, { raw: { width: side, height: side, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
        if (bytes.length > minBytes) return bytes;
      }
    }

    it('a file just under the limit is accepted', async () => {
      const user = await small.createUser();
      let bytes = await noisyJpeg(LIMIT / 2);
      while (bytes.length > LIMIT) bytes = await sharp(bytes).resize({ width: Math.floor(((await sharp(bytes).metadata()).width ?? 100) * 0.9) }).jpeg({ quality: 95 }).toBuffer();
      const res = await upload(small.baseUrl, { key: user.key, bytes });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.size).to.equal(bytes.length);
    });

    it('a file a little over the limit → 413, detected while streaming', async () => {
      const bytes = await noisyJpeg(LIMIT + 1);
      expect(bytes.length).to.be.lessThan(LIMIT + 64 * 1024); // under the Content-Length shortcut: the stream is counted
      const res = await expectRejected(small, 413, { bytes });
      expect(res.body.msg).to.match(/too large/i);
    });

    it('a file far over the limit → 413', async () => {
      const bytes = await noisyJpeg(LIMIT * 4);
      const res = await expectRejected(small, 413, { bytes });
      expect(res.body.msg).to.match(/too large/i);
    });
  });
});
