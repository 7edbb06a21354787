// The WebAssembly pixel kernels (src/passport/kernels) and the TypeScript loops beside them, against
// answers known without them: a brute-force box mean, flat and linear images, composites of known
// colours, hand-counted histograms; with tolerances where float32 rounding enters.
import { expect } from 'chai';
import { boxMean, compositeOnBackground, estimateForeground } from '../../../src/passport/background.js';
import { ENHANCE } from '../../../src/passport/enhance.js';
import { sharpenLuma } from '../../../src/vision/sharpen.js';
import { measureHalo } from '../../../src/passport/halo.js';
import { guidedCoefficients, levelStatsInto, tightenInto, type ChannelLuts } from '../../../src/passport/kernels/pixels.js';
import type { RawImage } from '../../../src/vision/raw-image.js';

/** A small deterministic generator (the test must not depend on Math.random's sequence). */
function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The mean over the window clipped to the plane, by its definition. */
function bruteBoxMean(src: Float32Array, w: number, h: number, r: number): Float64Array {
  const out = new Float64Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let sum = 0;
      let count = 0;
      for (let yy = Math.max(0, y - r); yy <= Math.min(h - 1, y + r); yy++) {
        for (let xx = Math.max(0, x - r); xx <= Math.min(w - 1, x + r); xx++) {
          sum += src[yy * w + xx];
          count++;
        }
      }
      out[y * w + x] = sum / count;
    }
  }
  return out;
}

function rgb(w: number, h: number, colour: (x: number, y: number) => readonly number[]): RawImage {
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.set(colour(x, y), (y * w + x) * 3);
  return { data, width: w, height: h, channels: 3 };
}

describe('passport pixel kernels', () => {
  it('boxMean equals the clipped window mean, from 1 x 1 to 67 x 41, radii up to wider than the plane', () => {
    const next = generator(1);
    for (const [w, h] of [[1, 1], [1, 9], [9, 1], [17, 5], [67, 41]] as const) {
      for (const r of [1, 2, 15, 40]) {
        const src = new Float32Array(w * h).map(() => next());
        const got = boxMean(src, w, h, r);
        const want = bruteBoxMean(src, w, h, r);
        for (let i = 0; i < want.length; i++) expect(got[i], `${w}x${h} r${r} at ${i}`).to.be.closeTo(want[i], 1e-5);
      }
    }
  });

  it('boxMean keeps a flat plane flat and spreads an impulse over its window', () => {
    expect([...boxMean(new Float32Array(30 * 20).fill(0.25), 30, 20, 3)].every((v) => Math.abs(v - 0.25) < 1e-6)).to.equal(true);
    const impulse = new Float32Array(21 * 21);
    impulse[10 * 21 + 10] = 1;
    const out = boxMean(impulse, 21, 21, 2);
    expect(out[10 * 21 + 10]).to.be.closeTo(1 / 25, 1e-7);
    expect(out[12 * 21 + 12]).to.be.closeTo(1 / 25, 1e-7);
    expect(out[13 * 21 + 10]).to.be.closeTo(0, 1e-7);
  });

  it('the composite: alpha 0 gives the background, 1 the foreground through the tables, 0.5 the midpoint', () => {
    const fg = rgb(3, 1, () => [100, 200, 50]);
    const invert = [0, 1, 2].map(() => new Uint8Array(256).map((_, v) => 255 - v)) as unknown as ChannelLuts;
    const alpha = new Float32Array([0, 1, 0.5]);
    expect([...compositeOnBackground(fg, alpha, [10, 20, 30]).data]).to.deep.equal([10, 20, 30, 100, 200, 50, 55, 110, 40]);
    expect([...compositeOnBackground(fg, alpha, [10, 20, 30], invert).data.subarray(3, 6)]).to.deep.equal([155, 55, 205]);
    // Alpha slightly outside 0..1 (float rounding upstream) clamps instead of wrapping.
    const over = compositeOnBackground(rgb(2, 1, () => [250, 5, 128]), new Float32Array([1.1, -0.1]), [0, 250, 128]).data;
    expect([...over]).to.deep.equal([255, 0, 128, 0, 255, 128]);
  });

  it("the enhancement's statistics: hand-counted histograms, weights at 0.5, neutral pixels", () => {
    const d = new Uint8Array([10, 20, 30, 100, 104, 98, 250, 250, 250, 200, 120, 60]);
    const min = new Uint32Array(256);
    const max = new Uint32Array(256);
    const stats = new Float64Array(5);
    levelStatsInto(d, 4, null, ENHANCE.WB_MAX_CHROMA, min, max, stats);
    expect([min[10], min[98], min[250], min[60], max[30], max[104], max[250], max[200]]).to.deep.equal([1, 1, 1, 1, 1, 1, 1, 1]);
    // Neutral: chroma below the limit, not clipped (max < 250) nor dark (min > 30): only the grey.
    expect([...stats]).to.deep.equal([4, 1, 100, 104, 98]);
    levelStatsInto(d, 4, new Float32Array([0.5, 0.49, 1, 0]), ENHANCE.WB_MAX_CHROMA, min, max, stats);
    expect(stats[0], 'pixels weighing at least 0.5').to.equal(2);
    expect([min[10], min[98], min[250], min[60]]).to.deep.equal([1, 0, 1, 0]);
  });

  it('the unsharp mask leaves flat areas alone and steepens an edge within its limits, on luma only', () => {
    const flat = rgb(9, 7, () => [120, 130, 140]);
    expect([...sharpenLuma(flat, ENHANCE.SHARPEN).data]).to.deep.equal([...flat.data]);
    const edge = rgb(20, 6, (x) => (x < 10 ? [60, 60, 60] : [180, 180, 180]));
    const out = sharpenLuma(edge, ENHANCE.SHARPEN).data;
    const at = (x: number): number => out[(3 * 20 + x) * 3];
    expect(at(10), 'light side of the edge').to.be.greaterThan(180).and.at.most(180 + ENHANCE.SHARPEN.y2);
    expect(at(9), 'dark side of the edge').to.be.lessThan(60).and.at.least(60 - ENHANCE.SHARPEN.y3);
    expect([at(0), at(19)], 'far from the edge').to.deep.equal([60, 180]);
    const tinted = sharpenLuma(rgb(20, 6, (x) => (x < 10 ? [60, 40, 20] : [180, 160, 140])), ENHANCE.SHARPEN).data;
    const i = (3 * 20 + 10) * 3;
    const change = [tinted[i] - 180, tinted[i + 1] - 160, tinted[i + 2] - 140];
    expect(change[0]).to.be.greaterThan(0);
    expect(change, 'the same change on R, G and B (hue kept)').to.deep.equal([change[0], change[0], change[0]]);
  });

  it('the halo measure: a clean cut-out has none; old background left along the edge is counted', () => {
    const w = 120;
    const h = 200;
    const person = [200, 150, 120];
    const oldBg = [90, 110, 140];
    const white = [255, 255, 255];
    const source = rgb(w, h, (x) => (x < 60 ? person : oldBg));
    const alpha = new Float32Array(w * h).map((_, i) => (i % w < 60 ? 1 : 0));
    const inside = new Uint8Array(w * h).fill(1);
    const clean = measureHalo(source, rgb(w, h, (x) => (x < 60 ? person : white)), alpha, inside, [255, 255, 255]);
    const ringR = Math.max(2, Math.round(0.015 * h));
    expect(clean.share).to.equal(0);
    expect(clean.ringPixels, 'the ring: the person-side columns within its radius of the edge').to.equal(ringR * h);
    // The two person-side columns at the edge still show the old background.
    const rim = measureHalo(source, rgb(w, h, (x) => (x < 58 ? person : x < 60 ? oldBg : white)), alpha, inside, [255, 255, 255]);
    expect(rim.share).to.be.closeTo(2 / ringR, 0.02);
    // The same columns in the new background's colour are no halo.
    expect(measureHalo(source, rgb(w, h, (x) => (x < 58 ? person : white)), alpha, inside, [255, 255, 255]).share).to.equal(0);
  });

  it("the guided filter's coefficients: a mask equal to the guide's red is followed (a ~ 1, b ~ 0); a flat mask gives a = 0", () => {
    const w = 40;
    const h = 30;
    const next = generator(2);
    const I = [0, 1, 2].map(() => new Float32Array(w * h).map(() => next())) as [Float32Array, Float32Array, Float32Array];
    const follow = guidedCoefficients(I, I[0], w, h, 3, 1e-4);
    expect([follow.width, follow.height]).to.deep.equal([20, 15]);
    const mean = (p: Float32Array): number => p.reduce((a, b) => a + b, 0) / p.length;
    expect(mean(follow.planes[0])).to.be.closeTo(1, 0.05);
    expect(Math.abs(mean(follow.planes[1])) + Math.abs(mean(follow.planes[2]))).to.be.lessThan(0.05);
    expect(mean(follow.planes[3])).to.be.closeTo(0, 0.03);
    const flat = guidedCoefficients(I, new Float32Array(w * h).fill(0.7), w, h, 3, 1e-4);
    for (const k of [0, 1, 2]) expect(Math.max(...flat.planes[k].map(Math.abs))).to.be.lessThan(1e-4);
    for (const v of flat.planes[3]) expect(v).to.be.closeTo(0.7, 1e-4);
  });

  it('tightening: smoothstep of the upsampled linear model, 0 outside, the shortcut equal to full evaluation; a higher start where the probability is unsure, from a row on', () => {
    const w = 24;
    const h = 16;
    const lw = 12;
    const lh = 8;
    // q = 0.5 R + 0.2 everywhere; R a ramp across x, so t runs from 0 to 1 across the middle.
    const low = [new Float32Array(lw * lh).fill(0.5), new Float32Array(lw * lh), new Float32Array(lw * lh), new Float32Array(lw * lh).fill(0.2)];
    const R = new Float32Array(w * h).map((_, i) => (i % w) / (w - 1));
    const I = [R, new Float32Array(w * h), new Float32Array(w * h)] as [Float32Array, Float32Array, Float32Array];
    const inside = new Uint8Array(w * h).map((_, i) => (i < w ? 0 : 1));
    // Every other row unsure (0.5 < 0.6): from row 5 on, its ramp starts at 0.4.
    const unsure = { prob: new Float32Array(w * h).map((_, i) => (Math.floor(i / w) % 2 ? 0.5 : 0.9)), fromRow: 5 };
    const ramp = { low: 0.3, high: 0.6, unsureBelow: 0.6, unsureLow: 0.4 };
    let soft = 0;
    let raised = 0;
    for (const [skip, u] of [[true, undefined], [false, undefined], [true, unsure], [false, unsure]] as const) {
      const t = new Float32Array(w * h);
      tightenInto({ planes: low, width: lw, height: lh }, I, w, h, ramp, u, inside, skip, t);
      for (let i = 0; i < w * h; i++) {
        const lo = u && i >= u.fromRow * w && u.prob[i] < ramp.unsureBelow ? ramp.unsureLow : ramp.low;
        const s = Math.min(1, Math.max(0, (0.5 * R[i] + 0.2 - lo) / (ramp.high - lo)));
        expect(t[i], `pixel ${i} skip ${skip} unsure ${!!u}`).to.be.closeTo(inside[i] ? s * s * (3 - 2 * s) : 0, 1e-5);
        if (t[i] > 0 && t[i] < 1) soft++;
        if (lo > ramp.low && inside[i] && t[i] < 1) raised++;
      }
    }
    expect(soft).to.be.greaterThan(200);
    expect(raised).to.be.greaterThan(100);
  });

  it('blur fusion recovers a known foreground colour at a thin soft edge and leaves certain pixels alone', () => {
    const w = 120;
    const h = 300;
    const F = [200, 40, 40];
    const B = [30, 60, 220];
    // Person (F) on the left, background (B) on the right, a soft edge 6 px wide between them (hair-thin at this height).
    const a = (x: number): number => Math.min(1, Math.max(0, (70 - x) / 6));
    const image = rgb(w, h, (x) => [0, 1, 2].map((c) => Math.round(a(x) * F[c] + (1 - a(x)) * B[c])));
    const alpha = new Float32Array(w * h).map((_, i) => a(i % w));
    const out = estimateForeground(image, alpha).data;
    let band = 0;
    for (let i = 0; i < w * h; i++) {
      if (alpha[i] >= 0.999 || alpha[i] === 0) {
        if (out[i * 3] !== image.data[i * 3] || out[i * 3 + 2] !== image.data[i * 3 + 2]) expect.fail(`certain pixel ${i} changed`);
        continue;
      }
      // The mixed colour is 61-309 levels (summed over R, G, B) from F; the estimate a quarter of that at most.
      let error = 0;
      let mixed = 0;
      for (let c = 0; c < 3; c++) {
        error += Math.abs(out[i * 3 + c] - F[c]);
        mixed += Math.abs(image.data[i * 3 + c] - F[c]);
      }
      expect(error, `band pixel ${i}: ${out[i * 3]}, ${out[i * 3 + 1]}, ${out[i * 3 + 2]}`).to.be.at.most(mixed / 4);
      band++;
    }
    expect(band).to.equal(5 * h);
  });
});
