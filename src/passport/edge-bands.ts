// Mask refinement and foreground estimation (background.ts) on both cores. At the output's
// resolution they are the pipeline's largest pixel work (~80-95 ms for 600 x 600), and they run
// while the other core has nothing to do (the crop's rectangle is decoded; the detector thread
// waits for the output measure). The photo is cut into two horizontal bands, each with
// bandMargin rows beyond its own half, so that every filter window its own rows reach lies inside
// it: the same alpha and colours, bit for bit, as on the whole photo (test/passport/edge-bands.test.ts).
// The top band runs on this thread, the bottom one on the edge thread (a worker thread of its own,
// so it never waits behind detector calls).
import { estimateForeground, MASK_REFINEMENT, refineMask, refinementRadii } from './background.js';
import type { RawImage } from './image.js';
import { RequestThread } from './request-thread.js';

export interface RefinedEdges {
  /** Refined alpha (0..1) per pixel. */
  alpha: Float32Array;
  /** Foreground colours with the old background removed at the soft edge. */
  fg: RawImage;
}

/** Both steps on one image (`photoHeight`: the whole photo's, which sets the filters' radii). */
export function refineEdgesWhole(rgb: RawImage, prob: Float32Array, inside: Uint8Array, photoHeight = rgb.height): RefinedEdges {
  const alpha = refineMask(rgb, prob, inside, { photoHeight });
  return { alpha, fg: estimateForeground(rgb, alpha, photoHeight) };
}

/**
 * Rows a band needs beyond its own so that its own rows come out as on the whole photo: how far
 * (in full-resolution rows) the chained filters reach with background.ts's refinementRadii,
 * rounded up to an even count (the half-resolution steps pair rows 2k, 2k + 1).
 *  - alpha: the guided filter's two box means at half resolution (2 x rl half rows = 4 rl rows),
 *    the 2x2 reduction and the bilinear enlargement (2 + 2), the feather;
 *  - colours: blur fusion's wide pass (r1 half rows = 2 r1 rows, reduction and enlargement 2 + 2)
 *    and its narrow pass (the edge band grown by r2, then windows of r2: 2 r2), on that alpha.
 */
export function bandMargin(photoHeight: number): number {
  const { guidedHalf: rl, wideHalf: r1, narrow: r2 } = refinementRadii(photoHeight);
  const alphaReach = 4 * rl + 4 + MASK_REFINEMENT.featherRadius;
  const colourReach = 2 * r1 + 4 + 2 * r2;
  return 2 * Math.ceil((alphaReach + colourReach) / 2);
}

/** The bottom band's answer from the edge thread. */
interface BandReply {
  alpha: Float32Array;
  fg: Uint8Array;
}

/** A band's work should take well under a second; a thread silent this long is replaced. */
export const EDGE_CALL_TIMEOUT_MS = 30_000;

const thread = new RequestThread(new URL('./edge-thread.worker.js', import.meta.url), 'edge refinement thread', EDGE_CALL_TIMEOUT_MS);

/** Rows [top, bottom) of an image's planes, as views (no copy). */
function rowsOf(rgb: RawImage, prob: Float32Array, inside: Uint8Array, top: number, bottom: number) {
  const w = rgb.width;
  return {
    rgb: { data: rgb.data.subarray(top * w * 3, bottom * w * 3), width: w, height: bottom - top, channels: 3 as const },
    prob: prob.subarray(top * w, bottom * w),
    inside: inside.subarray(top * w, bottom * w),
  };
}

/**
 * refineEdgesWhole's result, computed on two bands at once (top here, bottom on the edge thread);
 * on the whole photo here when it is too small to split or the thread fails.
 */
export async function refineEdges(rgb: RawImage, prob: Float32Array, inside: Uint8Array): Promise<RefinedEdges> {
  const { width: w, height: h } = rgb;
  const margin = bandMargin(h);
  // The split row is even, so both bands pair the same rows at half resolution.
  const split = 2 * Math.floor(h / 4);
  if (split - margin < 2 || split + margin > h - 2) return refineEdgesWhole(rgb, prob, inside);
  const bottom = rowsOf(rgb, prob, inside, split - margin, h);
  // Copies the thread takes over (the views of this thread's planes stay valid here).
  const message = { rgb: new Uint8Array(bottom.rgb.data), prob: new Float32Array(bottom.prob), inside: new Uint8Array(bottom.inside), width: w, height: h - split + margin, photoHeight: h };
  const away = thread.call<BandReply>(message, [message.rgb.buffer, message.prob.buffer, message.inside.buffer]);
  away.catch(() => undefined); // awaited below
  const topRows = rowsOf(rgb, prob, inside, 0, split + margin);
  const top = refineEdgesWhole(topRows.rgb, topRows.prob, topRows.inside, h);
  const low = await away.catch(() => {
    const here = refineEdgesWhole(bottom.rgb, bottom.prob, bottom.inside, h);
    return { alpha: here.alpha, fg: here.fg.data };
  });
  const alpha = new Float32Array(w * h);
  const fg = new Uint8Array(w * h * 3);
  joinBands(top.alpha, low.alpha, alpha, split * w, margin * w);
  joinBands(top.fg.data, low.fg, fg, split * w * 3, margin * w * 3);
  return { alpha, fg: { data: fg, width: w, height: h, channels: 3 } };
}

/** out = the top band's first `split` values, then the bottom band's values after its `skip`. */
function joinBands<T extends Float32Array | Uint8Array>(top: T, bottom: T, out: T, split: number, skip: number): void {
  out.set(top.subarray(0, split), 0);
  out.set(bottom.subarray(skip), split);
}

/** Ends the edge thread (worker shutdown); calls in flight fall back to this thread. */
export function closeEdgeThread(): Promise<void> {
  return thread.close();
}
