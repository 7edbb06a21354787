// q=auto: the lowest encoder quality whose decoded output keeps a luma SSIM of at least the
// variant's target against the unencoded pixels. SSIM by ssim.js (its Bezkrovny variant: 8×8
// blocks, no downsampling, so fine detail counts at the output's own size): a maintained,
// dependency-free library that takes the RGBA buffers sharp hands out. Runs in workers only.
import { ssim } from 'ssim.js';
import type { AutoQualityVariant, OutputFormat } from './params.js';
import type { RawPixels } from './transform-param.js';

/** Luma SSIM (8×8 blocks) each variant keeps at least; a fixed q=80 WebP photo reads 0.956–0.983. */
export const AUTO_QUALITY_TARGETS: Record<AutoQualityVariant, number> = { best: 0.985, good: 0.97, eco: 0.95 };

/** Qualities q=auto chooses among, per lossy format, and where its search starts. */
const QUALITY_RANGE: Record<Exclude<OutputFormat, 'png'>, { min: number; max: number; start: number }> = {
  jpeg: { min: 10, max: 95, start: 60 },
  webp: { min: 10, max: 95, start: 60 },
  avif: { min: 10, max: 90, start: 50 },
};
/** SSIM gained per quality step around the targets (measured on the corpus photos), for the first step from the start. */
const TYPICAL_SLOPE = 0.0005;
/**
 * Where a probe aims above the target: a probe that has no passing one above it aims higher, so
 * that it probably passes and brackets the target; the last aims a little above (a miss then
 * falls back to a passing probe further away).
 */
const ONE_SIDED_MARGIN = 0.004;
const LAST_PROBE_MARGIN = 0.001;
/** A passing probe this close to the target is taken at once: a lower quality would save little. */
const CLOSE_ENOUGH = 0.0015;
export const MAX_ENCODES = 4;

export interface EncodedCandidate {
  buffer: Buffer;
  /** The encoded output decoded again, RGBA. */
  decoded: RawPixels;
}

export interface ChosenQuality<E extends EncodedCandidate> {
  quality: number;
  ssim: number;
  encoded: E;
  encodes: number;
}

/** Mean luma SSIM of two RGBA images of one size (8×8 blocks). */
export function lumaSsim(reference: RawPixels, candidate: RawPixels): number {
  const asImage = (raw: RawPixels) => ({ data: new Uint8ClampedArray(raw.data.buffer, raw.data.byteOffset, raw.data.length), width: raw.info.width, height: raw.info.height });
  return ssim(asImage(reference), asImage(candidate), { ssim: 'bezkrovny', windowSize: 8, downsample: false }).mssim;
}

interface Probe {
  quality: number;
  ssim: number;
}

/**
 * The next quality to try: interpolated between the closest failing and passing probes (SSIM
 * rises smoothly with quality), extrapolated from the two nearest probes (or the typical slope)
 * when all lie on one side, rounded towards passing. Undefined when nothing untried is left.
 */
function nextQuality(probes: Probe[], target: number, range: { min: number; max: number }, last: boolean): number | undefined {
  const passing = probes.filter((p) => p.ssim >= target).sort((a, b) => a.quality - b.quality);
  const failing = probes.filter((p) => p.ssim < target).sort((a, b) => b.quality - a.quality);
  const [pass, fail] = [passing[0], failing[0]];
  const lowest = fail ? fail.quality + 1 : range.min;
  const highest = pass ? pass.quality - 1 : range.max;
  if (lowest > highest) return undefined;
  const aim = target + (last ? LAST_PROBE_MARGIN : pass && fail ? 0 : ONE_SIDED_MARGIN);
  const [a, b] = pass && fail ? [fail, pass] : pass ? [passing[1], pass] : [failing[1], fail];
  const slope = a && b && b.ssim !== a.ssim ? (b.ssim - a.ssim) / (b.quality - a.quality) : TYPICAL_SLOPE;
  const q = b.quality + (aim - b.ssim) / Math.max(slope, TYPICAL_SLOPE / 10);
  return Math.min(highest, Math.max(lowest, Math.ceil(q)));
}

/**
 * At most four encodes: from the format's start, each next quality interpolated towards the
 * target; the answer is the lowest probed quality that met it. When none has, the last probe is
 * the format's highest quality. `reference` is RGBA.
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
  let quality: number | undefined = range.start;
  while (quality !== undefined && probes.length < MAX_ENCODES) {
    const lastChance = probes.length === MAX_ENCODES - 1 && !probes.some((p) => p.ssim >= target);
    if (lastChance) quality = range.max;
    const encoded = await encode(quality);
    const ssim = lumaSsim(reference, encoded.decoded);
    probes.push({ quality, ssim, encoded });
    if (ssim >= target && ssim - target < CLOSE_ENOUGH) break;
    quality = nextQuality(probes, target, range, probes.length === MAX_ENCODES - 1);
  }
  const passing = probes.filter((p) => p.ssim >= target).sort((a, b) => a.quality - b.quality);
  const chosen = passing[0] ?? probes[probes.length - 1];
  return { quality: chosen.quality, ssim: chosen.ssim, encoded: chosen.encoded, encodes: probes.length };
}
