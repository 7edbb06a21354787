// q=auto: the lowest encoder quality whose decoded output keeps a luma SSIM of at least the
// variant's target against the unencoded pixels. SSIM over 8×8 blocks of BT.601 luma, at the
// output's own size (no downsampling, so fine detail counts as it is delivered). Written here
// rather than taken from a library (ssim.js computes the same measure) because the search compares
// up to four candidates with one reference: the reference's luma and block statistics are computed
// once, and each candidate costs one pass over its pixels: 3-9× less than ssim.js per candidate,
// measured side by side (docs/auto-quality.md), where ssim.js cost more than the JPEG encode it
// judged. Runs in workers only.
import type { AutoQualityVariant, OutputFormat } from './params.js';
import type { RawPixels } from './transform-param.js';

/** Luma SSIM (8×8 blocks) each variant keeps at least; a fixed q=80 WebP photo reads 0.956–0.983. */
export const AUTO_QUALITY_TARGETS: Record<AutoQualityVariant, number> = { best: 0.985, good: 0.97, eco: 0.95 };

/**
 * Qualities q=auto chooses among, per lossy format, and where the search for `auto:good` starts:
 * near the quality the corpus photos and portraits need on average (JPEG 35-60, WebP 60-80 at
 * width 1200), so that most searches end after two or three encodes.
 */
const QUALITY_RANGE: Record<Exclude<OutputFormat, 'png'>, { min: number; max: number; start: number }> = {
  jpeg: { min: 10, max: 95, start: 45 },
  webp: { min: 10, max: 95, start: 70 },
  avif: { min: 10, max: 90, start: 50 },
};
/**
 * The search works on d = ln(1 − SSIM), which falls about linearly with quality (SSIM itself
 * flattens towards 1): d falls by about this per quality step on the corpus (JPEG and WebP,
 * 0.015-0.04). It moves the start for the other variants' targets and takes the first step.
 */
const TYPICAL_LOG_SLOPE = 0.025;
/**
 * Where a probe aims above the target: a probe with no passing one above it aims higher, so that
 * it probably passes; one between a failing and a passing probe aims just above; the last aims a
 * little above (a miss then falls back to a passing probe further away). Tuned on curves of all
 * qualities of the corpus images: with these, JPEG takes 2.6 encodes and WebP 2.4 on average for
 * auto:good, at 5 % (JPEG) and 2 % (WebP) more bytes than the lowest passing quality of each image.
 */
const ONE_SIDED_MARGIN = 0.0015;
const BRACKETED_MARGIN = 0.001;
const LAST_PROBE_MARGIN = 0.001;
/** A passing probe this close to the target is taken at once: a lower quality would save little. */
const CLOSE_ENOUGH = 0.002;
export const MAX_ENCODES = 4;

export interface EncodedCandidate {
  buffer: Buffer;
  /** The encoded output decoded again. */
  decoded: RawPixels;
}

export interface ChosenQuality<E extends EncodedCandidate> {
  quality: number;
  ssim: number;
  encoded: E;
  encodes: number;
}

const BLOCK = 8;
const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;

/** What SSIM needs of the reference, computed once per search: its luma and each block's mean and variance. */
export interface LumaReference {
  width: number;
  height: number;
  luma: Float32Array;
  mean: Float64Array;
  variance: Float64Array;
  /** Pixels per block (edge blocks are partial). */
  count: Float64Array;
}

/**
 * Each 8×8 block's sums of the BT.601 luma of sRGB or grey pixels (1-4 channels, alpha ignored;
 * blocks row by row, edge blocks partial): of luma, of its squares and, given `other` (a luma of
 * the same size), of the products with it; the luma itself into `luma` when given. One pass.
 */
function blockSums(raw: RawPixels, { luma, other }: { luma?: Float32Array; other?: Float32Array }): { sum: Float64Array; squares: Float64Array; products: Float64Array } {
  const { data, info } = raw;
  const { width, height, channels } = info;
  const across = Math.ceil(width / BLOCK);
  const blocks = across * Math.ceil(height / BLOCK);
  const sum = new Float64Array(blocks);
  const squares = new Float64Array(blocks);
  const products = new Float64Array(blocks);
  const grey = channels < 3;
  for (let y = 0, i = 0, p = 0; y < height; y++) {
    const rowBlocks = Math.floor(y / BLOCK) * across;
    for (let x0 = 0; x0 < width; x0 += BLOCK) {
      const b = rowBlocks + x0 / BLOCK;
      const end = Math.min(width, x0 + BLOCK);
      let s = 0, ss = 0, sp = 0;
      for (let x = x0; x < end; x++, i++, p += channels) {
        const l = grey ? data[p] : 0.299 * data[p] + 0.587 * data[p + 1] + 0.114 * data[p + 2];
        if (luma) luma[i] = l;
        s += l;
        ss += l * l;
        if (other) sp += l * other[i];
      }
      sum[b] += s;
      squares[b] += ss;
      products[b] += sp;
    }
  }
  return { sum, squares, products };
}

/** The reference's luma and block statistics (pixels as sharp hands them out: 1-4 channels, sRGB). */
export function lumaReference(raw: RawPixels): LumaReference {
  const { width, height } = raw.info;
  const luma = new Float32Array(width * height);
  const { sum, squares } = blockSums(raw, { luma });
  const count = sum.map((_, b) => {
    const [bx, by] = [b % Math.ceil(width / BLOCK), Math.floor(b / Math.ceil(width / BLOCK))];
    return (Math.min(width, (bx + 1) * BLOCK) - bx * BLOCK) * (Math.min(height, (by + 1) * BLOCK) - by * BLOCK);
  });
  const mean = sum.map((s, b) => s / count[b]);
  const variance = squares.map((s, b) => s / count[b] - mean[b] * mean[b]);
  return { width, height, luma, mean, variance, count };
}

/** Mean SSIM over the 8×8 luma blocks of a candidate of the reference's size. */
export function lumaSsim(reference: LumaReference | RawPixels, candidate: RawPixels): number {
  const ref = 'luma' in reference ? reference : lumaReference(reference);
  if (candidate.info.width !== ref.width || candidate.info.height !== ref.height) throw new Error('SSIM of images of different sizes');
  const { sum, squares, products } = blockSums(candidate, { other: ref.luma });
  let total = 0;
  for (let b = 0; b < sum.length; b++) {
    const n = ref.count[b];
    const ma = ref.mean[b];
    const mb = sum[b] / n;
    const vb = squares[b] / n - mb * mb;
    const cov = products[b] / n - ma * mb;
    total += ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (ref.variance[b] + vb + C2));
  }
  return total / sum.length;
}

interface Probe {
  quality: number;
  ssim: number;
}

const logDistance = (ssim: number) => Math.log(Math.max(1e-6, 1 - ssim));

/** Where the search starts for a target: the format's start moved along the typical slope. */
function startQuality(range: { min: number; max: number; start: number }, target: number): number {
  const shift = (logDistance(AUTO_QUALITY_TARGETS.good) - logDistance(target)) / TYPICAL_LOG_SLOPE;
  return Math.min(range.max, Math.max(range.min, Math.round(range.start + shift)));
}

/**
 * The next quality to try: interpolated on ln(1 − SSIM) between the closest failing and passing
 * probes, extrapolated from the two nearest probes (or the typical slope) when all lie on one
 * side, rounded towards passing. Undefined when nothing untried is left.
 */
function nextQuality(probes: Probe[], target: number, range: { min: number; max: number }, last: boolean): number | undefined {
  const passing = probes.filter((p) => p.ssim >= target).sort((a, b) => a.quality - b.quality);
  const failing = probes.filter((p) => p.ssim < target).sort((a, b) => b.quality - a.quality);
  const [pass, fail] = [passing[0], failing[0]];
  const lowest = fail ? fail.quality + 1 : range.min;
  const highest = pass ? pass.quality - 1 : range.max;
  if (lowest > highest) return undefined;
  const aim = target + (last ? LAST_PROBE_MARGIN : pass && fail ? BRACKETED_MARGIN : ONE_SIDED_MARGIN);
  const [a, b] = pass && fail ? [fail, pass] : pass ? [passing[1], pass] : [failing[1], fail];
  const measured = a && b && a.ssim !== b.ssim ? (logDistance(b.ssim) - logDistance(a.ssim)) / (b.quality - a.quality) : -TYPICAL_LOG_SLOPE;
  // A slope near zero or rising (JPEG's curve has steps) would send the probe far: bounded.
  const slope = Math.min(measured, -TYPICAL_LOG_SLOPE / 5);
  const q = b.quality + (logDistance(aim) - logDistance(b.ssim)) / slope;
  return Math.min(highest, Math.max(lowest, Math.ceil(q)));
}

/**
 * At most four encodes: from the format's start (moved for the variant's target), each next
 * quality interpolated towards the target; the answer is the lowest probed quality that met it. When none has, the last probe is
 * the format's highest quality. `reference` and each decoded candidate are sRGB or grey pixels.
 */
export async function chooseQuality<E extends EncodedCandidate>(
  format: Exclude<OutputFormat, 'png'>,
  variant: AutoQualityVariant,
  reference: RawPixels,
  encode: (quality: number) => Promise<E>,
): Promise<ChosenQuality<E>> {
  const range = QUALITY_RANGE[format];
  const target = AUTO_QUALITY_TARGETS[variant];
  const probes: (Probe & { encoded: E })[] = [];
  const luma = lumaReference(reference);
  let quality: number | undefined = startQuality(range, target);
  while (quality !== undefined && probes.length < MAX_ENCODES) {
    const lastChance = probes.length === MAX_ENCODES - 1 && !probes.some((p) => p.ssim >= target);
    if (lastChance) quality = range.max;
    const encoded = await encode(quality);
    const ssim = lumaSsim(luma, encoded.decoded);
    probes.push({ quality, ssim, encoded });
    if (ssim >= target && ssim - target < CLOSE_ENOUGH) break;
    quality = nextQuality(probes, target, range, probes.length === MAX_ENCODES - 1);
  }
  const passing = probes.filter((p) => p.ssim >= target).sort((a, b) => a.quality - b.quality);
  const chosen = passing[0] ?? probes[probes.length - 1];
  return { quality: chosen.quality, ssim: chosen.ssim, encoded: chosen.encoded, encodes: probes.length };
}
