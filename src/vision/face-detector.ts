// Face detection with tasks-vision FaceDetector (BlazeFace short-range; full-range when the
// short-range model finds nothing, e.g. faces under ~40 px or far from the camera).
//
// BlazeFace works on a 128x128 (short) / 192x192 (full) copy of the whole image, so in a typical
// portrait the eyes are ~10 model pixels apart and one pixel of keypoint error is ~5 degrees of roll
// (measured: the roll of the corpus portraits jumped by up to 10 degrees between rotations of the
// same photo). refineFace re-runs the detector on face-centred crops where the face fills about
// half of the model input and takes medians; the refined roll follows a known rotation within ~2
// degrees for frontal faces (3/4 profiles stay unreliable: their eye keypoints are ambiguous).
import type { Detection } from '@mediapipe/tasks-vision';
import { getFaceDetector, type FaceDetectorModel } from './mediapipe/runtime.js';
import { toImageData } from './mediapipe/polyfills.js';
import { affineFromFrame, type Box, type FaceKeypoints, frameAt, fromFrame, iou, type Point, rollDegrees } from './face-frame.js';
import { renderWarp, warpRgbaBilinear } from './warp.js';
import { type RawImage, toRgbaMaxSide, toRgbMaxSide } from './raw-image.js';

/** Detection runs on a copy whose long side is at most this (BlazeFace itself works at 128/192 px). */
export const DETECTION_MAX_SIDE = 1280;

export type DetectorModel = 'short' | 'full' | 'tiled';

export interface DetectedFace {
  /** Pixels of the image passed in. */
  box: Box;
  confidence: number;
  keypoints: FaceKeypoints;
  model: DetectorModel;
}

const KEYPOINT_ORDER = ['rightEye', 'leftEye', 'noseTip', 'mouth', 'rightEar', 'leftEar'] as const;

function toFace(d: Detection, width: number, height: number, model: DetectorModel): DetectedFace | null {
  const bb = d.boundingBox;
  if (!bb || d.keypoints.length < 6) return null;
  const kp: Partial<Record<(typeof KEYPOINT_ORDER)[number], Point>> = {};
  KEYPOINT_ORDER.forEach((name, i) => {
    kp[name] = { x: d.keypoints[i].x * width, y: d.keypoints[i].y * height };
  });
  return {
    box: { x: bb.originX, y: bb.originY, width: bb.width, height: bb.height },
    confidence: d.categories[0]?.score ?? 0,
    keypoints: kp as FaceKeypoints,
    model,
  };
}

async function run(img: RawImage, model: FaceDetectorModel): Promise<DetectedFace[]> {
  if (img.channels !== 4) throw new Error('detectFaces expects RGBA');
  const detector = await getFaceDetector(model);
  const result = detector.detect(toImageData(img.data, img.width, img.height));
  return result.detections
    .map((d) => toFace(d, img.width, img.height, model === 'short' ? 'short' : 'full'))
    .filter((f): f is DetectedFace => f !== null)
    .sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height);
}

/**
 * Faces (RGBA image), largest first. One model first (short-range unless `first` says otherwise);
 * the other only when the first finds none and `fallback` is not false.
 */
export async function detectFaces(
  img: RawImage,
  options: { fallback?: boolean; first?: 'short' | 'full' } = {},
): Promise<{ faces: DetectedFace[]; model: DetectorModel }> {
  const first = options.first ?? 'short';
  const found = await run(img, first);
  if (found.length > 0 || options.fallback === false) return { faces: found, model: first };
  const second = first === 'short' ? 'full' : 'short';
  return { faces: await run(img, second), model: second };
}

/** Tiled last resort: square tiles of TILE_SIZE px (stride TILE_STRIDE) of a copy at most TILE_MAX_SIDE px. */
export const TILE_SIZE = 512;
export const TILE_STRIDE = 384;
export const TILE_MAX_SIDE = 2560;
/** Tiles multiply the chances of a false positive: they need a higher score. */
export const TILE_MIN_CONFIDENCE = 0.75;

function tileStarts(length: number): number[] {
  if (length <= TILE_SIZE) return [0];
  const out: number[] = [];
  for (let p = 0; p + TILE_SIZE < length; p += TILE_STRIDE) out.push(p);
  out.push(length - TILE_SIZE);
  return out;
}

/** Run the tile pass also when the largest face is smaller than this share of the image's short side. */
export const TILE_WHEN_FACE_BELOW = 0.2;

function mergeFaces(lists: DetectedFace[][]): DetectedFace[] {
  const all = lists.flat().sort((a, b) => b.confidence - a.confidence);
  const kept: DetectedFace[] = [];
  for (const f of all) if (!kept.some((k) => iou(k.box, f.box) > 0.3)) kept.push(f);
  return kept.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height);
}

/** Faces at least this share of the largest face's height count as another person; smaller ones are ignored. */
export const SIGNIFICANT_FACE_RATIO = 0.3;
/** In the tile pass, a face of SIGNIFICANT_FACE_RATIO x the largest face should measure at least this (tile pixels). */
const TILE_TARGET_FACE_PX = 64;

async function tilePass(src: RawImage, maxSide: number): Promise<DetectedFace[]> {
  const tiled = await toRgbaMaxSide(src, maxSide);
  const t = tiled.image;
  const found: DetectedFace[] = [];
  for (const y of tileStarts(t.height)) {
    for (const x of tileStarts(t.width)) {
      const w = Math.min(TILE_SIZE, t.width);
      const h = Math.min(TILE_SIZE, t.height);
      const tile = new Uint8Array(w * h * 4);
      for (let r = 0; r < h; r++) tile.set(t.data.subarray(((y + r) * t.width + x) * 4, ((y + r) * t.width + x + w) * 4), r * w * 4);
      for (const f of await run({ data: tile, width: w, height: h, channels: 4 }, 'short')) {
        if (f.confidence >= TILE_MIN_CONFIDENCE) found.push({ ...scaleFace(f, tiled.scale, x, y), model: 'tiled' });
      }
    }
  }
  return found;
}

/**
 * Faces in an RGB source image, in its pixel coordinates, largest first. Short-range and
 * full-range both run on a copy of at most DETECTION_MAX_SIDE px and are merged (short-range
 * misses faces under ~15 % of the frame; full-range misses some big ones). When nothing is found,
 * or the largest face is small in the frame (another person could be missed), short-range also runs
 * on overlapping tiles: their models see the whole image at only 128 / 192 px.
 */
export interface DetectFacesOptions {
  /** Called with the short-range faces (source coordinates, largest first) before the full-range pass. */
  onShortRange?: (faces: DetectedFace[]) => void;
  /**
   * Runs the full-range pass (detectFullRange) elsewhere, the detector thread, while this thread
   * runs the short-range pass: the same model on the same pixels, so the same faces. On failure it
   * runs here.
   */
  fullRange?: (img: RawImage) => Promise<DetectedFace[]>;
}

/** The full-range model's faces on an RGBA image, in its pixels, largest first. */
export function detectFullRange(img: RawImage): Promise<DetectedFace[]> {
  return run(img, 'full');
}

export async function detectFacesInImage(src: RawImage, options: DetectFacesOptions = {}): Promise<{ faces: DetectedFace[]; model: DetectorModel }> {
  const det = await toRgbaMaxSide(src, DETECTION_MAX_SIDE);
  const fullAway = options.fullRange?.(det.image).catch(() => run(det.image, 'full'));
  const short = (await run(det.image, 'short')).map((f) => scaleFace(f, det.scale, 0, 0));
  options.onShortRange?.(short);
  const full = (await (fullAway ?? run(det.image, 'full'))).map((f) => scaleFace(f, det.scale, 0, 0));
  let faces = mergeFaces([short, full]);
  const longSide = Math.max(src.width, src.height);
  let tileSide = 0;
  if (faces.length === 0) tileSide = Math.min(TILE_MAX_SIDE, longSide);
  else if (faces[0].box.height < TILE_WHEN_FACE_BELOW * Math.min(src.width, src.height)) {
    // Only faces that would count (>= SIGNIFICANT_FACE_RATIO of the largest) need to be found:
    // scale the tiles so those measure about TILE_TARGET_FACE_PX.
    const scale = Math.min(1, TILE_TARGET_FACE_PX / (SIGNIFICANT_FACE_RATIO * faces[0].box.height));
    tileSide = Math.min(TILE_MAX_SIDE, longSide * scale);
  }
  if (tileSide > TILE_SIZE) faces = mergeFaces([faces, await tilePass(src, tileSide)]);
  return { faces, model: faces[0]?.model ?? 'short' };
}

/** Maps a face found in an image scaled by `s` (and offset by ox, oy there) back to the source. */
function scaleFace(f: DetectedFace, s: number, ox: number, oy: number): DetectedFace {
  const p = (q: Point): Point => ({ x: (q.x + ox) / s, y: (q.y + oy) / s });
  const k = f.keypoints;
  return {
    ...f,
    box: { x: (f.box.x + ox) / s, y: (f.box.y + oy) / s, width: f.box.width / s, height: f.box.height / s },
    keypoints: {
      rightEye: p(k.rightEye), leftEye: p(k.leftEye), noseTip: p(k.noseTip),
      mouth: p(k.mouth), rightEar: p(k.rightEar), leftEar: p(k.leftEar),
    },
  };
}

/** Refinement crops: squares of REFINE_SCALES face-box sizes, rendered at REFINE_SIZE px. */
export const REFINE_SIZE = 192;
export const REFINE_SCALES = [1.8, 2.2] as const;
/**
 * Rotations of the grid crops relative to the first estimate, degrees. Without the middle 0 (4
 * crops instead of 6, ~17 ms) the corpus geometry moved little (roll <= 0.08 degrees, head height
 * <= 0.007) but the 3/4-profile cameraman, darkened, was framed differently enough for its halo
 * share to cross the limit (0.003 -> 0.038 for uk): kept.
 */
export const REFINE_ANGLES = [-4, 0, 4] as const;

const KEYPOINT_NAMES = ['rightEye', 'leftEye', 'noseTip', 'mouth', 'rightEar', 'leftEar'] as const;

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Detects on one square crop (centre, side, rotation) and maps the nearest face back to `rgb`. */
async function detectOnCrop(rgb: RawImage, centre: Point, side: number, angleDeg: number): Promise<DetectedFace | null> {
  const step = side / REFINE_SIZE;
  const frame = frameAt(centre, angleDeg);
  const map = affineFromFrame(frame, -side / 2, -side / 2, step);
  const crop = await renderWarp(rgb, map, REFINE_SIZE, REFINE_SIZE, (img, m) => warpRgbaBilinear(img, m, REFINE_SIZE, REFINE_SIZE, [255, 255, 255]));
  const found = await run(crop, 'short');
  if (found.length === 0) return null;
  const c = REFINE_SIZE / 2;
  found.sort((p, q) => dist2(p.box, c) - dist2(q.box, c));
  const f = found[0];
  const back = (p: Point): Point => fromFrame(frame, -side / 2 + p.x * step, -side / 2 + p.y * step);
  const boxCentre = back({ x: f.box.x + f.box.width / 2, y: f.box.y + f.box.height / 2 });
  const kp = {} as FaceKeypoints;
  for (const name of KEYPOINT_NAMES) kp[name] = back(f.keypoints[name]);
  const w = f.box.width * step;
  const h = f.box.height * step;
  return { box: { x: boxCentre.x - w / 2, y: boxCentre.y - h / 2, width: w, height: h }, confidence: f.confidence, keypoints: kp, model: f.model };
}

/**
 * Re-detects the face on crops where it fills about half of the model input, and returns its box
 * and keypoints in the coordinates of `src` (RGB or RGBA):
 *  1. one axis-aligned crop of 2 box sizes around the detection -> centre, size and roll;
 *  2. a grid of crops (REFINE_SCALES x REFINE_ANGLES around that roll); each crop's keypoints are
 *     mapped back and the per-coordinate median is taken. Single crops scatter by about +-2 degrees
 *     of roll and a few pixels (BlazeFace regresses all keypoints together); the median is stable.
 *  3. a median roll beyond the grid's widest angle from the first crop's: the grid again around it.
 *     A turned face's single crop can be far off (the 3/4-profile cameraman's: -0.9 degrees, the
 *     grid's 7.7; around 7.7, 8.8); frontal faces' differ by at most 3.2 (corpus, night shots).
 * A box of a rotated crop is the same-size box around the same centre. `refined` is false when the
 * detector found nothing on the first crop (the face is returned unchanged).
 */
export interface RefineGrid {
  scales: readonly number[];
  angles: readonly number[];
}

export const REFINE_GRID: RefineGrid = { scales: REFINE_SCALES, angles: REFINE_ANGLES };

const sizeOf = (f: DetectedFace): number => Math.max(f.box.width, f.box.height);
const centreOf = (f: DetectedFace): Point => ({ x: f.box.x + f.box.width / 2, y: f.box.y + f.box.height / 2 });

/**
 * The copy refinement works on: reduced so that a face of `faceSize` px is about REFINE_SIZE / 2,
 * so the crops need no further reduction; null when `src` is close enough to that already.
 */
async function refinementCopy(src: RawImage, faceSize: number): Promise<{ image: RawImage; scale: number } | null> {
  const s = Math.min(1, REFINE_SIZE / 2 / faceSize);
  return s < 0.8 ? toRgbMaxSide(src, Math.max(src.width, src.height) * s) : null;
}

export async function refineFace(src: RawImage, face: DetectedFace, grid: RefineGrid = REFINE_GRID, helper?: CropHelper): Promise<{ face: DetectedFace; refined: boolean }> {
  const small = await refinementCopy(src, sizeOf(face));
  if (small) {
    const r = await refineFace(small.image, scaleFace(face, 1 / small.scale, 0, 0), grid, helper);
    return { face: { ...scaleFace(r.face, small.scale, 0, 0), confidence: face.confidence, model: face.model }, refined: r.refined };
  }
  const rgb = src.channels === 3 ? src : dropAlpha(src);
  const first = await detectOnCrop(rgb, centreOf(face), 2 * sizeOf(face), 0);
  if (!first) return { face, refined: false };
  const seed = (f: DetectedFace): FaceSeed => ({ centre: centreOf(f), size: sizeOf(f), rollDeg: rollDegrees(f.keypoints) });
  let onGrid = await gridMedian(rgb, seed(first), grid, helper);
  if (onGrid && Math.abs(rollDegrees(onGrid.keypoints) - seed(first).rollDeg) > Math.max(...grid.angles.map(Math.abs))) {
    onGrid = (await gridMedian(rgb, seed(onGrid), grid, helper)) ?? onGrid;
  }
  return { face: { ...(onGrid ?? first), confidence: face.confidence, model: face.model }, refined: true };
}

/** Where a face is already known to be: its box centre, its box size (the larger side) and its roll. */
export interface FaceSeed {
  centre: Point;
  size: number;
  rollDeg: number;
}

/** One crop of a refinement grid: its side in face sizes (REFINE_SCALES) and its turn from the seed's roll, degrees. */
export interface GridCrop {
  scale: number;
  angle: number;
}

/** A grid's crops, scales then angles. */
function gridCrops(grid: RefineGrid): GridCrop[] {
  return grid.scales.flatMap((scale) => grid.angles.map((angle) => ({ scale, angle })));
}

/**
 * Another thread with its own detector (the detector thread) that takes the first `share` of a
 * grid's crops while this thread detects on the rest: the same model on the same pixels gives the
 * same faces, and the medians do not depend on which thread found which. `run` is given the
 * crops' own image. A failed run is done here.
 */
export interface CropHelper {
  share: number;
  run(img: RawImage, seed: FaceSeed, crops: readonly GridCrop[]): Promise<Array<DetectedFace | null>>;
}

/** The face found on each crop around `seed` in `rgb` (RGB), in rgb's pixels; null where none was. */
export async function detectOnGrid(rgb: RawImage, seed: FaceSeed, crops: readonly GridCrop[]): Promise<Array<DetectedFace | null>> {
  const out: Array<DetectedFace | null> = [];
  for (const c of crops) out.push(await detectOnCrop(rgb, seed.centre, c.scale * seed.size, seed.rollDeg + c.angle));
  return out;
}

/** Detects on each grid crop around the seed (a helper's share elsewhere) and takes the per-coordinate medians; null when no crop finds the face. */
async function gridMedian(rgb: RawImage, seed: FaceSeed, grid: RefineGrid, helper?: CropHelper): Promise<DetectedFace | null> {
  return medianFace(await detectSharing(gridCrops(grid), helper, rgb, seed, (crops) => detectOnGrid(rgb, seed, crops)));
}

/**
 * The faces found on `crops` (in order): the helper's share (the first crops) sent to it at once
 * with `img` and `seed`, the rest by `here`; a failed helper's crops by `here` too.
 */
async function detectSharing(
  crops: GridCrop[],
  helper: CropHelper | undefined,
  img: RawImage,
  seed: FaceSeed,
  here: (crops: GridCrop[]) => Promise<Array<DetectedFace | null>>,
): Promise<Array<DetectedFace | null>> {
  const away = helper ? Math.round(crops.length * helper.share) : 0;
  const there = helper && away > 0 ? helper.run(img, seed, crops.slice(0, away)) : null;
  there?.catch(() => undefined); // awaited below
  const mine = away < crops.length ? await here(crops.slice(away)) : [];
  const theirs = there ? await there.catch(() => here(crops.slice(0, away))) : [];
  return [...theirs, ...mine];
}

/** Per-coordinate medians of the faces found on a grid's crops; null when none was. */
function medianFace(found: Array<DetectedFace | null>): DetectedFace | null {
  const results = found.filter((f): f is DetectedFace => f !== null);
  if (results.length === 0) return null;
  const kp = {} as FaceKeypoints;
  for (const name of KEYPOINT_NAMES) {
    kp[name] = { x: median(results.map((r) => r.keypoints[name].x)), y: median(results.map((r) => r.keypoints[name].y)) };
  }
  const cx = median(results.map((r) => r.box.x + r.box.width / 2));
  const cy = median(results.map((r) => r.box.y + r.box.height / 2));
  const w = median(results.map((r) => r.box.width));
  const h = median(results.map((r) => r.box.height));
  return { box: { x: cx - w / 2, y: cy - h / 2, width: w, height: h }, confidence: median(results.map((r) => r.confidence)), keypoints: kp, model: 'short' };
}

/**
 * Refinement of the face found on a produced photo: 4 grid crops (both scales, the two outer
 * angles) instead of 6. Over the corpus portraits x every country the eye line, head height and
 * centring moved by at most 0.003 of the height and the roll by at most 0.9 degrees on frontal
 * faces (1.8 on the 3/4 profile, whose roll is unreliable anyway).
 */
export const OUTPUT_REFINE_GRID: RefineGrid = { scales: REFINE_SCALES, angles: [-4, 4] };

/** The faces on a produced photo: how many significant ones, and the largest, refined (null: none). */
export interface OutputFaces {
  count: number;
  face: DetectedFace | null;
}

/**
 * The face measured on a produced passport photo (RGBA) from scratch, knowing nothing of where it
 * should be: detected on the whole photo, the significant faces (>= SIGNIFICANT_FACE_RATIO of the
 * largest) counted, the largest refined on the output grid of crops around where it was found,
 * upright (+-4 degrees: a photo is meant to be level; the keypoints measure its tilt); null when
 * no crop finds it.
 */
export async function measureOutputFace(img: RawImage): Promise<OutputFaces> {
  const { faces } = await detectFaces(img);
  if (!faces.length) return { count: 0, face: null };
  const count = faces.filter((f) => f.box.height >= SIGNIFICANT_FACE_RATIO * faces[0].box.height).length;
  const small = await refinementCopy(img, sizeOf(faces[0]));
  const near = small ? scaleFace(faces[0], 1 / small.scale, 0, 0) : faces[0];
  const rgb = small?.image ?? dropAlpha(img);
  const found = await gridMedian(rgb, { centre: centreOf(near), size: sizeOf(near), rollDeg: 0 }, OUTPUT_REFINE_GRID);
  return { count, face: found && small ? scaleFace(found, small.scale, 0, 0) : found };
}

function dist2(b: Box, c: number): number {
  return (b.x + b.width / 2 - c) ** 2 + (b.y + b.height / 2 - c) ** 2;
}

function dropAlpha(img: RawImage): RawImage {
  const out = new Uint8Array(img.width * img.height * 3);
  copyRgb(img.data, img.channels, out);
  return { data: out, width: img.width, height: img.height, channels: 3 };
}

/** The first three channels of each pixel (a loop of its own: warp.ts says why). */
function copyRgb(src: Uint8Array, channels: number, out: Uint8Array): void {
  for (let j = 0, k = 0; j < out.length; j += 3, k += channels) {
    out[j] = src[k];
    out[j + 1] = src[k + 1];
    out[j + 2] = src[k + 2];
  }
}

/** Windows of detectFacesInPhoto advance by this share of their side (overlap 25 %). */
const PHOTO_WINDOW_STRIDE = 0.75;
/**
 * Pictures at least this elongated are searched for close-ups in windows: below it, a close-up
 * letterboxed whole into the short-range model's input keeps more than half its size, and one
 * whole-picture pass finds what the windows would (checked on the corpus portraits at 1.5:1).
 */
const PHOTO_WINDOWS_MIN_ASPECT = 2;

/**
 * Faces in a photograph (the upload preview behind gravity=face), RGBA, largest first; cheaper than
 * detectFacesInImage and without its refinement, stopping at the first pass that finds a face.
 * Full-range (the sparse model) on the whole picture first: it finds people in scenes (a face a tenth of the width),
 * the common case of a photo with a face. Then short-range for close-ups, which full-range misses:
 * on the whole picture when it is narrower than 2:1, else on square windows of the short side along
 * the long side, where a close-up placed in a banner fills the model's input as it would alone.
 */
export async function detectFacesInPhoto(img: RawImage): Promise<DetectedFace[]> {
  const far = await run(img, 'full-sparse');
  if (far.length > 0) return far;
  const side = Math.min(img.width, img.height);
  const wide = img.width >= img.height;
  const span = Math.max(img.width, img.height) - side;
  if (span + side < PHOTO_WINDOWS_MIN_ASPECT * side) return run(img, 'short');
  const count = Math.ceil(span / (PHOTO_WINDOW_STRIDE * side)) + 1;
  const found: DetectedFace[][] = [];
  for (let k = 0; k < count; k++) {
    const offset = Math.round((k * span) / (count - 1));
    const window = new Uint8Array(side * side * 4);
    for (let r = 0; r < side; r++) {
      const start = wide ? (r * img.width + offset) * 4 : ((r + offset) * img.width) * 4;
      window.set(img.data.subarray(start, start + side * 4), r * side * 4);
    }
    const faces = await run({ data: window, width: side, height: side, channels: 4 }, 'short');
    found.push(faces.map((f) => scaleFace(f, 1, wide ? offset : 0, wide ? 0 : offset)));
  }
  return mergeFaces(found);
}
