// Edge refinement on two bands at once (src/passport/edge-bands.ts): the top band on the calling
// thread, the bottom one on the edge thread, each with bandMargin rows beyond its half. The joined
// alpha and colours must equal those of the whole photo bit for bit, at every document's output
// size, on a real portrait and on noise; and when the thread is gone, the same from this thread.
import { expect } from 'chai';
import path from 'node:path';
import sharp from 'sharp';
import { bandMargin, closeEdgeThread, refineEdges, refineEdgesWhole, type RefinedEdges } from '../../src/passport/edge-bands.js';
import type { RawImage } from '../../src/passport/image.js';
import { segmentPerson } from '../../src/passport/segmenter.js';
import { PASSPORT_COUNTRIES, PASSPORT_SPECS } from '../../src/passport/specs.js';
import { CORPUS } from '../fixtures/images.js';

interface EdgeInput {
  rgb: RawImage;
  prob: Float32Array;
  inside: Uint8Array;
}

/** Grace Hopper at `width` x `height`, her person mask from the segmenter; a strip on the right came from outside the source. */
async function portrait(width: number, height: number): Promise<EdgeInput> {
  const { data } = await sharp(path.join(CORPUS, 'faces/02_grace_hopper.jpg')).resize(width, height, { fit: 'cover' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const rgba = await sharp(data, { raw: { width, height, channels: 3 } }).ensureAlpha().raw().toBuffer();
  const prob = await segmentPerson({ data: new Uint8Array(rgba), width, height, channels: 4 });
  const inside = new Uint8Array(width * height).map((_, i) => (i % width < width - 12 ? 1 : 0));
  return { rgb: { data: new Uint8Array(data), width, height, channels: 3 }, prob, inside };
}

/** Noise with blocks of certain person, certain background and noisy probability. */
function noise(width: number, height: number): EdgeInput {
  let seed = 987654;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const rgb: RawImage = { data: new Uint8Array(width * height * 3).map(() => Math.floor(rnd() * 256)), width, height, channels: 3 };
  const prob = new Float32Array(width * height).map((_, i) => {
    const block = ((i % width >> 4) + (Math.floor(i / width) >> 4)) % 3;
    return block === 0 ? 0 : block === 1 ? 1 : rnd();
  });
  return { rgb, prob, inside: new Uint8Array(width * height).fill(1) };
}

function sameEdges(a: RefinedEdges, b: RefinedEdges): void {
  expect(a.fg.width).to.equal(b.fg.width);
  expect(a.fg.height).to.equal(b.fg.height);
  expect(Buffer.from(a.alpha.buffer, a.alpha.byteOffset, a.alpha.byteLength).equals(Buffer.from(b.alpha.buffer, b.alpha.byteOffset, b.alpha.byteLength)), 'alpha bit for bit').to.equal(true);
  expect(Buffer.from(a.fg.data).equals(Buffer.from(b.fg.data)), 'colours byte for byte').to.equal(true);
}

describe('edge refinement on two bands (edge-bands.ts)', function () {
  this.timeout(120_000);
  after(() => closeEdgeThread());

  it('equals the whole photo bit for bit at every document size (real portrait, a strip outside the source)', async () => {
    const sizes = new Map(PASSPORT_COUNTRIES.map((c) => [`${PASSPORT_SPECS[c].digital.width}x${PASSPORT_SPECS[c].digital.height}`, PASSPORT_SPECS[c].digital]));
    expect(sizes.size).to.be.at.least(4);
    for (const { width, height } of sizes.values()) {
      const input = await portrait(width, height);
      const whole = refineEdgesWhole(input.rgb, input.prob, input.inside);
      const bands = await refineEdges(input.rgb, input.prob, input.inside);
      sameEdges(bands, whole);
      // Not trivial: the split row crosses the person's soft edge.
      const split = 2 * Math.floor(height / 4);
      const row = whole.alpha.subarray(split * width, (split + 1) * width);
      expect(row.some((a) => a > 0 && a < 1), `${width}x${height}: soft edge on the split row`).to.equal(true);
    }
  });

  it('equals the whole photo on noise (soft edges everywhere); a margin 16 rows smaller would not', async () => {
    const input = noise(600, 600);
    const whole = refineEdgesWhole(input.rgb, input.prob, input.inside);
    sameEdges(await refineEdges(input.rgb, input.prob, input.inside), whole);
    // The margin is what keeps the bands exact: cut with less, the rows next to the split differ.
    const margin = bandMargin(600) - 16;
    const split = 300;
    const w = 600;
    const band = (top: number, bottom: number) =>
      refineEdgesWhole({ data: input.rgb.data.subarray(top * w * 3, bottom * w * 3), width: w, height: bottom - top, channels: 3 }, input.prob.subarray(top * w, bottom * w), input.inside.subarray(top * w, bottom * w), 600);
    const upper = band(0, split + margin);
    const lower = band(split - margin, 600);
    const joined = new Float32Array(w * 600);
    joined.set(upper.alpha.subarray(0, split * w), 0);
    joined.set(lower.alpha.subarray(margin * w), split * w);
    const joinedFg = Buffer.concat([Buffer.from(upper.fg.data.subarray(0, split * w * 3)), Buffer.from(lower.fg.data.subarray(margin * w * 3))]);
    const alphaSame = Buffer.from(joined.buffer).equals(Buffer.from(whole.alpha.buffer, whole.alpha.byteOffset, whole.alpha.byteLength));
    expect(alphaSame && joinedFg.equals(Buffer.from(whole.fg.data)), 'a smaller margin changes the result').to.equal(false);
  });

  it('bandMargin grows with the photo height (the filters radii do)', () => {
    expect(bandMargin(600)).to.equal(62);
    expect(bandMargin(413)).to.be.below(bandMargin(600));
    expect(bandMargin(1200)).to.be.above(bandMargin(600));
    for (const h of [300, 531, 827]) expect(bandMargin(h) % 2, `${h}: even`).to.equal(0);
  });

  it('computes the bottom band on this thread when the edge thread ends mid-call, and a photo too small to split whole', async () => {
    const input = noise(400, 400);
    const whole = refineEdgesWhole(input.rgb, input.prob, input.inside);
    const pending = refineEdges(input.rgb, input.prob, input.inside);
    await closeEdgeThread();
    sameEdges(await pending, whole);
    // The next call starts a thread again.
    sameEdges(await refineEdges(input.rgb, input.prob, input.inside), whole);
    const tiny = noise(64, 64);
    sameEdges(await refineEdges(tiny.rgb, tiny.prob, tiny.inside), refineEdgesWhole(tiny.rgb, tiny.prob, tiny.inside));
  });
});
