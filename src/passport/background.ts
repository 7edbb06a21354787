// Background replacement: refine the selfie-segmentation mask at the output resolution, estimate
// the true foreground colour at the soft edge (so no rim of the old background remains) and
// composite on the spec's background colour.
//
// The selfie model runs at 256x256, so its mask edge is soft over 3-6 model pixels (~8-15 output
// pixels): composited directly it leaves a halo of the old background and blurs hair. Steps:
//  1. Colour guided filter (He et al. 2010) of the mask with the output photo as the guide: the
//     soft band snaps to colour edges in the photo (hair strands, ear and collar outlines).
//  2. Tighten: alpha = smoothstep((q - LOW) / (HIGH - LOW)). Moving the 50 % contour to q = 0.55
//     erodes about one pixel where the upsampled mask bleeds outward; the ramp keeps a soft edge.
//     q is evaluated only near the edge: where no colour brings a cell's linear model onto the
//     ramp, the result (0 or 1) is known without it (combineTightened; the same bytes).
//  3. Feather: a 3x3 mean removes stair-steps of the tightening.
//  4. Foreground colour estimation, "blur fusion" (Forte & Pitie 2021, two passes): at pixels with
//     0 < alpha < 1 the old background's colour is removed from the pixel before compositing.
// The guided filter's coefficients and the wide fusion pass are computed at half resolution.
import { IDENTITY_LUTS, type ChannelLuts } from './enhance.js';
import { boxMean, downsample2, type RawImage, type Rgb } from './image.js';
import { blendOnBackgroundInto, guidedCoefficients, tightenInto } from './wasm/pixels.js';

export const MASK_REFINEMENT = {
  /** Guided-filter window radius as a share of the output height (7 px at 600 px), at least 2 px. */
  guidedRadiusShare: 0.012,
  /** Guided-filter regularisation on 0..1 colours: smaller follows photo edges more closely. */
  guidedEps: 0.0015,
  /** Tightening ramp over the filtered mask. */
  tightenLow: 0.3,
  tightenHigh: 0.8,
  /** Feather radius in output pixels (3x3 mean). */
  featherRadius: 1,
  /** Blur-fusion window radii as shares of the output height (30 px and 3 px at 600 px). */
  fusionRadiiShare: [0.05, 0.005] as const,
} as const;

/** The filters' radii, in pixels, for a photo `height` px tall (refineMask, estimateForeground; edge-bands.ts sizes its margins from them). */
export interface RefinementRadii {
  /** Guided-filter window, at half resolution (where its box means run). */
  guidedHalf: number;
  /** Blur fusion's wide pass, at half resolution. */
  wideHalf: number;
  /** Blur fusion's narrow pass, at full resolution. */
  narrow: number;
}

export function refinementRadii(height: number): RefinementRadii {
  const guided = Math.max(2, Math.round(MASK_REFINEMENT.guidedRadiusShare * height));
  const [wide, narrow] = MASK_REFINEMENT.fusionRadiiShare;
  return {
    guidedHalf: Math.max(1, Math.round(guided / 2)),
    wideHalf: Math.max(2, Math.round((wide * height) / 2)),
    narrow: Math.max(1, Math.round(narrow * height)),
  };
}

// refineMask and estimateForeground read the same photo's planes: converted once (the pipeline
// never changes a photo's pixels in place; a new photo is a new buffer).
const planesOf = new WeakMap<Uint8Array, [Float32Array, Float32Array, Float32Array]>();

function planes(rgb: RawImage): [Float32Array, Float32Array, Float32Array] {
  const known = planesOf.get(rgb.data);
  if (known && known[0].length === rgb.width * rgb.height) return known;
  const n = rgb.width * rgb.height;
  const p: [Float32Array, Float32Array, Float32Array] = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
  splitPlanes(rgb.data, p[0], p[1], p[2]);
  planesOf.set(rgb.data, p);
  return p;
}

function splitPlanes(d: Uint8Array, R: Float32Array, G: Float32Array, B: Float32Array): void {
  for (let i = 0, j = 0; i < R.length; i++, j += 3) {
    R[i] = d[j] / 255;
    G[i] = d[j + 1] / 255;
    B[i] = d[j + 2] / 255;
  }
}

/** The guided filter's linear coefficients at half resolution, window-averaged: q = aR R + aG G + aB B + b. */
interface LowCoefficients {
  planes: Float32Array[];
  width: number;
  height: number;
}

interface UpsampleTaps {
  i0: Int32Array;
  i1: Int32Array;
  t: Float64Array;
}

/**
 * Bilinear taps from downsample2's half-resolution grid back to full resolution along one axis:
 * output pixel k of `length` blends source pixels i0[k] and i1[k] of `lowLength`, with weight
 * t[k] on the second.
 */
function upsampleTaps(length: number, lowLength: number): UpsampleTaps {
  const i0 = new Int32Array(length);
  const i1 = new Int32Array(length);
  const t = new Float64Array(length);
  for (let k = 0; k < length; k++) {
    const f = Math.min(lowLength - 1, Math.max(0, (k + 0.5) / 2 - 0.5));
    i0[k] = Math.floor(f);
    i1[k] = Math.min(lowLength - 1, i0[k] + 1);
    t[k] = f - i0[k];
  }
  return { i0, i1, t };
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
 * up(aB) B + up(b) (up: bilinear, upsampleTaps), 0 outside `inside`, as a WebAssembly kernel
 * (wasm/assembly/pixels.ts, tighten). q is evaluated only at the soft edge: cells whose linear
 * model cannot reach the ramp for any colour (R, G, B in 0..1 put q between b plus the negative
 * coefficients and b plus the positive ones; a pixel interpolates up to four cells with weights
 * summing to 1) give every pixel they reach 0 (below the ramp) or 1 (above it), as evaluation
 * would; a float32 margin covers rounding. skipDecided: false evaluates every pixel (the
 * reference the shortcut is tested against).
 */
function combineTightened(input: TightenInput, skipDecided: boolean): Float32Array {
  const { low, I, w, h, lo, hi, inside } = input;
  const t = new Float32Array(w * h);
  tightenInto(low.planes, low.width, low.height, I, w, h, upsampleTaps(w, low.width), upsampleTaps(h, low.height), lo, hi, inside, skipDecided, t);
  return t;
}

/**
 * Refined alpha (0..1) at the photo's resolution. `prob` is the person probability resampled to
 * the photo; `inside` marks pixels that came from the source image (others are background fill).
 */
export function refineMask(rgb: RawImage, prob: Float32Array, inside?: Uint8Array, options: { skipDecided?: boolean; photoHeight?: number } = {}): Float32Array {
  const { width: w, height: h } = rgb;
  // photoHeight: the whole photo's, when `rgb` is a band of it (edge-bands.ts): the radii are the photo's.
  const { guidedHalf } = refinementRadii(options.photoHeight ?? h);
  const I = planes(rgb);
  // Colour guided filter, "fast" variant (He & Sun 2015): the linear coefficients at half
  // resolution (the guide and the mask halved, window means of them and of their products, a 3x3
  // covariance solve per cell, window means of the coefficients: one WebAssembly kernel);
  // combineTightened upsamples them and evaluates the output with the full-resolution guide.
  const low: LowCoefficients = guidedCoefficients(I, prob, w, h, guidedHalf, MASK_REFINEMENT.guidedEps);
  // skipDecided: false evaluates every pixel (the reference the shortcut is tested against).
  const t = combineTightened({ low, I, w, h, lo: MASK_REFINEMENT.tightenLow, hi: MASK_REFINEMENT.tightenHigh, inside }, options.skipDecided ?? true);
  const alpha = boxMean(t, w, h, MASK_REFINEMENT.featherRadius);
  if (inside) zeroOutside(alpha, inside);
  return alpha;
}

/** values[i] = 0 where !inside[i]. */
export function zeroOutside(values: Float32Array, inside: Uint8Array): void {
  for (let i = 0; i < values.length; i++) if (!inside[i]) values[i] = 0;
}

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
export function estimateForeground(rgb: RawImage, alpha: Float32Array, photoHeight = rgb.height): RawImage {
  const { width: w, height: h, data } = rgb;
  const n = w * h;
  const out = new Uint8Array(data);
  const bandMask = new Uint8Array(n);
  markBand(alpha, bandMask);
  const band = indicesOf(bandMask);
  if (band.length === 0) return { data: out, width: w, height: h, channels: 3 };
  const I = planes(rgb);
  const { wideHalf: r1, narrow: r2 } = refinementRadii(photoHeight);
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

/**
 * fg (through `luts`: the enhancement's tables, applied here rather than in a pass of their own)
 * over the background colour with alpha.
 */
export function compositeOnBackground(fg: RawImage, alpha: Float32Array, background: Rgb, luts: ChannelLuts = IDENTITY_LUTS): RawImage {
  const out = new Uint8Array(fg.width * fg.height * 3);
  blendOnBackgroundInto(fg.data, luts, alpha, background, out);
  return { data: out, width: fg.width, height: fg.height, channels: 3 };
}

/** img (through `luts`, as compositeOnBackground) with the pixels that did not come from the source (crop beyond the image) filled with the background. */
export function fillOutside(img: RawImage, inside: Uint8Array, background: Rgb, luts: ChannelLuts = IDENTITY_LUTS): RawImage {
  const out = new Uint8Array(img.data.length);
  fillWhereOutside(img.data, inside, background, luts[0], luts[1], luts[2], out);
  return { ...img, data: out };
}

function fillWhereOutside(d: Uint8Array, inside: Uint8Array, background: Rgb, lr: Uint8Array, lg: Uint8Array, lb: Uint8Array, out: Uint8Array): void {
  for (let i = 0, j = 0; i < inside.length; i++, j += 3) {
    if (inside[i]) {
      out[j] = lr[d[j]];
      out[j + 1] = lg[d[j + 1]];
      out[j + 2] = lb[d[j + 2]];
    } else {
      out[j] = background[0];
      out[j + 1] = background[1];
      out[j + 2] = background[2];
    }
  }
}
