// srcset w=auto: widths chosen so that consecutive candidates differ by about `bytesStep` bytes.
// A worker measures the image's byte curve once per version, format and quality (the bytes of
// real renders at widths SAMPLE_RATIO apart, up to the original's width); choosing widths from it
// is arithmetic, done here for any min/max/step/count without another render. Pure: the front
// door imports it.
import type { OutputFormat } from './formats.js';

/** Bytes of renders at increasing widths (one format and quality of one image version). */
export interface ByteCurve {
  widths: number[];
  bytes: number[];
}

export interface AutoWidthOptions {
  minWidth: number;
  maxWidth: number;
  bytesStep: number;
  maxImages: number;
}

/** w=auto's largest width (max_w's maximum and its cap by default). */
export const MAX_AUTO_WIDTH = 4096;
/** w=auto's defaults of min_w, bytes_step and max_images (max_w's is the original's width). */
export const AUTO_WIDTH_DEFAULTS = { min_w: 200, bytes_step: 20_000, max_images: 8 } as const;
/**
 * Widths measured are this factor apart: bytes grow smoothly with width (about as its square, less
 * for smooth images), so log-log interpolation between samples 1.3× apart is within a few per
 * cent, and the measurement costs about 2.5 renders at the largest width.
 */
const SAMPLE_RATIO = 1.3;
const SAMPLE_MIN_WIDTH = 64;
/** A last step (ending at max_w) shorter than this share of bytesStep replaces the entry before it. */
const SHORTEST_LAST_STEP = 0.5;

/** The widths a byte curve measures, up to `largest` (the original's width, at most MAX_AUTO_WIDTH). */
export function sampleWidths(largest: number): number[] {
  const top = Math.max(1, Math.min(Math.round(largest), MAX_AUTO_WIDTH));
  const widths: number[] = [];
  for (let w = Math.min(SAMPLE_MIN_WIDTH, top); w < top; w = Math.ceil(w * SAMPLE_RATIO)) widths.push(w);
  widths.push(top);
  return widths;
}

/** The key a byte curve is kept under: format and quality as the request names them. */
export function byteCurveKey(format: OutputFormat, quality: number | string): string {
  return `${format}_q${String(quality).replace(/[^a-z0-9]/gi, '_')}`;
}

/**
 * Bytes at width `w`: log-log interpolation between the samples around it (beyond the ends, the
 * end segment's slope; with one sample, bytes as the square of the width). The curve is made
 * non-decreasing first (a wider render that came out smaller counts as large as the one before).
 */
export function bytesAt(curve: ByteCurve, w: number): number {
  const xs = curve.widths;
  const ys = nonDecreasing(curve.bytes);
  if (xs.length === 1) return ys[0] * (w / xs[0]) ** 2;
  let i = 1;
  while (i < xs.length - 1 && xs[i] < w) i++;
  const [x0, x1, y0, y1] = [xs[i - 1], xs[i], Math.max(ys[i - 1], 1), Math.max(ys[i], 1)];
  const slope = Math.log(y1 / y0) / Math.log(x1 / x0);
  return y0 * Math.exp(slope * Math.log(w / x0));
}

function nonDecreasing(values: number[]): number[] {
  let top = 0;
  return values.map((v) => (top = Math.max(top, v)));
}

/** The smallest width in [lo, hi] whose bytes reach `target` (hi when none does). */
function widthReaching(curve: ByteCurve, target: number, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (bytesAt(curve, mid) >= target) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Widths from minWidth to maxWidth, each about bytesStep bytes above the one before (the last,
 * ending at maxWidth, may be shorter; one shorter than half a step takes the place of the entry
 * before it). When that gives more than maxImages widths, maxImages widths evenly spaced in bytes
 * instead (each step then larger than bytesStep).
 */
export function chooseAutoWidths(curve: ByteCurve, options: AutoWidthOptions): number[] {
  const { minWidth, maxWidth, bytesStep, maxImages } = options;
  if (![minWidth, maxWidth, bytesStep, maxImages].every((v) => Number.isInteger(v) && v >= 1)) throw new RangeError(`w=auto needs positive integers: ${JSON.stringify(options)}`);
  if (minWidth >= maxWidth || maxImages === 1) return [maxWidth];
  const widths = [minWidth];
  const topBytes = bytesAt(curve, maxWidth);
  for (;;) {
    const last = widths[widths.length - 1];
    const target = bytesAt(curve, last) + bytesStep;
    if (target >= topBytes) break;
    widths.push(widthReaching(curve, target, last + 1, maxWidth));
    if (widths[widths.length - 1] >= maxWidth) break;
  }
  const last = widths[widths.length - 1];
  if (last < maxWidth) {
    const shortLast = widths.length > 1 && topBytes - bytesAt(curve, last) < SHORTEST_LAST_STEP * bytesStep;
    if (shortLast) widths[widths.length - 1] = maxWidth;
    else widths.push(maxWidth);
  }
  if (widths.length <= maxImages) return widths;
  const lowBytes = bytesAt(curve, minWidth);
  const even = [minWidth];
  for (let k = 1; k < maxImages - 1; k++) {
    even.push(widthReaching(curve, lowBytes + (k * (topBytes - lowBytes)) / (maxImages - 1), even[even.length - 1] + 1, maxWidth - 1));
  }
  even.push(maxWidth);
  return even;
}
