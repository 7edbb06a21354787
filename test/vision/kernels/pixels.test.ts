// The WebAssembly pixel kernels (src/passport/wasm) against the JavaScript loops they replaced
// (reference-js.ts): equal bit for bit on random pixels, at odd sizes, with maps that turn, enlarge,
// reduce and reach outside the source, and windows wider than the plane. The kernels are called
// through the module's public functions (image.ts, halo.ts' table through its view).
import { expect } from 'chai';
import { compositeOnBackground, estimateForeground, refinementRadii, upsampleTaps } from '../../../src/passport/background.js';
import { ENHANCE, IDENTITY_LUTS, sharpenLuma } from '../../../src/passport/enhance.js';
import { measureHalo } from '../../../src/passport/halo.js';
import { guidedCoefficients, levelStatsInto, tightenInto } from '../../../src/vision/kernels/pixels.js';
import * as reference from './reference-js.js';
import { type ChannelLuts } from '../../../src/vision/kernels/kernel-types.js';
import { boxMean, sourceRowsFor, warpRgbaBilinear, warpRgbBicubicRows } from '../../../src/vision/warp.js';
import { type AffineMap } from '../../../src/vision/raw-image.js';

/** A small deterministic generator (the test must not depend on Math.random's sequence). */
function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function bytes(n: number, next: () => number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(next() * 256);
  return out;
}

/** A map turned by `deg`, sampling `step` source pixels per output pixel, from (ox, oy). */
function turned(deg: number, step: number, ox: number, oy: number): AffineMap {
  const a = (deg * Math.PI) / 180;
  return { ox, oy, dux: step * Math.cos(a), duy: step * Math.sin(a), dvx: -step * Math.sin(a), dvy: step * Math.cos(a) };
}

function expectSameBytes(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  expect(actual.length, `${what}: length`).to.equal(expected.length);
  for (let i = 0; i < expected.length; i++) {
    if (!Object.is(actual[i], expected[i])) expect.fail(`${what}: first difference at ${i}: ${actual[i]} instead of ${expected[i]}`);
  }
}

describe('passport pixel kernels (WebAssembly) equal the JavaScript they replaced', () => {
  it('boxMean: planes from 1 x 1 to 301 x 97, radii from 1 to wider than the plane', () => {
    const next = generator(1);
    const sizes: Array<[number, number]> = [[1, 1], [1, 9], [9, 1], [2, 3], [17, 5], [64, 64], [301, 97], [300, 362]];
    let checked = 0;
    for (const [w, h] of sizes) {
      for (const r of [1, 2, 4, 15, 40]) {
        const src = new Float32Array(w * h);
        for (let i = 0; i < src.length; i++) src[i] = next() * (i % 7 === 0 ? 1e-6 : 1);
        expectSameBytes(boxMean(src, w, h, r), reference.boxMean(src, w, h, r), `${w}x${h} r${r}`);
        checked++;
      }
    }
    expect(checked).to.equal(40);
  });

  it('the bicubic render: turned, enlarged and reduced maps, partly outside the source, from a band of rows', () => {
    const next = generator(2);
    const sw = 211;
    const sh = 157;
    const source = bytes(sw * sh * 3, next);
    const fill = [255, 250, 240] as const;
    const maps = [turned(0, 1, 0, 0), turned(3, 1.07, 20, -4), turned(-8, 0.6, -15, 30), turned(45, 1.4, 100, -60), turned(180, 1, sw, sh), turned(1e-9, 2.5, 0.5, 0.5)];
    let insidePixels = 0;
    let fillPixels = 0;
    for (const map of maps) {
      const width = 173;
      for (const [v0, v1] of [[0, 131], [40, 131], [0, 1]]) {
        const out = new Uint8Array(width * (v1 - v0) * 3);
        const inside = new Uint8Array(width * (v1 - v0));
        reference.bicubicInto(source, sw, sh, 0, map, width, v0, v1, fill, out, inside);
        const got = warpRgbBicubicRows({ image: { data: source, width: sw, height: sh, channels: 3 }, top: 0, fullHeight: sh }, map, width, v0, v1, fill);
        expectSameBytes(got.image.data, out, `map ${JSON.stringify(map)} rows ${v0}-${v1}`);
        expectSameBytes(got.inside, inside, 'inside');
        insidePixels += inside.reduce((a, b) => a + b, 0);
        fillPixels += inside.length - inside.reduce((a, b) => a + b, 0);
      }
      // Only the source rows a band reads (sourceRowsFor, as the edge thread gets them): the same pixels.
      const { top, bottom } = sourceRowsFor(map, width, 60, 90, sh);
      const rows = source.subarray(top * sw * 3, bottom * sw * 3);
      const out = new Uint8Array(width * 30 * 3);
      const inside = new Uint8Array(width * 30);
      reference.bicubicInto(source, sw, sh, 0, map, width, 60, 90, fill, out, inside);
      const got = warpRgbBicubicRows({ image: { data: rows, width: sw, height: bottom - top, channels: 3 }, top, fullHeight: sh }, map, width, 60, 90, fill);
      expectSameBytes(got.image.data, out, 'band of source rows');
    }
    // Both branches were exercised: pixels from the source and filled ones.
    expect(insidePixels).to.be.greaterThan(10_000);
    expect(fillPixels).to.be.greaterThan(10_000);
  });

  it('the bilinear RGBA warp of the detector crops', () => {
    const next = generator(3);
    const sw = 150;
    const sh = 101;
    const src = { data: bytes(sw * sh * 3, next), width: sw, height: sh, channels: 3 as const };
    for (const map of [turned(0, 1, 0, 0), turned(4, 1.3, -10, 5), turned(-4, 0.7, 40, 20), turned(90, 1, sw + 3, -2)]) {
      const expected = new Uint8Array(192 * 160 * 4);
      reference.bilinearRgbaInto(src, map, 192, 160, [255, 255, 255], expected);
      expectSameBytes(warpRgbaBilinear(src, map, 192, 160, [255, 255, 255]).data, expected, `map ${JSON.stringify(map)}`);
    }
  });

  it("the halo measure: its summed-area tables and ring counts, through identity and enhancement tables", () => {
    const next = generator(4);
    const w = 123;
    const h = 77;
    const n = w * h;
    // The old background grey-blue; the output mostly the new white, with pixels like the old
    // background, like the person and anything, so that every branch of the count is taken.
    const source = { data: new Uint8Array(n * 3).map((_, i) => [90, 110, 140][i % 3] + Math.floor(next() * 20)), width: w, height: h, channels: 3 as const };
    const output = { data: new Uint8Array(n * 3), width: w, height: h, channels: 3 as const };
    for (let i = 0; i < n; i++) {
      const pick = next();
      const colour = pick < 0.3 ? [255, 255, 255] : pick < 0.6 ? [95, 115, 150] : pick < 0.8 ? [200, 150, 120] : [next() * 255, next() * 255, next() * 255];
      for (let c = 0; c < 3; c++) output.data[i * 3 + c] = Math.floor(colour[c]);
    }
    const alpha = new Float32Array(n);
    // A person on the left half (alpha 1), background on the right, a soft band between, and
    // values at the thresholds (0.05, 0.5, 0.98).
    const edges = [0, 0.05, Math.fround(0.05), 0.5, 0.98, Math.fround(0.98), 1];
    for (let i = 0; i < n; i++) {
      const x = i % w;
      alpha[i] = i % 11 === 0 ? edges[i % edges.length] : x < 50 ? 1 : x > 70 ? 0 : next();
    }
    const inside = new Uint8Array(n).map(() => (next() < 0.95 ? 1 : 0));
    const gamma: ChannelLuts = [0, 1, 2].map((c) => new Uint8Array(256).map((_, v) => Math.round(255 * (v / 255) ** (0.8 + 0.1 * c)))) as unknown as ChannelLuts;
    for (const luts of [IDENTITY_LUTS, gamma]) {
      const table = reference.summedAreaTables(source, luts, output, alpha, inside);
      const want = new Int32Array(2);
      reference.countRing(table, output, alpha, inside, [255, 255, 255], want);
      const got = measureHalo(source, output, alpha, inside, [255, 255, 255], luts);
      expect(got.ringPixels).to.equal(want[0]);
      expect(got.share).to.equal(want[1] / want[0]);
      expect(want[0], 'ring pixels').to.be.greaterThan(500);
      expect(want[1], 'halo pixels').to.be.greaterThan(50);
    }
  });

  it('the unsharp mask on luma: photos from 1 x 1 to 257 x 131, flat and detailed', () => {
    const next = generator(5);
    for (const [w, h] of [[1, 1], [2, 5], [4, 4], [5, 3], [257, 131]] as const) {
      for (const flat of [false, true]) {
        const img = { data: flat ? new Uint8Array(w * h * 3).fill(200) : bytes(w * h * 3, next), width: w, height: h, channels: 3 as const };
        expectSameBytes(sharpenLuma(img).data, reference.sharpenLuma(img).data, `${w}x${h}${flat ? ' flat' : ''}`);
      }
    }
  });

  it('the composite through the enhancement tables, alpha from 0 to 1 and beyond', () => {
    const next = generator(6);
    const n = 5000;
    const fg = { data: bytes(n * 3, next), width: 100, height: 50, channels: 3 as const };
    const alpha = new Float32Array(n).map((_, i) => (i % 10 === 0 ? [0, 1, 0.5, -0.01, 1.01][i % 5] : next()));
    const gamma: ChannelLuts = [0, 1, 2].map((c) => new Uint8Array(256).map((_, v) => 255 - ((v * (c + 3)) % 256))) as unknown as ChannelLuts;
    for (const luts of [IDENTITY_LUTS, gamma]) {
      const expected = new Uint8Array(n * 3);
      reference.blendInto(fg.data, alpha, [12, 250, 128], luts[0], luts[1], luts[2], new Uint8ClampedArray(expected.buffer));
      expectSameBytes(compositeOnBackground(fg, alpha, [12, 250, 128], luts).data, expected, 'composite');
    }
  });

  it("the enhancement's statistics, with and without weights", () => {
    const next = generator(7);
    const n = 20_000;
    const d = bytes(n * 3, next);
    // Near-neutral pixels too (the white balance counts them).
    for (let i = 0; i < n; i += 3) d[3 * i + 1] = d[3 * i + 2] = d[3 * i];
    const weight = new Float32Array(n).map((_, i) => (i % 7 === 0 ? 0.5 : next()));
    for (const w of [null, weight]) {
      const got = { min: new Uint32Array(256), max: new Uint32Array(256), stats: new Float64Array(5) };
      const want = { min: new Uint32Array(256), max: new Uint32Array(256), stats: new Float64Array(5) };
      levelStatsInto(d, n, w, ENHANCE.WB_MAX_CHROMA, got.min, got.max, got.stats);
      reference.levelStats(d, n, w, want.min, want.max, want.stats);
      expectSameBytes(got.min, want.min, 'min histogram');
      expectSameBytes(got.max, want.max, 'max histogram');
      expectSameBytes(got.stats, want.stats, 'stats');
      expect(got.stats[1]).to.be.greaterThan(1000);
    }
  });

  it("the guided filter's tightening at the soft edge, with and without the decided-cell shortcut", () => {
    const next = generator(8);
    for (const [w, h] of [[2, 2], [7, 5], [241, 180]] as const) {
      const lw = Math.ceil(w / 2);
      const lh = Math.ceil(h / 2);
      // Coefficients: most cells far below or above the ramp (decided), some near it.
      const low = [0, 1, 2, 3].map((p) => new Float32Array(lw * lh).map((_, i) => {
        const kind = (i * 7 + p) % 5;
        return p < 3 ? (next() - 0.5) * (kind === 0 ? 2 : 0.05) : kind < 2 ? -1 + next() * 0.1 : kind < 4 ? 1.5 + next() * 0.1 : next();
      }));
      const I = [0, 1, 2].map(() => new Float32Array(w * h).map(() => Math.fround(next()))) as [Float32Array, Float32Array, Float32Array];
      const inside = new Uint8Array(w * h).map(() => (next() < 0.9 ? 1 : 0));
      for (const skip of [true, false]) {
        for (const ins of [inside, undefined]) {
          const want = reference.combineTightened({ low: { planes: low, width: lw, height: lh }, I, w, h, lo: 0.3, hi: 0.8, inside: ins }, skip);
          const got = new Float32Array(w * h);
          tightenInto(low, lw, lh, I, w, h, upsampleTaps(w, lw), upsampleTaps(h, lh), 0.3, 0.8, ins, skip, got);
          expectSameBytes(got, want, `${w}x${h} skip ${skip} inside ${Boolean(ins)}`);
          if (w > 100) expect(want.filter((v) => v > 0 && v < 1).length, 'pixels on the ramp').to.be.greaterThan(500);
        }
      }
    }
  });

  it("the guided filter's half-resolution coefficients: odd and even sizes, a soft mask and a hard one", () => {
    const next = generator(9);
    for (const [w, h] of [[1, 1], [3, 2], [8, 9], [301, 181]] as const) {
      const I = [0, 1, 2].map(() => new Float32Array(w * h).map(() => Math.fround(next()))) as [Float32Array, Float32Array, Float32Array];
      for (const hard of [false, true]) {
        const p = new Float32Array(w * h).map((_, i) => (hard ? (i % w < w / 2 ? 1 : 0) : next()));
        for (const rl of [1, 4]) {
          const want = reference.guidedFilterCoefficients(I, p, w, h, rl, 0.0015);
          const got = guidedCoefficients(I, p, w, h, rl, 0.0015);
          expect([got.width, got.height]).to.deep.equal([want.width, want.height]);
          want.planes.forEach((plane, k) => expectSameBytes(got.planes[k], plane, `${w}x${h} hard ${hard} rl ${rl} plane ${k}`));
        }
      }
    }
  });

  it('blur fusion: the foreground colours at the soft edge, at odd sizes and with no edge at all', () => {
    const next = generator(10);
    for (const [w, h] of [[1, 1], [5, 3], [64, 48], [300, 362]] as const) {
      const rgb = { data: bytes(w * h * 3, next), width: w, height: h, channels: 3 as const };
      const I = [0, 1, 2].map((c) => new Float32Array(w * h).map((_, i) => rgb.data[i * 3 + c] / 255)) as [Float32Array, Float32Array, Float32Array];
      // A person on the left, background on the right, a soft band between them; then no band.
      const soft = new Float32Array(w * h).map((_, i) => {
        const x = i % w;
        return x < w * 0.4 ? 1 : x > w * 0.6 ? 0 : next();
      });
      for (const alpha of [soft, new Float32Array(w * h).fill(1)]) {
        const { wideHalf, narrow } = refinementRadii(h);
        const want = reference.estimateForeground(rgb, I, alpha, wideHalf, narrow);
        expectSameBytes(estimateForeground(rgb, alpha).data, want.data, `${w}x${h}`);
      }
      if (w > 100) expect(estimateForeground(rgb, soft).data.some((v, i) => v !== rgb.data[i]), 'band colours changed').to.equal(true);
    }
  });
});
