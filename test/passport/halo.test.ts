// The halo measure as a blend: on a composite of known colours, and on a side-lit portrait on a
// dark background (made here: Grace Hopper cut out by the segmenter, put on a dark grey and lit
// from one side) whose output keeps a grey smear of the old background beside the head.
import { expect } from 'chai';
import sharp from 'sharp';
import { HALO, measureHalo } from '../../src/passport/halo.js';
import { processPassportPhoto } from '../../src/passport/process-passport-photo.js';
import { segmentPerson } from '../../src/vision/segmenter.js';
import { PORTRAITS, processed, readCorpus } from './helpers.js';

/** The portrait on a dark grey background (the segmenter's soft mask), lit from the left: x 1.25 to x 0.5 across. */
export async function sideLit(input: Buffer): Promise<Buffer> {
  const { data, info } = await sharp(input).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const { width: w, height: h } = info;
  const prob = await segmentPerson({ data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: w, height: h, channels: 4 });
  const bg = [34, 36, 42];
  const out = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const light = 1.25 - (0.75 * x) / w;
      for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.max(0, Math.min(255, Math.round((data[i * 4 + c] * prob[i] + bg[c] * (1 - prob[i])) * light)));
    }
  }
  return sharp(out, { raw: { width: w, height: h, channels: 3 } }).jpeg({ quality: 92 }).toBuffer();
}

describe('passport halo (old background left at the edge, as a blend)', function () {
  this.timeout(300_000);

  it('counts a rim and a half-blended edge of the old background, not a clean edge or a person / new-background mix', () => {
    // A skin-coloured disc on a green background, composited on white: with the exact alpha, with
    // an alpha dilated by 8 px (a rim), and with the 8 px beyond the disc half green, half white.
    const w = 200;
    const h = 200;
    const src = { data: new Uint8Array(w * h * 3), width: w, height: h, channels: 3 as const };
    const exact = new Float32Array(w * h);
    const dilated = new Float32Array(w * h);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const i = y * w + x;
        const r = Math.hypot(x - 100, y - 110);
        src.data.set(r < 60 ? [210, 160, 140] : [40, 160, 60], i * 3);
        exact[i] = r < 60 ? 1 : 0;
        dilated[i] = r < 68 ? 1 : 0;
      }
    }
    const composite = (alpha: Float32Array, share = 1) => {
      const out = new Uint8Array(w * h * 3);
      for (let i = 0; i < w * h; i++) {
        const a = exact[i] ? 1 : alpha[i] * share;
        for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(src.data[i * 3 + c] * a + 255 * (1 - a));
      }
      return { data: out, width: w, height: h, channels: 3 as const };
    };
    const inside = new Uint8Array(w * h).fill(1);
    const clean = measureHalo(src, composite(exact), exact, inside, [255, 255, 255]);
    expect(clean.share).to.be.below(0.01);
    expect(clean.widestRun).to.be.at.most(1);
    const rim = measureHalo(src, composite(dilated), dilated, inside, [255, 255, 255]);
    expect(rim.share).to.be.above(0.3);
    expect(rim.widestRun).to.be.within(6, 10);
    const halfBlended = measureHalo(src, composite(dilated, 0.6), dilated, inside, [255, 255, 255]);
    expect(halfBlended.share, 'a 60 % blend of the old background counts').to.be.above(0.3);
    const faint = measureHalo(src, composite(dilated, 0.3), dilated, inside, [255, 255, 255]);
    expect(faint.share, `a 30 % blend is below the level ${HALO.BLEND_LEVEL}`).to.be.below(0.01);
  });

  it('the side-lit portrait on a dark background fails halo with a wide run; the portrait as stored passes', async () => {
    const hopper = PORTRAITS[1];
    const r = await processPassportPhoto(await sideLit(readCorpus(hopper.file)), { country: 'usa' });
    const halo = r.checks.find((c) => c.name === 'halo')!;
    expect(halo.passed, String(halo.value)).to.equal(false);
    expect(r.measurements.halo_share!).to.be.above(HALO.MAX_SHARE);
    expect(r.measurements.halo_widest_run_px!).to.be.above(8);
    const stored = await processed(hopper, { country: 'usa' });
    expect(stored.checks.find((c) => c.name === 'halo')!.passed).to.equal(true);
    expect(stored.measurements.halo_share!).to.be.below(r.measurements.halo_share! / 2);
  });
});
