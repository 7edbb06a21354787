// Mask refinement (src/passport/background.ts): the guided filter's shortcut — pixels whose
// tightened value is known from the half-resolution coefficients are not evaluated — gives the
// same alpha, bit for bit, as evaluating every pixel, on a real portrait mask and on noise; the
// colour line lowers a soft zone wider than its window without leaving a line in it.
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

  it('eases the colour line in where a soft zone is wider than its window: no step in alpha', () => {
    // A grey ring 12 px wide (a suit's neck ring) between a light grey backdrop and a black collar,
    // the segmenter unsure of it (p 0.6): alpha ~0.64 across it, and its colour reads as a 48 % mix
    // of the black and the backdrop. Only the ring's middle has both sides within the colour line's
    // window (12 px at 600 px); lowered there at once, alpha would step 0.14 on either side of it (a line
    // of lighter pixels; with noise, dots).
    const w = 200;
    const h = 600;
    const rgb: RawImage = { data: new Uint8Array(w * h * 3), width: w, height: h, channels: 3 };
    const prob = new Float32Array(w * h);
    for (let i = 0; i < w * h; i++) {
      const x = i % w;
      rgb.data.set(x < 80 ? [200, 200, 205] : x < 92 ? [110, 100, 120] : [12, 12, 14], i * 3);
      prob[i] = x < 80 ? 0 : x < 92 ? 0.6 : 1;
    }
    const row = refineMask(rgb, prob).subarray(300 * w, 301 * w);
    expect(Math.min(...row.subarray(82, 90)), 'lowered towards the mix').to.be.below(0.5);
    let step = 0;
    for (let x = 83; x <= 90; x++) step = Math.max(step, Math.abs(row[x] - row[x - 1]));
    expect(step, 'largest step between neighbours within the ring').to.be.at.most(0.08);
  });
});
