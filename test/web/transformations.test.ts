// The transform parameters beyond the specification's, on set A (/transform) and set B (/image/{path},
// /cdn/{id}), checked by decoding the outputs: gravity (compass, entropy, attention, face,
// focal), crop, rot, flip, trim, bg+pad, grayscale, dpr, presets, watermark, animated WebP,
// placeholders, client hints and versioned URLs (immutable only with v; replacement changes them).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { thumbHashToApproximateAspectRatio, thumbHashToAverageRGBA } from 'thumbhash';
import { detectFaces } from '../../src/vision/face-detector.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectDetail } from './set-b-helpers.js';

type Credential = Awaited<ReturnType<TestService['createUser']>>;
type Uploaded = Awaited<ReturnType<typeof cdnUpload>> & { version: string; thumbhash: string; dominant_color: string; lqip: string; faces: { x: number; y: number; w: number; h: number }[] };

const here = path.dirname(fileURLToPath(import.meta.url));
const FACE = path.resolve(here, '../../../test/fixtures/corpus/faces/02_grace_hopper.jpg');

/** Raw RGB(A) pixels of an encoded image. */
async function pixels(bytes: Buffer) {
  return sharp(bytes).raw().toBuffer({ resolveWithObject: true });
}

/** 200×400: rows 0-99 red, 100-299 green, 300-399 blue. */
async function stripes(): Promise<Buffer> {
  const raw = Buffer.alloc(200 * 400 * 3);
  for (let y = 0; y < 400; y++) {
    const c = y < 100 ? [220, 20, 20] : y < 300 ? [20, 200, 20] : [20, 20, 220];
    for (let x = 0; x < 200; x++) raw.set(c, (y * 200 + x) * 3);
  }
  return sharp(raw, { raw: { width: 200, height: 400, channels: 3 } }).png().toBuffer();
}

/** Deterministic noise with some structure (lossless PNG): every pixel differs from its neighbours. */
async function noise(width = 120, height = 80): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 131 + ((i * i) % 251)) & 0xff;
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

/** A wide landscape with the portrait placed off-centre (right third). */
async function wideWithFace(): Promise<Buffer> {
  const face = fs.readFileSync(FACE);
  return sharp({ create: { width: 1800, height: 600, channels: 3, background: { r: 90, g: 120, b: 160 } } })
    .composite([{ input: face, left: 1200, top: 0 }])
    .jpeg({ quality: 90 })
    .toBuffer();
}

function maxDiff(a: Buffer, b: Buffer): number {
  expect(a.length).to.equal(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

async function expectSamePixels(actual: Buffer, expected: Buffer, tolerance = 0) {
  const a = await pixels(actual);
  const e = await pixels(expected);
  expect([a.info.width, a.info.height]).to.deep.equal([e.info.width, e.info.height]);
  const ea = e.info.channels === a.info.channels ? e.data : (await sharp(expected).toColourspace('srgb').removeAlpha().raw().toBuffer());
  expect(maxDiff(a.data, ea)).to.be.at.most(tolerance);
}

describe('transformations', function () {
  this.timeout(120_000);
  let svc: TestService;
  let user: Credential;
  const img: Record<string, Uploaded> = {};

  before(async () => {
    svc = await TestService.start({
      env: { WORKER_CONCURRENCY: '3', PRESETS: JSON.stringify({ thumb: { w: 120, h: 80, fit: 'cover', gravity: 'north', f: 'png' } }), MAX_ANIMATED_FRAMES: '5' },
    });
    user = await svc.createUser();
    const frames = await Promise.all([0, 1, 2].map((i) => sharp({ create: { width: 60, height: 40, channels: 3, background: { r: 60 + 80 * i, g: 20, b: 200 - 60 * i } } }).png().toBuffer()));
    const bordered = await sharp({ create: { width: 160, height: 110, channels: 3, background: { r: 200, g: 30, b: 30 } } })
      .extend({ top: 20, bottom: 20, left: 20, right: 20, background: '#ffffff' })
      .png()
      .toBuffer();
    const inputs: [string, Buffer, string][] = [
      ['stripes', await stripes(), 'image/png'],
      ['noise', await noise(), 'image/png'],
      ['face', await wideWithFace(), 'image/jpeg'],
      ['bordered', bordered, 'image/png'],
      ['red', await sharp({ create: { width: 200, height: 100, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer(), 'image/png'],
      ['grey', await sharp({ create: { width: 400, height: 300, channels: 3, background: { r: 128, g: 128, b: 128 } } }).png().toBuffer(), 'image/png'],
      ['mark', await sharp({ create: { width: 80, height: 80, channels: 3, background: { r: 0, g: 0, b: 255 } } }).png().toBuffer(), 'image/png'],
      ['green', await sharp({ create: { width: 300, height: 150, channels: 3, background: { r: 40, g: 160, b: 90 } } }).jpeg().toBuffer(), 'image/jpeg'],
      ['anim', await sharp(frames, { join: { animated: true } }).webp({ loop: 0 }).toBuffer(), 'image/webp'],
    ];
    for (const [name, bytes, mime] of inputs) {
      img[name] = (await cdnUpload(svc, user.key, bytes, { filename: `${name}.${mime.split('/')[1]}`, mime })) as Uploaded;
    }
  });
  after(async () => svc?.stop());

  const cdn = (name: string, query: string, headers: Record<string, string> = {}) => request(svc.url(`/cdn/${img[name].imageId}?${query}`), { headers });
  const imagePath = (name: string, query: string) => request(svc.url(`/image/x.png?src=${encodeURIComponent(img[name].public_url)}&${query}`), { key: user.key });
  /** Set A: the JSON answer, then its derivative's bytes. */
  async function transformA(name: string, query: string) {
    const res = await request(svc.url(`/transform?src=${encodeURIComponent(img[name].public_url)}&${query}`), { key: user.key });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const file = await request(res.body.public_url);
    expect(file.status).to.equal(200);
    return file.bytes;
  }
  /** The same parameters through all three routes (set B's fit=cover is set A's w+h default). */
  async function everyRoute(name: string, query: string): Promise<Buffer[]> {
    const a = await transformA(name, query);
    const b1 = await imagePath(name, `fit=cover&${query}`);
    const b2 = await cdn(name, `fit=cover&${query}`);
    expect(b1.status, b1.bytes.toString()).to.equal(200);
    expect(b2.status, b2.bytes.toString()).to.equal(200);
    return [a, b1.bytes, b2.bytes];
  }

  it('gravity=north/south keeps the top/bottom rows; center keeps the middle (all routes)', async () => {
    for (const [gravity, colour] of [['north', [220, 20, 20]], ['south', [20, 20, 220]], ['center', [20, 200, 20]]] as const) {
      for (const bytes of await everyRoute('stripes', `w=200&h=100&gravity=${gravity}&f=png`)) {
        const { data, info } = await pixels(bytes);
        expect([info.width, info.height]).to.deep.equal([200, 100]);
        for (const [x, y] of [[0, 0], [199, 99], [100, 50]]) {
          const i = (y * info.width + x) * info.channels;
          expect([...data.subarray(i, i + 3)], `${gravity} at ${x},${y}`).to.deep.equal([...colour]);
        }
      }
    }
  });

  it('gravity=entropy and attention match sharp’s strategies', async () => {
    const original = await wideWithFace();
    for (const strategy of ['entropy', 'attention'] as const) {
      const expected = await sharp(original).resize({ width: 300, height: 300, fit: 'cover', position: strategy }).png().toBuffer();
      for (const bytes of await everyRoute('face', `w=300&h=300&gravity=${strategy}&f=png`)) await expectSamePixels(bytes, expected, 2);
    }
  });

  it('gravity=face keeps the whole face box of an off-centre portrait; center loses it', async () => {
    const faces = img.face.faces;
    expect(faces, 'faces detected at upload').to.have.length(1);
    // The portrait is at x 1200-1712 of 1800: its face box lies in the right third.
    expect(faces[0].x).to.be.above(1200 / 1800);
    for (const bytes of await everyRoute('face', 'w=300&h=300&gravity=face&f=png')) {
      const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      const found = await detectFaces({ data, width: info.width, height: info.height, channels: 4 });
      expect(found.faces, 'a face in the output').to.have.length.greaterThan(0);
      // The upload's face box, mapped into the output (scale 0.5, window centred on the face), lies inside it.
      const scale = 300 / 600;
      const rw = 1800 * scale;
      const left = Math.min(rw - 300, Math.max(0, Math.round((faces[0].x + faces[0].w / 2) * rw - 150)));
      expect(faces[0].x * rw - left).to.be.at.least(0);
      expect((faces[0].x + faces[0].w) * rw - left).to.be.at.most(300);
      const box = found.faces[0].box;
      expect(box.x).to.be.at.least(0);
      expect(box.x + box.width).to.be.at.most(300);
    }
    const centre = await cdn('face', 'w=300&h=300&fit=cover&f=png');
    const { data, info } = await sharp(centre.bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    expect((await detectFaces({ data, width: info.width, height: info.height, channels: 4 })).faces).to.have.length(0);
  });

  it('gravity=focal with fx/fy centres the crop on the point', async () => {
    for (const bytes of await everyRoute('stripes', 'w=200&h=100&gravity=focal&fx=0.5&fy=0.95&f=png')) {
      const { data } = await pixels(bytes);
      expect([...data.subarray(0, 3)]).to.deep.equal([20, 20, 220]);
    }
  });

  it('crop, rot and flip are pixel-exact against sharp doing the same', async () => {
    const original = await noise();
    const cases: [string, () => Promise<Buffer>][] = [
      ['crop=10,20,50,40', () => sharp(original).extract({ left: 10, top: 20, width: 50, height: 40 }).png().toBuffer()],
      ['rot=90', () => sharp(original).rotate(90).png().toBuffer()],
      ['rot=270', () => sharp(original).rotate(270).png().toBuffer()],
      ['flip=h', () => sharp(original).flop().png().toBuffer()],
      ['flip=v', () => sharp(original).flip().png().toBuffer()],
      ['crop=0,0,60,80&rot=90&flip=h', async () => sharp(await sharp(await sharp(original).extract({ left: 0, top: 0, width: 60, height: 80 }).png().toBuffer()).rotate(90).png().toBuffer()).flop().png().toBuffer()],
    ];
    for (const [query, reference] of cases) {
      const expected = await reference();
      await expectSamePixels(await transformA('noise', `${query}&f=png`), expected);
      await expectSamePixels((await imagePath('noise', `${query}&f=png`)).bytes, expected);
      await expectSamePixels((await cdn('noise', `${query}&f=png`)).bytes, expected);
    }
  });

  it('crop outside the image is a 400 in each route’s shape', async () => {
    const a = await request(svc.url(`/transform?src=${encodeURIComponent(img.noise.public_url)}&crop=100,0,50,10`), { key: user.key });
    expect(a.status).to.equal(400);
    expect(a.body.type).to.be.a('string');
    expect(a.body.msg).to.match(/crop/);
    expectDetail(await cdn('noise', 'crop=0,0,121,10'), 400, /crop/);
  });

  it('trim removes a uniform border', async () => {
    for (const bytes of [await transformA('bordered', 'trim=10&f=png'), (await cdn('bordered', 'trim=10&f=png')).bytes, (await imagePath('bordered', 'trim=10&f=png')).bytes]) {
      const { data, info } = await pixels(bytes);
      expect([info.width, info.height]).to.deep.equal([160, 110]);
      expect([...data.subarray(0, 3)]).to.deep.equal([200, 30, 30]);
    }
  });

  it('bg + pad + contain: the padding has the bg colour, the picture stays in the middle', async () => {
    const check = async (bytes: Buffer) => {
      const { data, info } = await pixels(bytes);
      expect([info.width, info.height]).to.deep.equal([120, 120]);
      const at = (x: number, y: number) => [...data.subarray((y * 120 + x) * info.channels, (y * 120 + x) * info.channels + 3)];
      expect(at(3, 3), 'pad').to.deep.equal([0, 255, 0]);
      expect(at(60, 20), 'contain letterbox').to.deep.equal([0, 255, 0]);
      expect(at(60, 60), 'picture').to.deep.equal([200, 30, 30]);
    };
    await check((await cdn('red', 'w=100&h=100&fit=contain&bg=00FF00&pad=10&f=png')).bytes);
    await check((await imagePath('red', 'w=100&h=100&fit=contain&bg=00ff00&pad=10&f=png')).bytes);
    // Set A has no contain; its pad around a 100×50 cover crop of the same red.
    const { data, info } = await pixels(await transformA('red', 'w=100&h=50&bg=00ff00&pad=10&f=png'));
    expect([info.width, info.height]).to.deep.equal([120, 70]);
    expect([...data.subarray(0, 3)]).to.deep.equal([0, 255, 0]);
  });

  it('grayscale makes R = G = B; dpr=2 doubles the size (capped at the original on /cdn)', async () => {
    for (const bytes of [await transformA('green', 'w=100&grayscale=true&f=png'), (await cdn('green', 'w=100&grayscale=true&f=png')).bytes]) {
      const { data, info } = await pixels(bytes);
      for (let i = 0; i < data.length; i += info.channels) expect(data[i]).to.equal(data[i + 1]);
    }
    expect((await sharp(await transformA('green', 'w=100&dpr=2&f=png')).metadata()).width).to.equal(200);
    expect((await sharp((await imagePath('green', 'w=100&dpr=2')).bytes).metadata()).width).to.equal(200);
    expect((await sharp((await cdn('green', 'w=100&dpr=2&f=png')).bytes).metadata()).width).to.equal(200);
    // Keyless: 200 × 4 would be 800, beyond the 300 px original.
    expect((await sharp((await cdn('green', 'w=200&dpr=4&f=png')).bytes).metadata()).width).to.equal(300);
  });

  it('a preset equals its expansion byte for byte; explicit parameters win; unknown presets are refused', async () => {
    const viaPreset = await cdn('stripes', 'preset=thumb');
    const expanded = await cdn('stripes', 'w=120&h=80&fit=cover&gravity=north&f=png');
    expect(viaPreset.status).to.equal(200);
    expect(Buffer.compare(viaPreset.bytes, expanded.bytes)).to.equal(0);
    expect(expanded.headers.get('x-cache')).to.equal('HIT');
    const a = await transformA('stripes', 'preset=thumb');
    expect(Buffer.compare(a, expanded.bytes)).to.equal(0);
    const smaller = await cdn('stripes', 'preset=thumb&w=60');
    expect((await sharp(smaller.bytes).metadata()).width).to.equal(60);
    const unknown = await cdn('stripes', 'preset=nope');
    expect(unknown.status).to.equal(422);
    expect(unknown.body.detail[0].loc).to.deep.equal(['query', 'preset']);
  });

  it('a watermark changes only its region', async () => {
    const plain = await pixels((await cdn('grey', 'f=png')).bytes);
    const marked = await cdn('grey', `f=png&wm=${img.mark.imageId}&wm_gravity=southeast&wm_opacity=100&wm_scale=0.25`);
    expect(marked.status, marked.bytes.toString()).to.equal(200);
    const { data, info } = await pixels(marked.bytes);
    // 0.25 × 400 = a 100×100 mark in the bottom-right corner.
    for (let y = 0; y < info.height; y++) {
      for (let x = 0; x < info.width; x++) {
        const i = (y * info.width + x) * info.channels;
        const inside = x >= 300 && y >= 200;
        const px = [...data.subarray(i, i + 3)];
        if (inside) expect(px, `${x},${y}`).to.deep.equal([0, 0, 255]);
        else expect(px, `${x},${y}`).to.deep.equal([...plain.data.subarray(i, i + 3)]);
      }
    }
    const viaA = await pixels(await transformA('grey', `w=400&h=300&f=png&wm=${img.mark.imageId}&wm_opacity=100`));
    expect([...viaA.data.subarray((299 * 400 + 399) * 3, (299 * 400 + 399) * 3 + 3)]).to.deep.equal([0, 0, 255]);
    // Another owner's image cannot be a watermark.
    const other = await svc.createUser();
    const theirs = await cdnUpload(svc, other.key, await noise(30, 20), { filename: 'n.png', mime: 'image/png' });
    const refused = await cdn('grey', `wm=${theirs.imageId}`);
    expect(refused.status).to.equal(422);
  });

  it('an animated WebP keeps its frame count when the output is WebP; too many frames are refused', async () => {
    for (const bytes of [(await cdn('anim', 'w=30&f=webp')).bytes, await transformA('anim', 'w=30&f=webp')]) {
      const meta = await sharp(bytes).metadata();
      expect(meta.pages).to.equal(3);
      expect(meta.width).to.equal(30);
    }
    expect((await sharp((await cdn('anim', 'w=30&f=png')).bytes).metadata()).pages ?? 1).to.equal(1);
    const six = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => sharp({ create: { width: 20, height: 20, channels: 3, background: { r: i * 40, g: 0, b: 0 } } }).png().toBuffer()));
    const res = await upload(svc.baseUrl, { path: '/cdn/upload', key: user.key, bytes: await sharp(six, { join: { animated: true } }).webp().toBuffer(), filename: 'six.webp', mime: 'image/webp' });
    expect(res.status).to.equal(415);
  });

  it('placeholders decode to the right aspect and colour, in upload, list and srcset answers', async () => {
    const up = img.green;
    const hash = Buffer.from(up.thumbhash, 'base64');
    expect(thumbHashToApproximateAspectRatio(hash)).to.be.closeTo(2, 0.25);
    const avg = thumbHashToAverageRGBA(hash);
    expect(avg.r * 255).to.be.closeTo(40, 12);
    expect(avg.g * 255).to.be.closeTo(160, 12);
    expect(avg.b * 255).to.be.closeTo(90, 12);
    const dominant = parseInt(up.dominant_color.slice(1), 16);
    expect([(dominant >> 16) & 255, (dominant >> 8) & 255, dominant & 255].map((v, i) => Math.abs(v - [40, 160, 90][i]))).to.satisfy((d: number[]) => d.every((v) => v <= 16));
    expect(up.lqip).to.match(/^data:image\/webp;base64,/);
    expect(up.lqip.length).to.be.at.most(1024);
    const lqip = await sharp(Buffer.from(up.lqip.split(',')[1], 'base64')).metadata();
    expect(lqip.width! / lqip.height!).to.be.closeTo(2, 0.15);
    const list = await request(svc.url('/cdn/images?limit=100'), { key: user.key });
    const listed = list.body.images.find((i: { imageId: string }) => i.imageId === up.imageId);
    expect(listed).to.include({ version: up.version, thumbhash: up.thumbhash, dominant_color: up.dominant_color, lqip: up.lqip });
    expect(listed.faces).to.deep.equal([]);
    const srcset = await request(svc.url(`/generate/srcset?src=${encodeURIComponent(up.public_url)}&w=100`), { key: user.key });
    expect(srcset.body).to.include({ version: up.version, thumbhash: up.thumbhash, lqip: up.lqip });
  });

  it('validation: bad values get each route’s 422 shape', async () => {
    for (const q of ['gravity=middle', 'rot=45', 'flip=x', 'bg=zzzzzz', 'pad=1001', 'dpr=5', 'fx=2', 'crop=1,2,3', 'wm=nothex', 'wm_scale=0.01', 'trim=0']) {
      const b = await cdn('noise', q);
      expect(b.status, q).to.equal(422);
      expect(b.body.detail[0].loc[0]).to.equal('query');
      const a = await request(svc.url(`/transform?src=${encodeURIComponent(img.noise.public_url)}&${q}`), { key: user.key });
      expect(a.status, q).to.equal(422);
      expect(a.body.status_code).to.equal(422);
    }
  });

  it('client hints on /cdn/{id}: Width without w, DPR without dpr; Accept-CH and Vary', async () => {
    const byWidth = await cdn('green', 'f=png', { 'Sec-CH-Width': '150' });
    expect(byWidth.headers.get('accept-ch')).to.match(/Sec-CH-DPR/);
    expect(byWidth.headers.get('vary')).to.match(/Sec-CH-Width/);
    expect((await sharp(byWidth.bytes).metadata()).width).to.equal(200); // rounded up to 100s
    const byDpr = await cdn('green', 'w=100&f=png', { 'Sec-CH-DPR': '2' });
    expect(byDpr.headers.get('vary')).to.match(/Sec-CH-DPR/);
    expect((await sharp(byDpr.bytes).metadata()).width).to.equal(200);
    const explicit = await cdn('green', 'w=100&dpr=1&f=png', { 'Sec-CH-DPR': '3' });
    expect((await sharp(explicit.bytes).metadata()).width).to.equal(100);
    expect(explicit.headers.get('vary') ?? '').not.to.match(/Sec-CH/);
  });

  it('versioned URLs: only they are immutable; a replacement changes every handed-out URL and no old one serves new bytes', async () => {
    const first = await cdnUpload(svc, user.key, await stripes(), { filename: 'swap.png', mime: 'image/png' }) as Uploaded;
    const srcsetOf = async () => (await request(svc.url(`/generate/srcset?src=${encodeURIComponent(first.public_url)}&w=50,100&f=png`), { key: user.key })).body;
    const before = await srcsetOf();
    expect(before.default).to.include(`v=${first.version}`);
    const signed = await request(before.default);
    expect(signed.status).to.equal(200);
    expect(signed.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    const versioned = await request(svc.url(`/cdn/${first.imageId}?w=50&f=png&v=${first.version}`));
    expect(versioned.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    const unversioned = await request(svc.url(`/cdn/${first.imageId}?w=50&f=png`));
    expect(unversioned.headers.get('cache-control')).to.match(/^public, max-age=60, must-revalidate$/);
    const etag = unversioned.headers.get('etag')!;
    expect((await request(svc.url(`/cdn/${first.imageId}?w=50&f=png`), { headers: { 'If-None-Match': etag } })).status).to.equal(304);
    const original = await request(first.public_url);
    expect(original.headers.get('cache-control')).to.match(/max-age=60, must-revalidate/);
    const jsonA = await request(svc.url(`/transform?src=${encodeURIComponent(first.public_url)}&w=50&f=png`), { key: user.key });

    // Replace: same public id, other pixels.
    const second = await cdnUpload(svc, user.key, await noise(100, 200), { filename: 'swap.png', mime: 'image/png' }) as Uploaded;
    expect(second.imageId).to.equal(first.imageId);
    expect(second.version).not.to.equal(first.version);
    const after = await srcsetOf();
    expect(after.srcset).not.to.equal(before.srcset);
    expect(after.default).to.include(`v=${second.version}`);
    expect((await request(before.default)).status, 'old signed srcset URL').to.equal(404);
    expect((await request(svc.url(`/cdn/${first.imageId}?w=50&f=png&v=${first.version}`))).status, 'old versioned /cdn URL').to.equal(404);
    expect((await request(jsonA.body.public_url)).status, 'old derivative file').to.equal(404);
    const jsonB = await request(svc.url(`/transform?src=${encodeURIComponent(first.public_url)}&w=50&f=png`), { key: user.key });
    expect(jsonB.body.public_url).not.to.equal(jsonA.body.public_url);
    // The unversioned URL now answers the new picture with a new ETag (revalidation sees the change).
    const fresh = await request(svc.url(`/cdn/${first.imageId}?w=50&f=png`), { headers: { 'If-None-Match': etag } });
    expect(fresh.status).to.equal(200);
    expect(Buffer.compare(fresh.bytes, unversioned.bytes)).not.to.equal(0);
    const list = await request(svc.url('/cdn/images?limit=100'), { key: user.key });
    expect(list.body.images.find((i: { imageId: string }) => i.imageId === first.imageId).version).to.equal(second.version);
  });
});

describe('PUBLIC_PRESETS_ONLY', function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: Credential;
  let imageId = '';

  before(async () => {
    svc = await TestService.start({ env: { PUBLIC_PRESETS_ONLY: 'true', PRESETS: JSON.stringify({ small: { w: 40 } }) } });
    user = await svc.createUser();
    imageId = (await cdnUpload(svc, user.key, await noise(), { filename: 'n.png', mime: 'image/png' })).imageId;
  });
  after(async () => svc?.stop());

  it('keyless /cdn/{id} takes preset, f and v only; keyed routes keep every parameter', async () => {
    const ok = await request(svc.url(`/cdn/${imageId}?preset=small&f=png`));
    expect(ok.status).to.equal(200);
    expect((await sharp(ok.bytes).metadata()).width).to.equal(40);
    expectDetail(await request(svc.url(`/cdn/${imageId}?w=41`)), 403, /presets only/);
    expectDetail(await request(svc.url(`/cdn/${imageId}?preset=small&blur=3`)), 403, /blur/);
    const list = await request(svc.url('/cdn/images'), { key: user.key });
    const keyed = await request(svc.url(`/image/x?src=${encodeURIComponent(list.body.images[0].public_url)}&w=41`), { key: user.key });
    expect(keyed.status).to.equal(200);
  });

  it('a bad PRESETS value stops the start with a ConfigError naming PRESETS', async () => {
    const { PresetBook } = await import('../../src/web/services/presets.js');
    expect(() => new PresetBook({ bad: { w: 0 } })).to.throw(/PRESETS/);
    expect(() => new PresetBook({ bad: { nope: 1 } })).to.throw(/PRESETS/);
  });
});
