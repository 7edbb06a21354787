// Face detection with tasks-vision FaceDetector (BlazeFace short-range; full-range when the
// short-range model finds nothing, e.g. faces under ~40 px or far from the camera).
//
// BlazeFace works on a 128x128 (short) / 192x192 (full) copy of the whole image, so in a typical
// portrait the eyes are ~10 model pixels apart and one pixel of keypoint error is ~5 degrees of roll
// (measured: the roll of the corpus portraits jumped by up to 10 degrees between rotations of the
// same photo). refineFace re-runs the detector on a face-centred, roll-aligned crop where the face
// fills half the model input, twice; the refined roll follows a known rotation within ~2 degrees.
import type { Detection } from '@mediapipe/tasks-vision';
import { affineFromFrame, frameAt, fromFrame, rollDegrees, type Box, type FaceKeypoints, type Point } from './geometry.js';
import { renderWarp, warpRgbaBilinear, type RawImage } from './image.js';
import { getFaceDetector } from './mediapipe/runtime.js';
import { toImageData } from './mediapipe/polyfills.js';

export type DetectorModel = 'short' | 'full';

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

async function run(img: RawImage, model: DetectorModel): Promise<DetectedFace[]> {
  if (img.channels !== 4) throw new Error('detectFaces expects RGBA');
  const detector = await getFaceDetector(model);
  const result = detector.detect(toImageData(img.data, img.width, img.height));
  return result.detections
    .map((d) => toFace(d, img.width, img.height, model))
    .filter((f): f is DetectedFace => f !== null)
    .sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height);
}

/** Faces, largest first. Short-range first; full-range only when short-range finds none. */
export async function detectFaces(img: RawImage, options: { fallback?: boolean } = {}): Promise<{ faces: DetectedFace[]; model: DetectorModel }> {
  const short = await run(img, 'short');
  if (short.length > 0 || options.fallback === false) return { faces: short, model: 'short' };
  return { faces: await run(img, 'full'), model: 'full' };
}

/** Refinement crop: a square of this many face-box sizes, rendered at REFINE_SIZE px. */
export const REFINE_CROP_BOXES = 2;
export const REFINE_SIZE = 256;
export const REFINE_ITERATIONS = 2;

/**
 * Re-detects the face on crops centred on it (the second one rotated by the roll found by the
 * first) and returns its box and keypoints in the coordinates of `src` (RGB or RGBA). The box is
 * axis-aligned in the crop, so for a rotated crop it is the same-size box around the same centre.
 */
export async function refineFace(src: RawImage, face: DetectedFace): Promise<{ face: DetectedFace; refined: boolean }> {
  let cur = face;
  let refined = false;
  let angle = 0;
  const rgb = src.channels === 3 ? src : await dropAlpha(src);
  for (let it = 0; it < REFINE_ITERATIONS; it++) {
    const side = REFINE_CROP_BOXES * Math.max(cur.box.width, cur.box.height);
    const step = side / REFINE_SIZE;
    const frame = frameAt({ x: cur.box.x + cur.box.width / 2, y: cur.box.y + cur.box.height / 2 }, angle);
    const map = affineFromFrame(frame, -side / 2, -side / 2, step);
    const crop = await renderWarp(rgb, map, REFINE_SIZE, REFINE_SIZE, (img, m) => warpRgbaBilinear(img, m, REFINE_SIZE, REFINE_SIZE, [255, 255, 255]));
    const found = await run(crop, 'short');
    if (found.length === 0) break;
    const c = REFINE_SIZE / 2;
    found.sort((p, q) => dist2(p.box, c) - dist2(q.box, c));
    const f = found[0];
    const back = (p: Point): Point => fromFrame(frame, -side / 2 + p.x * step, -side / 2 + p.y * step);
    const centre = back({ x: f.box.x + f.box.width / 2, y: f.box.y + f.box.height / 2 });
    const k = f.keypoints;
    cur = {
      box: { x: centre.x - (f.box.width * step) / 2, y: centre.y - (f.box.height * step) / 2, width: f.box.width * step, height: f.box.height * step },
      confidence: face.confidence,
      model: face.model,
      keypoints: {
        rightEye: back(k.rightEye), leftEye: back(k.leftEye), noseTip: back(k.noseTip),
        mouth: back(k.mouth), rightEar: back(k.rightEar), leftEar: back(k.leftEar),
      },
    };
    angle = rollDegrees(cur.keypoints);
    refined = true;
  }
  return { face: cur, refined };
}

function dist2(b: Box, c: number): number {
  return (b.x + b.width / 2 - c) ** 2 + (b.y + b.height / 2 - c) ** 2;
}

async function dropAlpha(img: RawImage): Promise<RawImage> {
  const n = img.width * img.height;
  const out = new Uint8Array(n * 3);
  for (let i = 0, j = 0, k = 0; i < n; i++, j += 3, k += img.channels) {
    out[j] = img.data[k];
    out[j + 1] = img.data[k + 1];
    out[j + 2] = img.data[k + 2];
  }
  return { data: out, width: img.width, height: img.height, channels: 3 };
}
