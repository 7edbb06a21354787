// Mask refinement (src/passport/background.ts): the guided filter's shortcut — pixels whose
// tightened value is known from the half-resolution coefficients are not evaluated — gives the
// same alpha, bit for bit, as evaluating every pixel, on a real portrait mask and on noise.
import { expect } from 'chai';
import path from 'node:path';
import sharp from 'sharp';
import { refineMask } from '../../src/passport/background.js';
import { segmentPerson } from '../../src/vision/segmenter.js';
import { CORPUS } from '../fixtures/images.js';
import { type RawImage } from '../../src/vision/raw-image.js';

async function portrait(size: number): Promise<{ rgb: RawImage; prob: Float32Array }> {
  const { data, info } = await sharp(path.join(CORPUS, 'faces/02_grace_hopper.jpg'))
    .resize(size, size, { fit: 'cover' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const rgba = await sharp(data, { raw: info }).ensureAlpha().raw().toBuffer();
  const prob = await segmentPerson({ data: new Uint8Array(rgba), width: size, height: size, channels: 4 });
  return { rgb: { data: new Uint8Array(data), width: size, height: size, channels: 3 }, prob };
}

function bytes(a: Float32Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

describe('mask refinement', function () {
  this.timeout(60_000);

  it('gives the same alpha with and without skipping the decided cells (real portrait mask)', async () => {
    const { rgb, prob } = await portrait(600);
    const fast = refineMask(rgb, prob);
    const full = refineMask(rgb, prob, undefined, { skipDecided: false });
    expect(bytes(fast).equals(bytes(full))).to.equal(true);
    // The case is not trivial: person, background and a soft edge are all there.
    const zero = fast.filter((a) => a === 0).length;
    const one = fast.filter((a) => a === 1).length;
    const soft = fast.length - zero - one;
    expect(zero / fast.length).to.be.above(0.1);
    expect(one / fast.length).to.be.above(0.1);
    expect(soft).to.be.above(1000);
  });

  it('gives the same alpha on noise, with part of the photo outside the source', async () => {
    const w = 320;
    const h = 240;
    let seed = 12345;
    const rnd = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const rgb: RawImage = { data: new Uint8Array(w * h * 3).map(() => Math.floor(rnd() * 256)), width: w, height: h, channels: 3 };
    // Blocks of certain person / certain background with noisy probabilities in between.
    const prob = new Float32Array(w * h).map((_, i) => {
      const x = i % w;
      const y = Math.floor(i / w);
      const block = ((x >> 5) + (y >> 5)) % 3;
      return block === 0 ? 0 : block === 1 ? 1 : rnd();
    });
    const inside = new Uint8Array(w * h).map((_, i) => (i % w < w - 20 ? 1 : 0));
    const fast = refineMask(rgb, prob, inside);
    const full = refineMask(rgb, prob, inside, { skipDecided: false });
    expect(bytes(fast).equals(bytes(full))).to.equal(true);
    expect(fast.some((a, i) => !inside[i] && a !== 0)).to.equal(false);
  });
});
