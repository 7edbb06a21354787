// The worker's decoded-source cache: it keeps an original's pixels from its second render on,
// serves them only to renders of exactly that original (a replacement, in place or as a new
// version, is decoded anew), shares one decode among concurrent renders, and stays within its budget. End to end, through a real worker
// process: a replaced original is never rendered from the old one's pixels, and a render served
// from kept pixels has the pixels of a render from the original.
import { expect } from 'chai';
import sharp from 'sharp';
import type { DecodedSource } from '../../src/imaging/transform-param.js';
import { DecodedSourceCache } from '../../workers/decoded-source-cache.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload } from '../web/set-b-helpers.js';

/** Seeded noise, blurred a little (so every resize size gives other pixels). */
function noisyJpeg(seed: number, width = 400, height = 300): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let x = seed;
  for (let i = 0; i < raw.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    raw[i] = (x >>> 16) & 0xff;
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).blur(1).jpeg({ quality: 90 }).toBuffer();
}

const pixelsOf = async (decoded: DecodedSource | undefined) => (await sharp(decoded!.tiff).raw().toBuffer()).toString('base64');
const size = { width: 400, height: 300 };

/** The cache's answer to the second render (the first is only noted). */
async function second(cache: DecodedSourceCache, key: string, version: string, original: Buffer, shrink: number) {
  expect(await cache.lookupFor(key, version, original)(shrink, size), 'first render: the normal way').to.equal(undefined);
  return cache.lookupFor(key, version, original)(shrink, size);
}

describe('decoded-source cache', function () {
  this.timeout(120_000);

  it('serves the kept pixels to the same original only', async () => {
    const cache = new DecodedSourceCache(64 * 1024 * 1024, 40_000_000);
    const [a, b] = [await noisyJpeg(1), await noisyJpeg(2)];
    const first = await second(cache, 'u/images/p.jpg', 'v1', a, 2);
    expect(first).to.not.equal(undefined);
    expect(await cache.lookupFor('u/images/p.jpg', 'v1', Buffer.from(a))(2, size), 'same bytes, another buffer').to.equal(first);
    // Replaced in place (same key and version, other bytes): never the old pixels.
    const inPlace = await second(cache, 'u/images/p.jpg', 'v1', b, 2);
    expect(inPlace).to.not.equal(undefined);
    expect(await pixelsOf(inPlace)).to.equal(await pixelsOf(await second(cache, 'other', 'x', b, 2)));
    expect(await pixelsOf(inPlace)).to.not.equal(await pixelsOf(first));
    // A new version drops every entry of the old one.
    await second(cache, 'u/images/p.jpg', 'v1', b, 1);
    const held = cache.bytes;
    const v2 = await second(cache, 'u/images/p.jpg', 'v2', a, 2);
    expect(v2).to.not.equal(inPlace);
    expect(cache.bytes).to.be.below(held);
    expect(await pixelsOf(v2)).to.equal(await pixelsOf(first));
  });

  it('shares one decode among concurrent renders, and keeps to its budget', async () => {
    const a = await noisyJpeg(3);
    const cache = new DecodedSourceCache(4 * 1024 * 1024, 40_000_000);
    await cache.lookupFor('k', 'v', a)(1, size);
    const [x, y] = await Promise.all([cache.lookupFor('k', 'v', a)(1, size), cache.lookupFor('k', 'v', a)(1, size)]);
    expect(x).to.not.equal(undefined);
    expect(x).to.equal(y);
    for (let i = 0; i < 20; i++) expect(await second(cache, `k${i}`, 'v', a, 1)).to.not.equal(undefined);
    expect(cache.bytes).to.be.at.most(4 * 1024 * 1024);
    expect(cache.bytes).to.be.above(2 * 1024 * 1024);
    // Evicted originals leave no record behind: one per entry held (21 were kept in turn).
    const one = new DecodedSourceCache(4 * 1024 * 1024, 40_000_000);
    await second(one, 'k', 'v', a, 1);
    expect(cache.originals).to.equal(cache.bytes / one.bytes).and.to.be.below(21);
    // An entry over a quarter of the budget is not decoded here (the render goes the normal way).
    const small = new DecodedSourceCache(1024 * 1024, 40_000_000);
    expect(await small.lookupFor('k', 'v', a)(1, size)).to.equal(undefined);
    expect(await small.lookupFor('k', 'v', a)(1, size)).to.equal(undefined);
    // Nor one over the pixel limit.
    const limited = new DecodedSourceCache(64 * 1024 * 1024, 100_000);
    expect(await limited.lookupFor('k', 'v', a)(1, size)).to.equal(undefined);
    expect(await limited.lookupFor('k', 'v', a)(1, size)).to.equal(undefined);
  });

  describe('in a worker process', () => {
    let svc: TestService;
    before(async () => {
      svc = await TestService.start({ env: { DECODED_SOURCE_CACHE_MB: '64' } });
    });
    after(async () => svc?.stop());

    /** The service's PNG of the image at width w, as raw pixels. */
    async function rendered(imageId: string, w: number, key: string) {
      const res = await request(svc.url(`/cdn/${imageId}?w=${w}&f=png`), { key });
      expect(res.status, `w=${w}`).to.equal(200);
      expect(res.headers.get('x-cache'), `w=${w} rendered now`).to.equal('MISS');
      return sharp(res.bytes).raw().toBuffer();
    }
    const resizedLocally = (jpeg: Buffer, w: number) => sharp(jpeg).resize({ width: w }).raw().toBuffer();

    it('renders a replaced original from its new pixels, and kept pixels as the original renders', async () => {
      const user = await svc.createUser();
      const [a, b] = [await noisyJpeg(11), await noisyJpeg(12)];
      const up = await cdnUpload(svc, user.key, a, { filename: 'kept.jpg' });
      // 400 px wide: w ≤ 133 is decoded at 1/2; the second render keeps those pixels, the third renders from them.
      for (const w of [120, 128, 124]) {
        expect((await rendered(up.imageId, w, user.key)).equals(await resizedLocally(a, w)), `w=${w}`).to.equal(true);
      }
      const replaced = await cdnUpload(svc, user.key, b, { filename: 'kept.jpg' });
      expect(replaced.imageId).to.equal(up.imageId);
      for (const w of [112, 128, 124]) {
        const after = await rendered(up.imageId, w, user.key);
        expect(after.equals(await resizedLocally(b, w)), `w=${w} after the replacement`).to.equal(true);
      }
    });
  });
});
