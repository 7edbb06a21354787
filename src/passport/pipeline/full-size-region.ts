// The full-size pixels the photo is rendered from. Large JPEGs are detected on a reduced working
// copy; the rectangle the crop needs is decoded at full size (reduced by libvips' DCT scaling as far
// as the crop's sampling allows), started ahead from the first face found (prefetchRegion).
import { affineFromFrame, type Box, type FaceKeypoints } from '../../vision/face-frame.js';
import type { DetectedFace } from '../../vision/face-detector.js';
import type { AffineMap, PixelBounds, RawImage } from '../../vision/raw-image.js';
import { faceInFrame, keypointsFromBox, makeFaceFrame, planCrop } from '../geometry.js';
import { largeWorkingShrink, type DecodedInput } from '../image.js';
import type { PassportSpec } from '../specs.js';
import type { NormalizedBox } from '../face-box.js';

/** Full-size pixels decoded for a rectangle (possibly reduced by `reduce`), and the rectangle. */
export interface FullSizeRegion {
  bounds: PixelBounds;
  reduce: number;
  image: RawImage;
  left: number;
  top: number;
  scaleX: number;
  scaleY: number;
}

/** Output map (output pixel -> working-copy coordinates) scaled to full-size coordinates. */
function toFullSize(decoded: DecodedInput, map: AffineMap): AffineMap {
  const kx = decoded.originalWidth / decoded.image.width;
  const ky = decoded.originalHeight / decoded.image.height;
  return { ox: map.ox * kx, oy: map.oy * ky, dux: map.dux * kx, duy: map.duy * ky, dvx: map.dvx * kx, dvy: map.dvy * ky };
}

/** The full-size rectangle the samples of `full` need, plus the resampling kernels' reach. */
function boundsOf(full: AffineMap, width: number, height: number, margin = 0): PixelBounds {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const [u, v] of [[0, 0], [width, 0], [0, height], [width, height]]) {
    xs.push(full.ox + u * full.dux + v * full.dvx);
    ys.push(full.oy + u * full.duy + v * full.dvy);
  }
  // renderWarp's reduction pads by 3 steps, the bicubic kernel reaches 2 pixels.
  const pad = 3 * Math.max(1, Math.hypot(full.dux, full.duy)) + 2 + margin;
  return {
    left: Math.floor(Math.min(...xs) - pad),
    top: Math.floor(Math.min(...ys) - pad),
    right: Math.ceil(Math.max(...xs) + pad),
    bottom: Math.ceil(Math.max(...ys) + pad),
  };
}

/**
 * Faces (box height, working-copy pixels) below this in a reduced working copy are looked for
 * again in a larger one (largeWorkingShrink): refinement and segmentation measure the head on the
 * working copy.
 * The corpus portraits measure 86-193 px in their own 512 px photos and 90-236 px in the reduced
 * copies of their 12 MP versions (the bench's: 123), all measured well; a person further away
 * (55 px) was refused.
 */
export const MIN_WORKING_FACE_PX = 80;

/** A reduced working copy in which no face was found, or the face (or manual box) is small. */
export function needsLargerCopy(decoded: DecodedInput, faces: DetectedFace[], manual: NormalizedBox | null): boolean {
  if (decoded.shrink <= largeWorkingShrink(Math.max(decoded.originalWidth, decoded.originalHeight))) return false;
  const height = manual ? manual.height * decoded.image.height : (faces[0]?.box.height ?? 0);
  return height < MIN_WORKING_FACE_PX;
}

/** The face as first detected (or the manual box), before refinement; null when there is none. */
export function roughFace(src: RawImage, faces: DetectedFace[], manual: NormalizedBox | null): { box: Box; keypoints: FaceKeypoints; hasKeypoints: boolean } | null {
  if (manual) {
    const box: Box = { x: manual.x * src.width, y: manual.y * src.height, width: manual.width * src.width, height: manual.height * src.height };
    return { box, keypoints: keypointsFromBox(box), hasKeypoints: false };
  }
  return faces[0] ? { box: faces[0].box, keypoints: faces[0].keypoints, hasKeypoints: true } : null;
}

/**
 * Crown positions (box heights above the face box) whose crops bound the crops planned later: the
 * corpus measures 0.53-0.87, a hat included; a crown outside this range decodes its own rectangle.
 */
const PREFETCH_CROWNS = [0.35, 1.0] as const;
/** Margin around the prefetched rectangle for refinement and levelling, in face-box heights. */
const PREFETCH_MARGIN = 0.1;
/** The prefetched rectangle is reduced so the smallest plausible head still samples it at this step. */
const PREFETCH_STEP_LEFT = 1.0;

/**
 * Starts decoding the full-size rectangle covering the crops planned for the smallest and the
 * largest plausible head around the rough face (the crop's edges move linearly with the head
 * size between them), with a margin for what refinement and levelling change, reduced while
 * decoding to the smallest head's sampling step. The photo is rendered from it when it covers the
 * final crop and the final step is not smaller; otherwise the final rectangle is decoded.
 */
export function prefetchRegion(decoded: DecodedInput, spec: PassportSpec, rough: ReturnType<typeof roughFace>): Promise<FullSizeRegion> | null {
  if (!rough) return null;
  const frame = makeFaceFrame(rough.keypoints, rough.hasKeypoints);
  const face = faceInFrame(frame, rough);
  const steps: number[] = [];
  const all: PixelBounds[] = PREFETCH_CROWNS.map((k) => {
    const plan = planCrop(spec, frame, face, face.boxTopB - k * face.boxHeight);
    const full = toFullSize(decoded, affineFromFrame(frame, plan.a0, plan.b0, 1 / plan.scale));
    steps.push(Math.hypot(full.dux, full.duy));
    return boundsOf(full, spec.digital.width, spec.digital.height, PREFETCH_MARGIN * face.boxHeight * (decoded.originalWidth / decoded.image.width));
  });
  // Reduce while decoding (libvips, off the main thread) as far as the smallest head's crop allows:
  // the render then resamples at about 1:1.
  const reduce = Math.max(1, Math.min(...steps) / PREFETCH_STEP_LEFT);
  const bounds: PixelBounds = {
    left: Math.max(0, Math.min(...all.map((b) => b.left))),
    top: Math.max(0, Math.min(...all.map((b) => b.top))),
    right: Math.min(decoded.originalWidth, Math.max(...all.map((b) => b.right))),
    bottom: Math.min(decoded.originalHeight, Math.max(...all.map((b) => b.bottom))),
  };
  if (bounds.right - bounds.left < 2 || bounds.bottom - bounds.top < 2) return null;
  const p = decoded.region(bounds, reduce).then((r) => ({ bounds, reduce, ...r }));
  p.catch(() => undefined); // a failure surfaces when (if) it is awaited
  return p;
}

/**
 * The full-size pixels that `map` (output pixel -> working-copy coordinates) samples, and the map
 * onto them: the prefetched rectangle when it covers what the map needs, else only the rectangle
 * the map needs is decoded.
 */
export async function fullSizeRegion(
  decoded: DecodedInput,
  map: AffineMap,
  width: number,
  height: number,
  prefetch: Promise<FullSizeRegion> | null,
): Promise<{ image: RawImage; map: AffineMap }> {
  const full = toFullSize(decoded, map);
  const need = boundsOf(full, width, height);
  const clipped: PixelBounds = {
    left: Math.max(0, need.left),
    top: Math.max(0, need.top),
    right: Math.min(decoded.originalWidth, need.right),
    bottom: Math.min(decoded.originalHeight, need.bottom),
  };
  const pre = prefetch ? await prefetch : null;
  // Usable when it covers the crop and, reduced, is still sampled at a step of at least 1 (never enlarged).
  const step = Math.hypot(full.dux, full.duy);
  const covers =
    pre && pre.bounds.left <= clipped.left && pre.bounds.top <= clipped.top && pre.bounds.right >= clipped.right && pre.bounds.bottom >= clipped.bottom && step >= pre.reduce;
  const region = covers ? pre : await decoded.region(need);
  const { scaleX: sx, scaleY: sy } = region;
  return {
    image: region.image,
    map: { ox: (full.ox - region.left) * sx, oy: (full.oy - region.top) * sy, dux: full.dux * sx, duy: full.duy * sy, dvx: full.dvx * sx, dvy: full.dvy * sy },
  };
}
