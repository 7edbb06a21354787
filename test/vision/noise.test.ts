// The noise estimate against noise of a known sigma, and the median against libvips' own.
import { expect } from 'chai';
import sharp from 'sharp';
import { median3, noiseSigma, noiseSigmas } from '../../src/vision/noise.js';
import type { RawImage } from '../../src/vision/raw-image.js';
import { gaussian } from '../../scripts/lib/portrait-variants.js';

/** A shaded image (a ramp, a disc and a hard edge) with normal noise of `sigma` added to each channel. */
function shaded(sigma: number, seed = 1, side = 300): RawImage {
  const g = gaussian(seed);
  const data = new Uint8Array(side * side * 3);
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const base = 60 + (120 * x) / side + (Math.hypot(x - 150, y - 150) < 60 ? 40 : 0) + (y > 240 ? -30 : 0);
      for (let c = 0; c < 3; c++) data[(y * side + x) * 3 + c] = Math.max(0, Math.min(255, Math.round(base + c * 10 + sigma * g())));
    }
  }
  return { data, width: side, height: side, channels: 3 };
}

describe('vision/noise', () => {
  it('reads the sigma of added noise in each channel (edges and shading do not count)', () => {
    for (const sigma of [2, 5, 12, 25]) {
      const s = noiseSigmas(shaded(sigma))!;
      for (const v of s) expect(v, `sigma ${sigma}`).to.be.within(sigma * 0.9 - 0.3, sigma * 1.1 + 0.3);
    }
    expect(noiseSigma(shaded(0)), 'no noise').to.be.below(0.3);
  });

  it('reads only the pixels it is given', () => {
    const img = shaded(0);
    const where = new Uint8Array(300 * 300);
    const g = gaussian(3);
    for (let i = 0; i < 300 * 150; i++) {
      where[i] = 1;
      for (let c = 0; c < 3; c++) img.data[i * 3 + c] = Math.max(0, Math.min(255, Math.round(img.data[i * 3 + c] + 8 * g())));
    }
    expect(noiseSigma(img, { left: 0, top: 0, right: 300, bottom: 150 })).to.be.within(7, 9);
    expect(noiseSigma(img, { left: 0, top: 160, right: 300, bottom: 300 })).to.be.below(0.3);
    expect(noiseSigma(img, undefined, where)).to.be.within(7, 9);
    expect(noiseSigmas(img, { left: 0, top: 0, right: 5, bottom: 5 }), 'too few pixels').to.equal(null);
  });

  it('the median equals libvips median(3) inside the edge row, and reduces noise', async () => {
    const img = shaded(12, 2, 200);
    const ours = median3(img);
    const vips = await sharp(img.data, { raw: { width: 200, height: 200, channels: 3 } }).median(3).raw().toBuffer();
    let differ = 0;
    for (let y = 1; y < 199; y++) for (let x = 3; x < 597; x++) if (ours.data[y * 600 + x] !== vips[y * 600 + x]) differ++;
    expect(differ).to.equal(0);
    expect(noiseSigma(ours)).to.be.below(0.45 * noiseSigma(img));
    expect(noiseSigma(median3(img, 2))).to.be.below(noiseSigma(ours));
  });
});
