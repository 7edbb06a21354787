// The JavaScript loops the pixel kernels (src/passport/wasm) replaced, verbatim: the reference
// the kernels must equal bit for bit (pixels.test.ts). Not used by the service.
import { ENHANCE } from '../../../src/passport/enhance.js';
import { HALO } from '../../../src/passport/halo.js';
import { upsampleTaps, type LowCoefficients } from '../../../src/passport/background.js';
import { type ChannelLuts, type UpsampleTaps } from '../../../src/vision/kernels/kernel-types.js';
import { type AffineMap, luma, type RawImage, type Rgb } from '../../../src/vision/raw-image.js';

export function bicubicInto(
  s: Uint8Array,
  sw: number,
  sh: number,
  srcTop: number,
  map: AffineMap,
  width: number,
  v0: number,
  v1: number,
  fill: Rgb,
  out: Uint8Array,
  inside: Uint8Array,
): void {
  const clamped = new Uint8ClampedArray(out.buffer, out.byteOffset, out.length);
  const stride = sw * 3;
  const xi = new Int32Array(4);
  const yi = new Int32Array(4);
  for (let v = v0; v < v1; v++) {
    let sx = map.ox + 0.5 * map.dux + (v + 0.5) * map.dvx;
    let sy = map.oy + 0.5 * map.duy + (v + 0.5) * map.dvy;
    for (let u = 0; u < width; u++, sx += map.dux, sy += map.duy) {
      const o = ((v - v0) * width + u) * 3;
      if (sx < 0 || sy < 0 || sx > sw || sy > sh) {
        out[o] = fill[0];
        out[o + 1] = fill[1];
        out[o + 2] = fill[2];
        continue;
      }
      inside[(v - v0) * width + u] = 1;
      const fx = sx - 0.5;
      const fy = sy - 0.5;
      const x0 = Math.floor(fx);
      const y0 = Math.floor(fy);
      const tx = fx - x0;
      const ty = fy - y0;
      const tx2 = tx * tx;
      const tx3 = tx2 * tx;
      const ty2 = ty * ty;
      const ty3 = ty2 * ty;
      const wx0 = -0.5 * tx3 + tx2 - 0.5 * tx;
      const wx1 = 1.5 * tx3 - 2.5 * tx2 + 1;
      const wx2 = -1.5 * tx3 + 2 * tx2 + 0.5 * tx;
      const wx3 = 0.5 * tx3 - 0.5 * tx2;
      const wy0 = -0.5 * ty3 + ty2 - 0.5 * ty;
      const wy1 = 1.5 * ty3 - 2.5 * ty2 + 1;
      const wy2 = -1.5 * ty3 + 2 * ty2 + 0.5 * ty;
      const wy3 = 0.5 * ty3 - 0.5 * ty2;
      let r = 0;
      let g = 0;
      let b = 0;
      if (x0 >= 1 && y0 >= 1 && x0 + 2 < sw && y0 + 2 < sh) {
        // interior: no clamping; the four rows unrolled
        const p0 = (y0 - 1 - srcTop) * stride + (x0 - 1) * 3;
        const p1 = p0 + stride;
        const p2 = p1 + stride;
        const p3 = p2 + stride;
        r =
          wy0 * (wx0 * s[p0] + wx1 * s[p0 + 3] + wx2 * s[p0 + 6] + wx3 * s[p0 + 9]) +
          wy1 * (wx0 * s[p1] + wx1 * s[p1 + 3] + wx2 * s[p1 + 6] + wx3 * s[p1 + 9]) +
          wy2 * (wx0 * s[p2] + wx1 * s[p2 + 3] + wx2 * s[p2 + 6] + wx3 * s[p2 + 9]) +
          wy3 * (wx0 * s[p3] + wx1 * s[p3 + 3] + wx2 * s[p3 + 6] + wx3 * s[p3 + 9]);
        g =
          wy0 * (wx0 * s[p0 + 1] + wx1 * s[p0 + 4] + wx2 * s[p0 + 7] + wx3 * s[p0 + 10]) +
          wy1 * (wx0 * s[p1 + 1] + wx1 * s[p1 + 4] + wx2 * s[p1 + 7] + wx3 * s[p1 + 10]) +
          wy2 * (wx0 * s[p2 + 1] + wx1 * s[p2 + 4] + wx2 * s[p2 + 7] + wx3 * s[p2 + 10]) +
          wy3 * (wx0 * s[p3 + 1] + wx1 * s[p3 + 4] + wx2 * s[p3 + 7] + wx3 * s[p3 + 10]);
        b =
          wy0 * (wx0 * s[p0 + 2] + wx1 * s[p0 + 5] + wx2 * s[p0 + 8] + wx3 * s[p0 + 11]) +
          wy1 * (wx0 * s[p1 + 2] + wx1 * s[p1 + 5] + wx2 * s[p1 + 8] + wx3 * s[p1 + 11]) +
          wy2 * (wx0 * s[p2 + 2] + wx1 * s[p2 + 5] + wx2 * s[p2 + 8] + wx3 * s[p2 + 11]) +
          wy3 * (wx0 * s[p3 + 2] + wx1 * s[p3 + 5] + wx2 * s[p3 + 8] + wx3 * s[p3 + 11]);
      } else {
        for (let k = 0; k < 4; k++) {
          xi[k] = Math.min(sw - 1, Math.max(0, x0 + k - 1)) * 3;
          yi[k] = (Math.min(sh - 1, Math.max(0, y0 + k - 1)) - srcTop) * stride;
        }
        for (let j = 0; j < 4; j++) {
          const wy = j === 0 ? wy0 : j === 1 ? wy1 : j === 2 ? wy2 : wy3;
          const row = yi[j];
          const p0 = row + xi[0];
          const p1 = row + xi[1];
          const p2 = row + xi[2];
          const p3 = row + xi[3];
          r += wy * (wx0 * s[p0] + wx1 * s[p1] + wx2 * s[p2] + wx3 * s[p3]);
          g += wy * (wx0 * s[p0 + 1] + wx1 * s[p1 + 1] + wx2 * s[p2 + 1] + wx3 * s[p3 + 1]);
          b += wy * (wx0 * s[p0 + 2] + wx1 * s[p1 + 2] + wx2 * s[p2 + 2] + wx3 * s[p3 + 2]);
        }
      }
      // The clamped view rounds (half to even) and clamps natively.
      clamped[o] = r;
      clamped[o + 1] = g;
      clamped[o + 2] = b;
    }
  }
}


export function bilinearRgbaInto(src: RawImage, map: AffineMap, width: number, height: number, fill: Rgb, out: Uint8Array): void {
  const { data: s, width: sw, height: sh } = src;
  for (let v = 0; v < height; v++) {
    // Source coordinates advance by (dux, duy) per output pixel: no multiplications in the row.
    let sx = map.ox + 0.5 * map.dux + (v + 0.5) * map.dvx;
    let sy = map.oy + 0.5 * map.duy + (v + 0.5) * map.dvy;
    let o = v * width * 4;
    for (let u = 0; u < width; u++, sx += map.dux, sy += map.duy, o += 4) {
      out[o + 3] = 255;
      if (sx < 0 || sy < 0 || sx > sw || sy > sh) {
        out[o] = fill[0];
        out[o + 1] = fill[1];
        out[o + 2] = fill[2];
        continue;
      }
      const fx = Math.min(sw - 1, Math.max(0, sx - 0.5));
      const fy = Math.min(sh - 1, Math.max(0, sy - 0.5));
      const x0 = Math.floor(fx);
      const y0 = Math.floor(fy);
      const x1 = Math.min(sw - 1, x0 + 1);
      const y1 = Math.min(sh - 1, y0 + 1);
      const tx = fx - x0;
      const ty = fy - y0;
      const p00 = (y0 * sw + x0) * 3;
      const p10 = (y0 * sw + x1) * 3;
      const p01 = (y1 * sw + x0) * 3;
      const p11 = (y1 * sw + x1) * 3;
      const w00 = (1 - tx) * (1 - ty);
      const w10 = tx * (1 - ty);
      const w01 = (1 - tx) * ty;
      const w11 = tx * ty;
      // + 0.5 and truncation: Math.round for these non-negative values
      out[o] = w00 * s[p00] + w10 * s[p10] + w01 * s[p01] + w11 * s[p11] + 0.5;
      out[o + 1] = w00 * s[p00 + 1] + w10 * s[p10 + 1] + w01 * s[p01 + 1] + w11 * s[p11 + 1] + 0.5;
      out[o + 2] = w00 * s[p00 + 2] + w10 * s[p10 + 2] + w01 * s[p01 + 2] + w11 * s[p11 + 2] + 0.5;
    }
  }
}


/**
 * Mean over a (2r+1)^2 window, clipped at the borders (each output divides by the number of
 * pixels actually inside the window). O(n) running sums; both passes walk memory row by row, and
 * the unclipped middle of each pass runs without edge tests.
 */
export function boxMean(
  src: Float32Array,
  width: number,
  height: number,
  r: number,
  out: Float32Array = new Float32Array(width * height),
  tmp: Float32Array = new Float32Array(width * height),
): Float32Array {
  boxRows(src, width, height, r, tmp);
  boxColumns(tmp, width, height, r, out, new Float64Array(width));
  return out;
}

/** Horizontal pass of boxMean: window means along each row of src into tmp. */
function boxRows(src: Float32Array, width: number, height: number, r: number, tmp: Float32Array): void {
  const full = 1 / (2 * r + 1);
  const xa = Math.min(r + 1, width); // x < xa: the window's left end is clipped
  const xb = Math.max(xa, width - r - 1); // x >= xb: its right end is clipped
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let acc = 0;
    for (let x = 0; x <= Math.min(r, width - 1); x++) acc += src[row + x];
    let x = 0;
    for (; x < xa; x++) {
      tmp[row + x] = acc / (Math.min(width - 1, x + r) - Math.max(0, x - r) + 1);
      if (x + r + 1 < width) acc += src[row + x + r + 1];
      if (x - r >= 0) acc -= src[row + x - r];
    }
    for (; x < xb; x++) {
      tmp[row + x] = acc * full;
      acc += src[row + x + r + 1] - src[row + x - r];
    }
    for (; x < width; x++) {
      tmp[row + x] = acc / (Math.min(width - 1, x + r) - Math.max(0, x - r) + 1);
      if (x - r >= 0) acc -= src[row + x - r];
    }
  }
}

/** Vertical pass of boxMean: window means down each column of tmp into out (col: zeroed scratch, one per column). */
function boxColumns(tmp: Float32Array, width: number, height: number, r: number, out: Float32Array, col: Float64Array): void {
  for (let y = 0; y <= Math.min(r, height - 1); y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) col[x] += tmp[row + x];
  }
  for (let y = 0; y < height; y++) {
    const inv = 1 / (Math.min(height - 1, y + r) - Math.max(0, y - r) + 1);
    const row = y * width;
    const add = y + r + 1;
    const sub = y - r;
    if (add < height && sub >= 0) {
      const ar = add * width;
      const sr = sub * width;
      for (let x = 0; x < width; x++) {
        const c = col[x];
        out[row + x] = c * inv;
        col[x] = c + tmp[ar + x] - tmp[sr + x];
      }
      continue;
    }
    for (let x = 0; x < width; x++) out[row + x] = col[x] * inv;
    if (add < height) {
      const ar = add * width;
      for (let x = 0; x < width; x++) col[x] += tmp[ar + x];
    }
    if (sub >= 0) {
      const sr = sub * width;
      for (let x = 0; x < width; x++) col[x] -= tmp[sr + x];
    }
  }
}


/** Planes of the summed-area table: not-person, old-bg weight, person weight, old-bg RGB, person RGB. */
const SAT_PLANES = 9;
let satScratch: Int32Array = new Int32Array(0);

/**
 * Integer summed-area tables of the nine planes the measure averages, interleaved: entry
 * ((y * (w + 1)) + x) * 9 + k = sum of plane k over [0, x) x [0, y). All planes are 0/1 weights or
 * weighted 8-bit values, so the sums are exact (at most 255 x 50 MP < 2^31 would overflow; the
 * photo is a few hundred thousand pixels). The buffer is reused between calls.
 */
export function summedAreaTables(source: RawImage, sourceLuts: ChannelLuts, output: RawImage, alpha: Float32Array, inside: Uint8Array): Int32Array {
  const { width: w, height: h } = output;
  const stride = (w + 1) * SAT_PLANES;
  const size = stride * (h + 1);
  if (satScratch.length < size) satScratch = new Int32Array(size);
  const t = satScratch;
  t.fill(0, 0, stride);
  const sc = source.channels;
  const oc = output.channels;
  const sd = source.data;
  const od = output.data;
  const [lr, lg, lb] = sourceLuts;
  for (let y = 0; y < h; y++) {
    // Running sums along the row (plane order as in SAT_PLANES), added to the row above.
    let n0 = 0;
    let n1 = 0;
    let n2 = 0;
    let s3 = 0;
    let s4 = 0;
    let s5 = 0;
    let s6 = 0;
    let s7 = 0;
    let s8 = 0;
    const up = y * stride;
    const cur = up + stride;
    for (let k = 0; k < SAT_PLANES; k++) t[cur + k] = 0;
    for (let x = 0, i = y * w; x < w; x++, i++) {
      const a = alpha[i];
      if (a < 0.5) n0++;
      if (inside[i] && a < 0.05) {
        n1++;
        const j = i * sc;
        s3 += lr[sd[j]];
        s4 += lg[sd[j + 1]];
        s5 += lb[sd[j + 2]];
      }
      if (a >= 0.98) {
        n2++;
        const j = i * oc;
        s6 += od[j];
        s7 += od[j + 1];
        s8 += od[j + 2];
      }
      const o = cur + (x + 1) * SAT_PLANES;
      const p = up + (x + 1) * SAT_PLANES;
      t[o] = t[p] + n0;
      t[o + 1] = t[p + 1] + n1;
      t[o + 2] = t[p + 2] + n2;
      t[o + 3] = t[p + 3] + s3;
      t[o + 4] = t[p + 4] + s4;
      t[o + 5] = t[p + 5] + s5;
      t[o + 6] = t[p + 6] + s6;
      t[o + 7] = t[p + 7] + s7;
      t[o + 8] = t[p + 8] + s8;
    }
  }
  return t;
}


/**
 * Histograms of the per-pixel min and max channel over the weighted pixels (weight >= 0.5, or all),
 * and the count and channel sums of near-neutral pixels: stats = [counted, neutral, R, G, B].
 */
export function levelStats(d: Uint8Array, n: number, weight: Float32Array | null, histMin: Uint32Array, histMax: Uint32Array, stats: Float64Array): void {
  let counted = 0;
  let neutral = 0;
  let sr = 0;
  let sg = 0;
  let sb = 0;
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    const r = d[j];
    const g = d[j + 1];
    const b = d[j + 2];
    const mx = Math.max(r, g, b);
    const mn = Math.min(r, g, b);
    if (!weight || weight[i] >= 0.5) {
      histMin[mn]++;
      histMax[mx]++;
      counted++;
    }
    if (mx - mn < ENHANCE.WB_MAX_CHROMA && mx < 250 && mn > 30) {
      neutral++;
      sr += r;
      sg += g;
      sb += b;
    }
  }
  stats[0] = counted;
  stats[1] = neutral;
  stats[2] = sr;
  stats[3] = sg;
  stats[4] = sb;
}


export function sharpenLuma(img: RawImage): RawImage {
  const { width: w, height: h, data } = img;
  const { sigma } = ENHANCE.SHARPEN;
  const n = w * h;
  const g1 = Math.exp(-1 / (2 * sigma * sigma));
  const g2 = Math.exp(-4 / (2 * sigma * sigma));
  const norm = 1 + 2 * g1 + 2 * g2;
  const k = new Float64Array([1 / norm, g1 / norm, g2 / norm]);
  const y = new Float32Array(n);
  lumaPlane(data, y);
  const tmp = new Float32Array(n);
  gaussRows(y, w, h, k, tmp);
  const out = new Uint8Array(data.length);
  sharpenInto(data, y, tmp, w, h, k, out);
  return { data: out, width: w, height: h, channels: 3 };
}

/** v clamped to 0..len - 1 (edges extended). */
function clampIndex(v: number, len: number): number {
  return v < 0 ? 0 : v >= len ? len - 1 : v;
}

function lumaPlane(data: Uint8Array, y: Float32Array): void {
  for (let i = 0, j = 0; i < y.length; i++, j += 3) y[i] = luma(data[j], data[j + 1], data[j + 2]);
}

/** The 5-tap Gaussian (k = centre, first, second tap) along the rows of y into tmp. */
function gaussRows(y: Float32Array, w: number, h: number, k: Float64Array, tmp: Float32Array): void {
  const k0 = k[0];
  const k1 = k[1];
  const k2 = k[2];
  for (let row = 0; row < h; row++) {
    const o = row * w;
    for (let x = 0; x < w; x++) {
      if (x >= 2 && x < w - 2) {
        const i = o + x;
        tmp[i] = k0 * y[i] + k1 * (y[i - 1] + y[i + 1]) + k2 * (y[i - 2] + y[i + 2]);
      } else {
        tmp[o + x] = k0 * y[o + x] + k1 * (y[o + clampIndex(x - 1, w)] + y[o + clampIndex(x + 1, w)]) + k2 * (y[o + clampIndex(x - 2, w)] + y[o + clampIndex(x + 2, w)]);
      }
    }
  }
}

/** The Gaussian along the columns of tmp, the detail curve, and the change added to each channel. */
function sharpenInto(data: Uint8Array, y: Float32Array, tmp: Float32Array, w: number, h: number, k: Float64Array, out: Uint8Array): void {
  const { m1, m2, x1, y2, y3 } = ENHANCE.SHARPEN;
  const k0 = k[0];
  const k1 = k[1];
  const k2 = k[2];
  // Stores through a clamped view round and clamp to 0..255 natively (a third of this loop's
  // time when done with comparisons and Math.round).
  const clamped = new Uint8ClampedArray(out.buffer, out.byteOffset, out.length);
  const flatEnd = m1 * x1;
  for (let row = 0; row < h; row++) {
    const o = row * w;
    const a1 = clampIndex(row - 1, h) * w;
    const b1 = clampIndex(row + 1, h) * w;
    const a2 = clampIndex(row - 2, h) * w;
    const b2 = clampIndex(row + 2, h) * w;
    for (let x = 0; x < w; x++) {
      const i = o + x;
      const d = y[i] - (k0 * tmp[i] + k1 * (tmp[a1 + x] + tmp[b1 + x]) + k2 * (tmp[a2 + x] + tmp[b2 + x]));
      let c = d > x1 ? flatEnd + m2 * (d - x1) : d < -x1 ? -flatEnd + m2 * (d + x1) : m1 * d;
      c = c > y2 ? y2 : c < -y3 ? -y3 : c;
      const j = i * 3;
      clamped[j] = data[j] + c;
      clamped[j + 1] = data[j + 1] + c;
      clamped[j + 2] = data[j + 2] + c;
    }
  }
}

/** compositeOnBackground's loop (out: a Uint8ClampedArray view). */
export function blendInto(d: Uint8Array, alpha: Float32Array, background: Rgb, lr: Uint8Array, lg: Uint8Array, lb: Uint8Array, clamped: Uint8ClampedArray): void {
  for (let i = 0, j = 0; i < alpha.length; i++, j += 3) {
    const a = alpha[i];
    clamped[j] = lr[d[j]] * a + background[0] * (1 - a);
    clamped[j + 1] = lg[d[j + 1]] * a + background[1] * (1 - a);
    clamped[j + 2] = lb[d[j + 2]] * a + background[2] * (1 - a);
  }
}


/** counts[0] = ring pixels, counts[1] = halo pixels among them (a loop of its own: image.ts says why). */
export function countRing(t: Int32Array, output: RawImage, alpha: Float32Array, inside: Uint8Array, background: Rgb, counts: Int32Array): void {
  const { width: w, height: h } = output;
  const ringR = Math.max(2, Math.round(HALO.RING_SHARE * h));
  const r = Math.max(4, Math.round(HALO.OLD_BG_RADIUS_SHARE * h));
  const stride = (w + 1) * SAT_PLANES;
  const P = SAT_PLANES;
  let ring = 0;
  let halo = 0;
  const oc = output.channels;
  const od = output.data;
  for (let y = 0; y < h; y++) {
    // Window rows (clipped): the ring's reach and the colour-mean radius.
    const n0 = Math.max(0, y - ringR) * stride;
    const n1 = Math.min(h, y + ringR + 1) * stride;
    const wy0 = Math.max(0, y - r);
    const wy1 = Math.min(h, y + r + 1);
    const m0 = wy0 * stride;
    const m1 = wy1 * stride;
    for (let x = 0, i = y * w; x < w; x++, i++) {
      if (!inside[i] || alpha[i] < HALO.RING_MIN_ALPHA) continue;
      const nx0 = Math.max(0, x - ringR) * P;
      const nx1 = Math.min(w, x + ringR + 1) * P;
      if (t[n1 + nx1] - t[n0 + nx1] - t[n1 + nx0] + t[n0 + nx0] <= 0) continue; // no non-person pixel within reach
      ring++;
      const wx0 = Math.max(0, x - r);
      const wx1 = Math.min(w, x + r + 1);
      const area = (wx1 - wx0) * (wy1 - wy0);
      const a = m1 + wx1 * P; // corners of the colour window: a - b - c + d
      const b = m0 + wx1 * P;
      const c = m1 + wx0 * P;
      const d = m0 + wx0 * P;
      const bgCount = t[a + 1] - t[b + 1] - t[c + 1] + t[d + 1];
      if (bgCount < 0.02 * area) continue; // no old background nearby to compare with
      const j = i * oc;
      const R = od[j];
      const G = od[j + 1];
      const B = od[j + 2];
      const inv = 1 / bgCount;
      const dOld = Math.hypot(
        R - (t[a + 3] - t[b + 3] - t[c + 3] + t[d + 3]) * inv,
        G - (t[a + 4] - t[b + 4] - t[c + 4] + t[d + 4]) * inv,
        B - (t[a + 5] - t[b + 5] - t[c + 5] + t[d + 5]) * inv,
      );
      const dNew = Math.hypot(R - background[0], G - background[1], B - background[2]);
      if (dOld > HALO.OLD_BG_DISTANCE || dNew < HALO.NEW_BG_DISTANCE) continue;
      const fgCount = t[a + 2] - t[b + 2] - t[c + 2] + t[d + 2];
      if (fgCount > 0.02 * area) {
        const f = 1 / fgCount;
        const person = [(t[a + 6] - t[b + 6] - t[c + 6] + t[d + 6]) * f, (t[a + 7] - t[b + 7] - t[c + 7] + t[d + 7]) * f, (t[a + 8] - t[b + 8] - t[c + 8] + t[d + 8]) * f];
        if (distanceToSegment([R, G, B], background, person) <= dOld) continue;
      }
      halo++;
    }
  }
  counts[0] = ring;
  counts[1] = halo;
}

/** Distance from colour p to the segment a-b (the mixes of a and b). */
function distanceToSegment(p: readonly number[], a: readonly number[], b: readonly number[]): number {
  const d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
  const len2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
  let t = len2 > 0 ? ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1] + (p[2] - a[2]) * d[2]) / len2 : 0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  return Math.hypot(p[0] - a[0] - t * d[0], p[1] - a[1] - t * d[1], p[2] - a[2] - t * d[2]);
}

// background.ts' tightening before the kernel (combineTightened), verbatim (its upsampling taps and coefficient planes are background.ts' own).
/** Per half-resolution cell: the tightened value every pixel it reaches takes (0 or 1), or UNDECIDED. */
const UNDECIDED = 2;

/**
 * Cells whose linear model cannot reach the tightening ramp for any colour: with R, G, B in 0..1,
 * q = aR R + aG G + aB B + b lies between b plus the negative coefficients and b plus the positive
 * ones. A pixel interpolates up to four cells with weights summing to 1, so when all of them are
 * below the ramp's low end its q is too and its tightened value is 0 (above the high end: 1): the
 * same value the full evaluation gives, without it. The margin covers float32 rounding.
 */
function decidedCells(low: LowCoefficients, lo: number, hi: number): Uint8Array {
  const [aR, aG, aB, b] = low.planes;
  const out = new Uint8Array(low.width * low.height);
  for (let i = 0; i < out.length; i++) {
    const r = aR[i];
    const g = aG[i];
    const bl = aB[i];
    const c = b[i];
    const pos = (r > 0 ? r : 0) + (g > 0 ? g : 0) + (bl > 0 ? bl : 0);
    const neg = (r < 0 ? r : 0) + (g < 0 ? g : 0) + (bl < 0 ? bl : 0);
    const margin = 1e-5 * (1 + pos - neg + Math.abs(c));
    out[i] = c + pos + margin < lo ? 0 : c + neg - margin > hi ? 1 : UNDECIDED;
  }
  return out;
}

interface TightenInput {
  low: LowCoefficients;
  /** The full-resolution guide (0..1 planes). */
  I: [Float32Array, Float32Array, Float32Array];
  w: number;
  h: number;
  /** The tightening ramp. */
  lo: number;
  hi: number;
  inside: Uint8Array | undefined;
}

/**
 * The tightened filter output t = smoothstep((q - lo) / (hi - lo)), q = up(aR) R + up(aG) G +
 * up(aB) B + up(b) (up: bilinear, upsampleTaps), 0 outside `inside`. q is evaluated only where
 * decidedCells cannot tell t (the soft edge); elsewhere t is 0 or 1 as evaluation would give. The
 * four coefficient planes are interpolated two source rows at a time.
 */
export function combineTightened(input: TightenInput, skipDecided: boolean): Float32Array {
  const { low, w, h, lo, hi } = input;
  const decided = skipDecided ? decidedCells(low, lo, hi) : new Uint8Array(low.width * low.height).fill(UNDECIDED);
  const t = new Float32Array(w * h);
  tightenRows(input, decided, new CoefficientRows(low, w), t);
  return t;
}

/** The coefficient planes interpolated along x to the photo's width, two rows kept (by row parity). */
class CoefficientRows {
  readonly taps: UpsampleTaps;
  private readonly slots: Float64Array[];
  private readonly slotRow = new Int32Array([-1, -1]);

  constructor(
    private readonly low: LowCoefficients,
    w: number,
  ) {
    this.taps = upsampleTaps(w, low.width);
    this.slots = [new Float64Array(4 * w), new Float64Array(4 * w)];
  }

  /** Row ry's four planes, side by side, computed once. */
  row(ry: number): Float64Array {
    const k = ry & 1;
    const buf = this.slots[k];
    if (this.slotRow[k] !== ry) {
      interpolateRow(this.low.planes, ry * this.low.width, this.taps.i0, this.taps.i1, this.taps.t, buf);
      this.slotRow[k] = ry;
    }
    return buf;
  }
}

function interpolateRow(coefficients: Float32Array[], r: number, xa: Int32Array, xb: Int32Array, xt: Float64Array, buf: Float64Array): void {
  const w = xa.length;
  for (let p = 0; p < 4; p++) {
    const P = coefficients[p];
    const o = p * w;
    for (let x = 0; x < w; x++) buf[o + x] = P[r + xa[x]] + (P[r + xb[x]] - P[r + xa[x]]) * xt[x];
  }
}

function tightenRows(input: TightenInput, decided: Uint8Array, rows: CoefficientRows, t: Float32Array): void {
  const { I, w, h, lo, hi, inside } = input;
  const lw = input.low.width;
  const { i0: ya, i1: yb, t: yt } = upsampleTaps(h, input.low.height);
  const xa = rows.taps.i0;
  const xb = rows.taps.i1;
  const [R, G, B] = I;
  const f = Math.fround;
  const span = hi - lo;
  // Per half-resolution column: the cells of both source rows agree on a value (0 / 1), else UNDECIDED.
  const both = new Uint8Array(lw);
  for (let y = 0; y < h; y++) {
    const ra = ya[y] * lw;
    const rb = yb[y] * lw;
    let open = false;
    for (let x = 0; x < lw; x++) {
      const v = decided[ra + x];
      both[x] = v === decided[rb + x] ? v : UNDECIDED;
      if (both[x] !== 0) open = true;
    }
    const row = y * w;
    if (!open) continue; // the whole row is 0 (already)
    let tp: Float64Array | null = null;
    let bt: Float64Array | null = null;
    const ty = yt[y];
    for (let x = 0; x < w; x++) {
      const i = row + x;
      if (inside && !inside[i]) continue;
      const c = both[xa[x]];
      if (c !== UNDECIDED && c === both[xb[x]]) {
        t[i] = c;
        continue;
      }
      tp ??= rows.row(ya[y]);
      bt ??= rows.row(yb[y]);
      const vR = f(tp[x] + (bt[x] - tp[x]) * ty);
      const vG = f(tp[w + x] + (bt[w + x] - tp[w + x]) * ty);
      const vB = f(tp[2 * w + x] + (bt[2 * w + x] - tp[2 * w + x]) * ty);
      const vb = f(tp[3 * w + x] + (bt[3 * w + x] - tp[3 * w + x]) * ty);
      let s = (f(vR * R[i] + vG * G[i] + vB * B[i] + vb) - lo) / span;
      s = s < 0 ? 0 : s > 1 ? 1 : s;
      t[i] = s * s * (3 - 2 * s);
    }
  }
}


// background.ts' guided filter coefficients before the kernel, verbatim (boxMean and downsample2 as above / in image.ts).
/** a[i] * b[i] (float32). */
function product(a: Float32Array, b: Float32Array): Float32Array {
  const o = new Float32Array(a.length);
  multiplyInto(a, b, o);
  return o;
}

function multiplyInto(a: Float32Array, b: Float32Array, o: Float32Array): void {
  for (let i = 0; i < o.length; i++) o[i] = a[i] * b[i];
}

/**
 * Colour guided filter, "fast" variant (He & Sun 2015): the linear coefficients are computed at
 * half resolution; combineTightened upsamples them and evaluates the output with the
 * full-resolution guide.
 */
export function guidedFilterCoefficients(I: [Float32Array, Float32Array, Float32Array], p: Float32Array, w: number, h: number, rl: number, eps: number): LowCoefficients {
  const lowR = downsample2(I[0], w, h);
  const lw = lowR.width;
  const lh = lowR.height;
  const Ir = lowR.data;
  const Ig = downsample2(I[1], w, h).data;
  const Ib = downsample2(I[2], w, h).data;
  const pl = downsample2(p, w, h).data;
  const ln = lw * lh;
  const box = (a: Float32Array): Float32Array => boxMean(a, lw, lh, rl, new Float32Array(ln));
  const mR = box(Ir);
  const mG = box(Ig);
  const mB = box(Ib);
  const mP = box(pl);
  const mRP = box(product(Ir, pl));
  const mGP = box(product(Ig, pl));
  const mBP = box(product(Ib, pl));
  const vRR = box(product(Ir, Ir));
  const vRG = box(product(Ir, Ig));
  const vRB = box(product(Ir, Ib));
  const vGG = box(product(Ig, Ig));
  const vGB = box(product(Ig, Ib));
  const vBB = box(product(Ib, Ib));
  const aR = new Float32Array(ln);
  const aG = new Float32Array(ln);
  const aB = new Float32Array(ln);
  const bb = new Float32Array(ln);
  linearCoefficients([mR, mG, mB, mP, mRP, mGP, mBP, vRR, vRG, vRB, vGG, vGB, vBB], eps, aR, aG, aB, bb);
  return { planes: [box(aR), box(aG), box(aB), box(bb)], width: lw, height: lh };
}

/** Per cell: the colour guided filter's a (3x3 covariance solve) and b from the window means. */
function linearCoefficients(m: Float32Array[], eps: number, aR: Float32Array, aG: Float32Array, aB: Float32Array, bb: Float32Array): void {
  const [mR, mG, mB, mP, mRP, mGP, mBP, vRR, vRG, vRB, vGG, vGB, vBB] = m;
  const ln = aR.length;
  for (let i = 0; i < ln; i++) {
    const mr = mR[i];
    const mg = mG[i];
    const mb = mB[i];
    const mp = mP[i];
    const cr = mRP[i] - mr * mp;
    const cg = mGP[i] - mg * mp;
    const cb = mBP[i] - mb * mp;
    const rr = vRR[i] - mr * mr + eps;
    const rg = vRG[i] - mr * mg;
    const rb = vRB[i] - mr * mb;
    const gg = vGG[i] - mg * mg + eps;
    const gb = vGB[i] - mg * mb;
    const b2 = vBB[i] - mb * mb + eps;
    // inverse of the symmetric 3x3 covariance matrix (adjugate / determinant)
    const i00 = gg * b2 - gb * gb;
    const i01 = gb * rb - rg * b2;
    const i02 = rg * gb - gg * rb;
    const i11 = rr * b2 - rb * rb;
    const i12 = rb * rg - rr * gb;
    const i22 = rr * gg - rg * rg;
    const det = rr * i00 + rg * i01 + rb * i02;
    const ar = (i00 * cr + i01 * cg + i02 * cb) / det;
    const ag = (i01 * cr + i11 * cg + i12 * cb) / det;
    const ab = (i02 * cr + i12 * cg + i22 * cb) / det;
    aR[i] = ar;
    aG[i] = ag;
    aB[i] = ab;
    bb[i] = mp - ar * mr - ag * mg - ab * mb;
  }
}


// background.ts' foreground estimation before the kernel, verbatim (planes(rgb) given as I).
interface Scratch {
  fa: Float32Array;
  b1a: Float32Array;
  bF: Float32Array;
  bB: Float32Array;
}

function scratch(n: number): Scratch {
  return { fa: new Float32Array(n), b1a: new Float32Array(n), bF: new Float32Array(n), bB: new Float32Array(n) };
}

/** Blur fusion's smooth terms for one channel (into sc.bF / sc.bB): blurred foreground and background colours. */
function blurredFB(F: Float32Array, B: Float32Array, alpha: Float32Array, bA: Float32Array, w: number, h: number, r: number, sc: Scratch): void {
  const { fa, b1a, bF, bB } = sc;
  weightByAlpha(F, B, alpha, fa, b1a);
  boxMean(fa, w, h, r, bF);
  boxMean(b1a, w, h, r, bB);
  divideByMeanAlpha(bF, bB, bA);
}

function weightByAlpha(F: Float32Array, B: Float32Array, alpha: Float32Array, fa: Float32Array, b1a: Float32Array): void {
  for (let i = 0; i < fa.length; i++) {
    fa[i] = F[i] * alpha[i];
    b1a[i] = B[i] * (1 - alpha[i]);
  }
}

function divideByMeanAlpha(bF: Float32Array, bB: Float32Array, bA: Float32Array): void {
  for (let i = 0; i < bF.length; i++) {
    bF[i] = bF[i] / (bA[i] + 1e-5);
    bB[i] = bB[i] / (1 - bA[i] + 1e-5);
  }
}

/** Indices of the pixels set in `mask`, in order. */
function indicesOf(mask: Uint8Array): Int32Array {
  const out = new Int32Array(countSet(mask));
  listSet(mask, out);
  return out;
}

function countSet(mask: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < mask.length; i++) count += mask[i];
  return count;
}

function listSet(mask: Uint8Array, out: Int32Array): void {
  for (let i = 0, k = 0; i < mask.length; i++) if (mask[i]) out[k++] = i;
}

/** `mask` grown by r pixels along x (horizontal) or y (vertical). */
function grow(mask: Uint8Array, w: number, h: number, r: number, vertical: boolean): Uint8Array {
  const out = new Uint8Array(mask.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (!mask[y * w + x]) continue;
      if (vertical) for (let yy = Math.max(0, y - r); yy <= Math.min(h - 1, y + r); yy++) out[yy * w + x] = 1;
      else out.fill(1, y * w + Math.max(0, x - r), y * w + Math.min(w - 1, x + r) + 1);
    }
  }
  return out;
}

/**
 * Foreground colours (RGB, 0..255) with the old background removed from semi-transparent pixels.
 * Blur fusion, two passes: the wide pass (smooth by construction) runs at half resolution on the
 * whole photo; the narrow pass runs at full resolution on the wide pass's estimates, only where it
 * is needed: at the edge band (0 < alpha < 0.999) and within its window around it. Each pass is
 * F = bF + alpha (I - alpha bF - (1 - alpha) bB), clamped to 0..1 (bF, bB: blurred foreground and
 * background colours, window means divided by the window's mean alpha / 1 - alpha). Pixels off the
 * band keep the photo's colour: opaque ones are the person, transparent ones are not composited.
 */
export function estimateForeground(rgb: RawImage, I: [Float32Array, Float32Array, Float32Array], alpha: Float32Array, r1: number, r2: number): RawImage {
  const { width: w, height: h, data } = rgb;
  const n = w * h;
  const out = new Uint8Array(data);
  const bandMask = new Uint8Array(n);
  markBand(alpha, bandMask);
  const band = indicesOf(bandMask);
  if (band.length === 0) return { data: out, width: w, height: h, channels: 3 };
  // The narrow pass's window sums: along x over `rows` (the band grown vertically), then along y
  // at the band; its inputs over `near` (the band grown both ways).
  const rowsMask = grow(bandMask, w, h, r2, true);
  const narrow: NarrowWindows = { w, h, r: r2, rows: indicesOf(rowsMask), band };
  const near = indicesOf(grow(rowsMask, w, h, r2, false));
  const hsA = new Float32Array(n);
  sumAlongX(narrow, alpha, hsA);
  const meanA = new Float32Array(band.length);
  windowMeansAtBand(narrow, hsA, meanA);

  // Bilinear upsampling of the wide pass, per column and per row.
  const lowA = downsample2(alpha, w, h);
  const up: WideUpsampling = { lw: lowA.width, x: upsampleTaps(w, lowA.width), y: upsampleTaps(h, lowA.height) };
  const bA1 = boxMean(lowA.data, lowA.width, lowA.height, r1);
  const low = scratch(lowA.width * lowA.height);
  const fa = new Float32Array(n);
  const b1a = new Float32Array(n);
  const hsF = new Float32Array(n);
  const hsB = new Float32Array(n);
  // Stores through a clamped view round natively.
  const clamped = new Uint8ClampedArray(out.buffer);
  for (let c = 0; c < 3; c++) {
    const Ic = I[c];
    const Il = downsample2(Ic, w, h).data;
    blurredFB(Il, Il, lowA.data, bA1, lowA.width, lowA.height, r1, low);
    // Wide pass fused (F1) and the narrow pass's weighted inputs, near the band only.
    wideFused(near, w, h, up, low.bF, low.bB, alpha, Ic, fa, b1a);
    sumAlongX(narrow, fa, hsF);
    sumAlongX(narrow, b1a, hsB);
    narrowFused(narrow, alpha, Ic, meanA, hsF, hsB, clamped, c);
  }
  return { data: out, width: w, height: h, channels: 3 };
}

/** Soft-edge pixels: 0 < alpha < 0.999. */
function markBand(alpha: Float32Array, bandMask: Uint8Array): void {
  for (let i = 0; i < alpha.length; i++) bandMask[i] = alpha[i] > 0 && alpha[i] < 0.999 ? 1 : 0;
}

/** The narrow pass's windows: radius r, sums along x over `rows`, along y at `band`. */
interface NarrowWindows {
  w: number;
  h: number;
  r: number;
  rows: Int32Array;
  band: Int32Array;
}

/** Window sums along x at the pixels `rows` lists (windows clipped at the photo's borders). */
function sumAlongX(win: NarrowWindows, src: Float32Array, dst: Float32Array): void {
  const { w, r, rows } = win;
  for (let k = 0; k < rows.length; k++) {
    const i = rows[k];
    const x = i % w;
    let acc = 0;
    for (let q = i - Math.min(r, x), end = i + Math.min(r, w - 1 - x); q <= end; q++) acc += src[q];
    dst[i] = acc;
  }
}

/** Sum along y of the x-sums `hs` at pixel i: the window sum. */
function sumAlongY(win: NarrowWindows, hs: Float32Array, i: number): number {
  const { w, h, r } = win;
  const y = Math.floor(i / w);
  let acc = 0;
  for (let q = i - Math.min(r, y) * w, end = i + Math.min(r, h - 1 - y) * w; q <= end; q += w) acc += hs[q];
  return acc;
}

/** Pixels of pixel i's window inside the photo (window means are over those). */
function windowCount(win: NarrowWindows, i: number): number {
  const { w, h, r } = win;
  const x = i % w;
  const y = (i - x) / w;
  return (Math.min(w - 1, x + r) - Math.max(0, x - r) + 1) * (Math.min(h - 1, y + r) - Math.max(0, y - r) + 1);
}

function windowMeansAtBand(win: NarrowWindows, hs: Float32Array, mean: Float32Array): void {
  const { band } = win;
  for (let k = 0; k < band.length; k++) mean[k] = sumAlongY(win, hs, band[k]) / windowCount(win, band[k]);
}

/** Bilinear taps from the wide pass's half-resolution grid (lw columns) to the photo. */
interface WideUpsampling {
  lw: number;
  x: UpsampleTaps;
  y: UpsampleTaps;
}

/**
 * At the pixels `near` lists: the wide pass fused (F1 from the upsampled blurred colours bF, bB)
 * and the narrow pass's weighted inputs fa = F1 alpha, b1a = B (1 - alpha). Row by row, the
 * upsampling's row terms once per row.
 */
function wideFused(
  near: Int32Array,
  w: number,
  h: number,
  up: WideUpsampling,
  bF: Float32Array,
  bB: Float32Array,
  alpha: Float32Array,
  Ic: Float32Array,
  fa: Float32Array,
  b1a: Float32Array,
): void {
  const { lw } = up;
  const { i0: ux0, i1: ux1, t: utx } = up.x;
  const { i0: uy0, i1: uy1, t: uty } = up.y;
  for (let y = 0, k = 0; y < h && k < near.length; y++) {
    const rowEnd = (y + 1) * w;
    if (near[k] >= rowEnd) continue;
    const t0 = uy0[y] * lw;
    const t1 = uy1[y] * lw;
    const ty = uty[y];
    for (; k < near.length && near[k] < rowEnd; k++) {
      const i = near[k];
      const x = i - y * w;
      const a0 = ux0[x];
      const a1 = ux1[x];
      const tx = utx[x];
      const fTop = bF[t0 + a0] + (bF[t0 + a1] - bF[t0 + a0]) * tx;
      const f = fTop + (bF[t1 + a0] + (bF[t1 + a1] - bF[t1 + a0]) * tx - fTop) * ty;
      const bTop = bB[t0 + a0] + (bB[t0 + a1] - bB[t0 + a0]) * tx;
      const b = bTop + (bB[t1 + a0] + (bB[t1 + a1] - bB[t1 + a0]) * tx - bTop) * ty;
      const a = alpha[i];
      let v = f + a * (Ic[i] - a * f - (1 - a) * b);
      v = v < 0 ? 0 : v > 1 ? 1 : v;
      fa[i] = Math.fround(v) * a;
      b1a[i] = b * (1 - a);
    }
  }
}

/** The narrow pass at the band: fused colour of channel c, stored (0..255) into `out`. */
function narrowFused(
  win: NarrowWindows,
  alpha: Float32Array,
  Ic: Float32Array,
  meanA: Float32Array,
  hsF: Float32Array,
  hsB: Float32Array,
  out: Uint8ClampedArray,
  c: number,
): void {
  const { band } = win;
  for (let k = 0; k < band.length; k++) {
    const i = band[k];
    const a = alpha[i];
    const count = windowCount(win, i);
    const f = Math.fround(sumAlongY(win, hsF, i) / count / (meanA[k] + 1e-5));
    const b = Math.fround(sumAlongY(win, hsB, i) / count / (1 - meanA[k] + 1e-5));
    let v = f + a * (Ic[i] - a * f - (1 - a) * b);
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    out[i * 3 + c] = Math.fround(v) * 255;
  }
}


// image.ts' 2x2 mean (downsample2), verbatim.
/** 2x2 mean downsample of a float plane (odd edges average what exists). */
export function downsample2(src: Float32Array, width: number, height: number): { data: Float32Array; width: number; height: number } {
  const w2 = Math.ceil(width / 2);
  const h2 = Math.ceil(height / 2);
  const out = new Float32Array(w2 * h2);
  halveInto(src, width, height, out, w2, h2);
  return { data: out, width: w2, height: h2 };
}

function halveInto(src: Float32Array, width: number, height: number, out: Float32Array, w2: number, h2: number): void {
  for (let y = 0; y < h2; y++) {
    const y0 = 2 * y;
    const y1 = Math.min(height - 1, y0 + 1);
    for (let x = 0; x < w2; x++) {
      const x0 = 2 * x;
      const x1 = Math.min(width - 1, x0 + 1);
      out[y * w2 + x] = 0.25 * (src[y0 * width + x0] + src[y0 * width + x1] + src[y1 * width + x0] + src[y1 * width + x1]);
    }
  }
}

