// Mild, documented photo corrections. Point operations only (one lookup table per channel) plus a
// light unsharp mask at encode time: nothing moves, so the face is never reshaped.
//
//  - Levels: black point from the 0.5 percentile of the person's darkest channel, white point from
//    the 99.5 percentile of its brightest channel (so no channel clips beyond that share), stretched
//    only when they fall short of 0 / 255, and by at most LEVELS_MAX_BLACK / LEVELS_MAX_WHITE.
//  - Exposure: a gamma curve that moves the mean face luma into [FACE_LUMA_TARGET] (all the way
//    when it lies outside the exposure check's range, else FACE_EXPOSURE_STRENGTH of the way);
//    gamma limited to GAMMA_LIMITS. A gamma curve keeps 0 and 255 fixed: it clips nothing.
//  - White balance: grey-pixel gains. Near-neutral pixels (chroma < WB_MAX_CHROMA, not clipped) of
//    the whole frame estimate the colour cast; gains move WB_STRENGTH of the way to neutral and are
//    limited to +-WB_MAX_GAIN. Without enough neutral pixels (WB_MIN_SHARE) nothing is changed:
//    grey-world on a portrait would tint skin (e.g. the orange suit in the corpus).
//  - Sharpening: an unsharp mask on luma (SHARPEN, libvips' sharpen curve: gentle in flat areas,
//    stronger on edges, the change limited), added to R, G and B alike so hue is kept; the flat
//    background is unaffected (vision/sharpen.ts, with SHARPEN's parameters).
import { levelStatsInto, type ChannelLuts } from './kernels/pixels.js';
import { luma, type RawImage } from '../vision/raw-image.js';

export const ENHANCE = {
  LEVELS_PERCENTILES: [0.005, 0.995] as const,
  LEVELS_MAX_BLACK: 12,
  LEVELS_MAX_WHITE: 20,
  FACE_LUMA_TARGET: [110, 175] as const,
  FACE_EXPOSURE_STRENGTH: 0.6,
  /** Outside this face luma range (the exposure check's) the correction goes all the way into the target. */
  FULL_CORRECTION_OUTSIDE: [90, 215] as const,
  GAMMA_LIMITS: [0.45, 1.6] as const,
  WB_MAX_CHROMA: 18,
  WB_MIN_SHARE: 0.04,
  WB_STRENGTH: 0.6,
  WB_MAX_GAIN: 0.06,
  /**
   * Gaussian sigma (px); slopes in flat (|detail| <= x1) and in detailed areas; largest lightening
   * and darkening. Luma levels 0-255 (libvips' defaults x1 2, y2 10, y3 20 are on L* 0-100).
   */
  SHARPEN: { sigma: 0.8, m1: 0.4, m2: 1.2, x1: 5, y2: 25, y3: 50 },
} as const;

export interface EnhanceParams {
  blackPoint: number;
  whitePoint: number;
  gamma: number;
  gains: [number, number, number];
  faceLumaBefore: number;
  faceLumaAfter: number;
  neutralShare: number;
  /** What was changed, in words (empty: nothing noticeable). */
  changes: string[];
}

/** A rectangle of pixels: x0 <= x < x1, y0 <= y < y1. */
export type Region = { x0: number; y0: number; x1: number; y1: number };

function percentile(hist: Uint32Array, total: number, q: number): number {
  const target = q * total;
  let acc = 0;
  for (let i = 0; i < 256; i++) {
    acc += hist[i];
    if (acc >= target) return i;
  }
  return 255;
}

// Pixel loops are functions of their own that write into arrays they are given (vision/warp.ts says why).

/** Mean luma over the region, of the pixels as `luts` map them (identity by default). */
function meanLuma(img: RawImage, region: Region, luts: ChannelLuts = IDENTITY_LUTS): number {
  const acc = new Float64Array(2);
  sumLuma(img, region, luts, acc);
  return acc[1] ? acc[0] / acc[1] : 128;
}

/** acc[0] += luma over the region, acc[1] += its pixel count. */
function sumLuma(img: RawImage, region: Region, luts: ChannelLuts, acc: Float64Array): void {
  let s = 0;
  let n = 0;
  const d = img.data;
  const [lr, lg, lb] = luts;
  for (let y = Math.max(0, region.y0); y < Math.min(img.height, region.y1); y++) {
    for (let x = Math.max(0, region.x0); x < Math.min(img.width, region.x1); x++) {
      const j = (y * img.width + x) * 3;
      s += luma(lr[d[j]], lg[d[j + 1]], lb[d[j + 2]]);
      n++;
    }
  }
  acc[0] += s;
  acc[1] += n;
}

/**
 * Chooses the corrections. `weight` (0..1 per pixel, e.g. the person alpha) selects the pixels the
 * levels are measured on; `face` is the inner face region (output pixels).
 */
export function planEnhancement(img: RawImage, weight: Float32Array | null, face: Region): EnhanceParams {
  const n = img.width * img.height;
  const histMin = new Uint32Array(256);
  const histMax = new Uint32Array(256);
  // counted, neutral, then the neutral pixels' R, G and B sums
  const stats = new Float64Array(5);
  // Histograms of the per-pixel min and max channel over the weighted pixels (weight >= 0.5, or
  // all), and the count and channel sums of near-neutral pixels: stats = [counted, neutral, R, G, B].
  levelStatsInto(img.data, n, weight, ENHANCE.WB_MAX_CHROMA, histMin, histMax, stats);
  const [counted, neutral] = stats;
  const sums = [stats[2], stats[3], stats[4]];
  let blackPoint = 0;
  let whitePoint = 255;
  if (counted > 100) {
    const lo = percentile(histMin, counted, ENHANCE.LEVELS_PERCENTILES[0]);
    const hi = percentile(histMax, counted, ENHANCE.LEVELS_PERCENTILES[1]);
    blackPoint = Math.min(lo, ENHANCE.LEVELS_MAX_BLACK);
    whitePoint = Math.max(hi, 255 - ENHANCE.LEVELS_MAX_WHITE);
  }
  const gains: [number, number, number] = [1, 1, 1];
  const neutralShare = neutral / n;
  if (neutralShare >= ENHANCE.WB_MIN_SHARE) {
    const grey = (sums[0] + sums[1] + sums[2]) / 3;
    for (let c = 0; c < 3; c++) {
      const full = grey / Math.max(1, sums[c]);
      const g = 1 + ENHANCE.WB_STRENGTH * (full - 1);
      gains[c] = Math.min(1 + ENHANCE.WB_MAX_GAIN, Math.max(1 - ENHANCE.WB_MAX_GAIN, g));
    }
  }
  const faceLumaBefore = meanLuma(img, face);
  // Face luma after levels (gains change luma only slightly and are ignored here).
  const leveled = Math.min(1, Math.max(1e-3, (faceLumaBefore - blackPoint) / (whitePoint - blackPoint)));
  const [tLo, tHi] = ENHANCE.FACE_LUMA_TARGET;
  const target255 = Math.min(tHi, Math.max(tLo, faceLumaBefore));
  const outside = faceLumaBefore < ENHANCE.FULL_CORRECTION_OUTSIDE[0] || faceLumaBefore > ENHANCE.FULL_CORRECTION_OUTSIDE[1];
  const strength = outside ? 1 : ENHANCE.FACE_EXPOSURE_STRENGTH;
  const goal = (faceLumaBefore + strength * (target255 - faceLumaBefore)) / 255;
  let gamma = Math.log(Math.min(0.999, Math.max(1e-3, goal))) / Math.log(leveled);
  if (!Number.isFinite(gamma)) gamma = 1;
  gamma = Math.min(ENHANCE.GAMMA_LIMITS[1], Math.max(ENHANCE.GAMMA_LIMITS[0], gamma));
  const params: EnhanceParams = { blackPoint, whitePoint, gamma, gains, faceLumaBefore, faceLumaAfter: faceLumaBefore, neutralShare, changes: [] };
  return params;
}

function identityLut(): Uint8Array {
  const lut = new Uint8Array(256);
  for (let v = 0; v < 256; v++) lut[v] = v;
  return lut;
}

/** Tables that change nothing (no enhancement). */
export const IDENTITY_LUTS: ChannelLuts = [identityLut(), identityLut(), identityLut()];

/** Per-channel lookup tables: white balance gain, then levels, then gamma. */
export function enhancementLuts(p: EnhanceParams): ChannelLuts {
  const luts: Uint8Array[] = [];
  for (let c = 0; c < 3; c++) {
    const lut = new Uint8Array(256);
    for (let v = 0; v < 256; v++) {
      const balanced = Math.min(255, v * p.gains[c]);
      let x = (balanced - p.blackPoint) / (p.whitePoint - p.blackPoint);
      x = x < 0 ? 0 : x > 1 ? 1 : x;
      lut[v] = Math.round(255 * Math.pow(x, p.gamma));
    }
    luts.push(lut);
  }
  return luts as unknown as ChannelLuts;
}

/**
 * The enhancement's tables, with its result measured on `img` (the foreground colours it applies
 * to): the face luma after it and the changes in words. The tables are applied where the pixels
 * are next written anyway (the composite, the halo measure's sums), not in a pass of their own.
 */
export function finishEnhancement(img: RawImage, p: EnhanceParams, face: Region): ChannelLuts {
  const luts = enhancementLuts(p);
  p.faceLumaAfter = meanLuma(img, face, luts);
  p.changes = describeEnhancement(p);
  return luts;
}

/** The corrections in words, for the report. */
export function describeEnhancement(p: EnhanceParams): string[] {
  const out: string[] = [];
  if (Math.abs(p.faceLumaAfter - p.faceLumaBefore) >= 3) {
    out.push(`Exposure: face brightness ${p.faceLumaBefore.toFixed(0)} -> ${p.faceLumaAfter.toFixed(0)} (of 255; gamma ${p.gamma.toFixed(2)}).`);
  }
  if (p.blackPoint > 0 || p.whitePoint < 255) out.push(`Levels: black point ${p.blackPoint}, white point ${p.whitePoint}.`);
  if (p.gains.some((g) => Math.abs(g - 1) >= 0.01)) {
    out.push(`White balance: red x${p.gains[0].toFixed(3)}, green x${p.gains[1].toFixed(3)}, blue x${p.gains[2].toFixed(3)} (from near-neutral pixels).`);
  }
  out.push('Sharpening: light unsharp mask.');
  return out;
}
