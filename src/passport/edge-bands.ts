// The output's render, mask refinement and foreground estimation (background.ts) on both cores.
// At the output's resolution they are the pipeline's largest pixel work (~35 ms for the bicubic
// render of 600 x 600, ~80-95 ms for the edges), and they run while the other core has nothing to
// do (the crop's rectangle is decoded; the detector thread waits for the output measure). The
// photo is cut into two horizontal bands, each with bandMargin rows beyond its own half, so that
// every filter window its own rows reach lies inside it: the same rendered pixels bit for bit as
// on the whole photo, and the same alpha and composite up to float rounding (the box filters'
// running sums start at another row: alpha within 1e-6; where alpha is ~0 the foreground estimate
// may differ, unseen) (test/passport/edge-bands.test.ts). The top band is rendered and
// refined on this thread, the bottom one on the edge thread (a worker thread of its own, so it
// never waits behind detector calls), from the source rows it reads.
import { estimateForeground, MASK_REFINEMENT, refineMask, refinementRadii, zeroOutside } from './background.js';
import { RequestThread } from '../vision/request-thread.js';
import { sourceRowsFor, warpFloatBilinearRows, warpRgbBicubicRows } from '../vision/warp.js';
import { type AffineMap, type RawImage, type Rgb, type SourceRows } from '../vision/raw-image.js';

export interface RefinedEdges {
  /** Refined alpha (0..1) per pixel. */
  alpha: Float32Array;
  /** Foreground colours with the old background removed at the soft edge. */
  fg: RawImage;
}

/** Both steps on one image (`photoHeight`: the whole photo's, which sets the filters' radii; `faceTopRow`: refineMask's unsureFromRow). */
export function refineEdgesWhole(rgb: RawImage, prob: Float32Array, inside: Uint8Array, photoHeight = rgb.height, faceTopRow?: number): RefinedEdges {
  const alpha = refineMask(rgb, prob, inside, { photoHeight, unsureFromRow: faceTopRow });
  return { alpha, fg: estimateForeground(rgb, alpha, photoHeight) };
}

/**
 * Rows a band needs beyond its own so that its own rows come out as on the whole photo: how far
 * (in full-resolution rows) the chained filters reach with background.ts's refinementRadii,
 * rounded up to an even count (the half-resolution steps pair rows 2k, 2k + 1).
 *  - alpha: the guided filter's two box means at half resolution (2 x rl half rows = 4 rl rows),
 *    the 2x2 reduction and the bilinear enlargement (2 + 2), the feather, the colour line's window
 *    and its 3x3 mean of the colours;
 *  - colours: blur fusion's wide pass (r1 half rows = 2 r1 rows, reduction and enlargement 2 + 2)
 *    and its narrow pass (the edge band grown by r2, then windows of r2: 2 r2), on that alpha.
 */
export function bandMargin(photoHeight: number): number {
  const { guidedHalf: rl, wideHalf: r1, narrow: r2, colourLine } = refinementRadii(photoHeight);
  const alphaReach = 4 * rl + 4 + MASK_REFINEMENT.featherRadius + colourLine + 1;
  const colourReach = 2 * r1 + 4 + 2 * r2;
  return 2 * Math.ceil((alphaReach + colourReach) / 2);
}

/**
 * What the output photo is rendered from: the source pixels (RGB, already reduced to about the
 * output's sampling: vision/warp.ts warpSource) and the map from output pixels to them; the person
 * mask from the segmenter and its map to the output.
 */
export interface PhotoRender {
  source: RawImage;
  map: AffineMap;
  width: number;
  height: number;
  /** Colour of output pixels outside the source. */
  fill: Rgb;
  mask: { data: Float32Array; width: number; height: number; map: AffineMap };
  /** The output row of the face box's top: below it the tightening starts higher where the mask is unsure (background.ts). */
  faceTopRow: number;
}

/** The rendered photo: its pixels, which of them came from the source, and the person mask on it (0 outside). */
export interface RenderedPhoto {
  image: RawImage;
  inside: Uint8Array;
  prob: Float32Array;
}

/** Rows [v0, v1) of the rendered photo, from the source rows in `rows` (the whole source by default). */
export function renderRows(job: PhotoRender, v0: number, v1: number, rows: SourceRows = { image: job.source, top: 0, fullHeight: job.source.height }): RenderedPhoto {
  const { image, inside } = warpRgbBicubicRows(rows, job.map, job.width, v0, v1, job.fill);
  const prob = warpFloatBilinearRows(job.mask.data, job.mask.width, job.mask.height, job.mask.map, job.width, v0, v1);
  zeroOutside(prob, inside);
  return { image, inside, prob };
}

/** The bottom band's answer from the edge thread: its rendered rows and their refined edges. */
interface BandReply {
  image: Uint8Array;
  inside: Uint8Array;
  alpha: Float32Array;
  fg: Uint8Array;
}

/** What the edge thread is sent: the job with only the source rows the band reads, and the band's first row. */
export interface BandRequest extends Omit<PhotoRender, 'source'> {
  rows: { data: Uint8Array; width: number; top: number; height: number; fullHeight: number };
  v0: number;
}

/** The bottom band's work (on the edge thread, or here when it fails): rows [v0, height), rendered and refined. */
export function renderAndRefineBand(m: BandRequest): BandReply {
  const { rows, v0, ...rest } = m;
  const job: PhotoRender = { ...rest, source: { data: rows.data, width: rows.width, height: rows.height, channels: 3 } };
  const band = renderRows(job, v0, m.height, { image: job.source, top: rows.top, fullHeight: rows.fullHeight });
  const { alpha, fg } = refineEdgesWhole(band.image, band.prob, band.inside, m.height, m.faceTopRow - v0);
  return { image: band.image.data, inside: band.inside, alpha, fg: fg.data };
}

/** A band's work should take well under a second; a thread silent this long is replaced. */
export const EDGE_CALL_TIMEOUT_MS = 30_000;

const thread = new RequestThread(new URL('./edge-thread.worker.js', import.meta.url), 'edge refinement thread', EDGE_CALL_TIMEOUT_MS);

/**
 * The photo rendered (renderRows) and its edges refined (refineEdgesWhole), on two bands at once
 * (top here, bottom on the edge thread) when `bothCores`; the whole photo here when not, or when
 * it is too small to split. A failed thread's band is computed here.
 */
export async function renderAndRefineEdges(job: PhotoRender, bothCores = true): Promise<{ image: RawImage; inside: Uint8Array } & RefinedEdges> {
  const { width: w, height: h } = job;
  const margin = bandMargin(h);
  // The split row is even, so both bands pair the same rows at half resolution.
  const split = 2 * Math.floor(h / 4);
  if (!bothCores || split - margin < 2 || split + margin > h - 2) {
    const whole = renderRows(job, 0, h);
    return { image: whole.image, inside: whole.inside, ...refineEdgesWhole(whole.image, whole.prob, whole.inside, h, job.faceTopRow) };
  }
  const v0 = split - margin;
  const { top, bottom } = sourceRowsFor(job.map, w, v0, h, job.source.height);
  const stride = job.source.width * 3;
  // Copies the thread takes over: the source rows the band reads and the (small) mask.
  const request: BandRequest = {
    rows: { data: job.source.data.slice(top * stride, bottom * stride), width: job.source.width, top, height: bottom - top, fullHeight: job.source.height },
    map: job.map,
    width: w,
    height: h,
    fill: job.fill,
    mask: { ...job.mask, data: new Float32Array(job.mask.data) },
    faceTopRow: job.faceTopRow,
    v0,
  };
  const away = thread.call<BandReply>(request, [request.rows.data.buffer as ArrayBuffer, request.mask.data.buffer as ArrayBuffer]);
  away.catch(() => undefined); // awaited below
  const upper = renderRows(job, 0, split + margin);
  const edges = refineEdgesWhole(upper.image, upper.prob, upper.inside, h, job.faceTopRow);
  // The thread took the copies over; a failed call is computed here from views of the originals.
  const low = await away.catch(() =>
    renderAndRefineBand({ ...request, rows: { ...request.rows, data: job.source.data.subarray(top * stride, bottom * stride) }, mask: job.mask }),
  );
  const image = new Uint8Array(w * h * 3);
  const inside = new Uint8Array(w * h);
  const alpha = new Float32Array(w * h);
  const fg = new Uint8Array(w * h * 3);
  joinBands(upper.image.data, low.image, image, split * w * 3, margin * w * 3);
  joinBands(upper.inside, low.inside, inside, split * w, margin * w);
  joinBands(edges.alpha, low.alpha, alpha, split * w, margin * w);
  joinBands(edges.fg.data, low.fg, fg, split * w * 3, margin * w * 3);
  return { image: { data: image, width: w, height: h, channels: 3 }, inside, alpha, fg: { data: fg, width: w, height: h, channels: 3 } };
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
