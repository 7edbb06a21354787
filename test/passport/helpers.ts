// Shared fixtures and independent measurements for the passport tests.
//
// How the tests measure the output honestly (without trusting the processor's own numbers):
//  - Eye line, roll, centring: the face detector is run on the produced JPEG (decoded again).
//  - Head height: the crown and chin were hand-labelled in the source portraits (PORTRAITS below,
//    read off 3-5x enlarged crops with a pixel grid). The source-to-output mapping is estimated
//    independently by a least-squares similarity fit between keypoints detected on the input and
//    keypoints detected on the output; the labels are mapped through it. With the background
//    replaced, the crown is also found directly in the output's pixels (first non-white rows in
//    the face's column band).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { CORPUS } from '../fixtures/images.js';
import { detectFacesInImage, refineFace, type DetectedFace } from '../../src/vision/face-detector.js';
import { closeModels } from '../../src/vision/mediapipe/runtime.js';
import { processPassportPhoto, type PassportOptions, type PassportResult } from '../../src/passport/process-passport-photo.js';
import { headRollDegrees } from '../../src/passport/geometry.js';
import { type Point, rollDegrees } from '../../src/vision/face-frame.js';
import { type RawImage } from '../../src/vision/raw-image.js';

// Root-level hook: release the models once, after every test file has run.
after(async () => {
  await closeModels();
});

export { CORPUS };
export const FACES_DIR = path.join(CORPUS, 'faces');
export const PHOTOS_DIR = path.join(CORPUS, 'photos');

export interface Portrait {
  name: string;
  file: string;
  /** 3/4 profile: eye keypoints (and so the roll) are ambiguous. */
  profile: boolean;
  /** Hand-labelled in source pixels: top of hair / headwear, bottom of the chin. */
  crown: Point;
  chin: Point;
}

export const PORTRAITS: Portrait[] = [
  { name: 'astronaut', file: path.join(FACES_DIR, '01_astronaut_collins.png'), profile: false, crown: { x: 224, y: 16 }, chin: { x: 222, y: 179 } },
  // Hopper wears a cap: the visible top of the cap is the crown (what the mask measures).
  { name: 'hopper', file: path.join(FACES_DIR, '02_grace_hopper.jpg'), profile: false, crown: { x: 257, y: 25 }, chin: { x: 262, y: 327 } },
  { name: 'cameraman', file: path.join(FACES_DIR, '03_cameraman_gray.png'), profile: true, crown: { x: 215, y: 64 }, chin: { x: 227, y: 196 } },
];

export function readCorpus(file: string): Buffer {
  return readFileSync(file);
}

// Memoized runs shared by the test files: several tests look at the same (portrait, options) result.
const runs = new Map<string, Promise<PassportResult>>();
export function processed(portrait: Portrait, options: Omit<PassportOptions, 'faceBox'>): Promise<PassportResult> {
  const key = `${portrait.name}:${JSON.stringify(options)}`;
  let p = runs.get(key);
  if (!p) {
    p = processPassportPhoto(readCorpus(portrait.file), options);
    runs.set(key, p);
  }
  return p;
}

const sourceFaces = new Map<string, Promise<FaceMeasure>>();
/** Detector measurement of a source portrait (memoized). */
export function sourceFace(portrait: Portrait): Promise<FaceMeasure> {
  let p = sourceFaces.get(portrait.name);
  if (!p) {
    p = measureFace(readCorpus(portrait.file));
    sourceFaces.set(portrait.name, p);
  }
  return p;
}

export async function decodeRgb(buf: Buffer): Promise<RawImage> {
  const { data, info } = await sharp(buf).autoOrient().toColourspace('srgb').removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: 3 };
}

export async function decodeRgba(buf: Buffer): Promise<RawImage> {
  const { data, info } = await sharp(buf).autoOrient().toColourspace('srgb').ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: 4 };
}

export interface FaceMeasure {
  face: DetectedFace;
  count: number;
  eyeY: number;
  eyeX: number;
  roll: number;
  centerX: number;
}

/** Runs the detector (plus the refinement crop) on an encoded image. */
export async function measureFace(buf: Buffer): Promise<FaceMeasure> {
  return measureDecoded(await decodeRgb(buf));
}

/**
 * The head's roll on a photo (geometry.ts, headRollDegrees), the median of the readings on the photo
 * and on copies of it moved by 1-2 px: the detector's keypoints move with its sampling grid, most a
 * 3/4 profile's far eye (one output of the cameraman read 0.8-3.2 degrees moved by 0-2 px).
 */
export async function headRollOnPhoto(buf: Buffer): Promise<number> {
  const img = await decodeRgb(buf);
  const raw = { raw: { width: img.width, height: img.height, channels: 3 as const } };
  const readings: number[] = [];
  for (const [left, top] of [[0, 0], [1, 0], [0, 1], [1, 1], [2, 2]]) {
    const { data, info } = await sharp(img.data, raw).extend({ left, top, extendWith: 'copy' }).raw().toBuffer({ resolveWithObject: true });
    readings.push(headRollDegrees((await measureDecoded({ data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: 3 })).face));
  }
  return readings.sort((a, b) => a - b)[2];
}

async function measureDecoded(img: RawImage): Promise<FaceMeasure> {
  const { faces } = await detectFacesInImage(img);
  if (faces.length === 0) throw new Error('no face found on the image under test');
  const { face } = await refineFace(img, faces[0]);
  const k = face.keypoints;
  return {
    face,
    count: faces.length,
    eyeY: (k.rightEye.y + k.leftEye.y) / 2,
    eyeX: (k.rightEye.x + k.leftEye.x) / 2,
    roll: rollDegrees(k),
    centerX: face.box.x + face.box.width / 2,
  };
}

export interface Similarity {
  a: number;
  b: number;
  tx: number;
  ty: number;
}

/** Least-squares 2-D similarity (x' = a x - b y + tx, y' = b x + a y + ty). */
export function fitSimilarity(src: Point[], dst: Point[]): Similarity {
  const n = src.length;
  const mx = src.reduce((s, p) => s + p.x, 0) / n;
  const my = src.reduce((s, p) => s + p.y, 0) / n;
  const nx = dst.reduce((s, p) => s + p.x, 0) / n;
  const ny = dst.reduce((s, p) => s + p.y, 0) / n;
  let sxx = 0;
  let sab = 0;
  let sba = 0;
  for (let i = 0; i < n; i++) {
    const x = src[i].x - mx;
    const y = src[i].y - my;
    const u = dst[i].x - nx;
    const v = dst[i].y - ny;
    sxx += x * x + y * y;
    sab += x * u + y * v;
    sba += x * v - y * u;
  }
  const a = sab / sxx;
  const b = sba / sxx;
  return { a, b, tx: nx - a * mx + b * my, ty: ny - b * mx - a * my };
}

export function applySimilarity(t: Similarity, p: Point): Point {
  return { x: t.a * p.x - t.b * p.y + t.tx, y: t.b * p.x + t.a * p.y + t.ty };
}

const CORE_KEYPOINTS = ['rightEye', 'leftEye', 'noseTip', 'mouth'] as const;

/** Source -> output mapping from independent detections on both images. */
export function mappingFromFaces(src: DetectedFace, out: DetectedFace): Similarity {
  return fitSimilarity(
    CORE_KEYPOINTS.map((k) => src.keypoints[k]),
    CORE_KEYPOINTS.map((k) => out.keypoints[k]),
  );
}

/**
 * Crown measured in the output's pixels (for photos whose background was replaced): the first row
 * from the top in which at least `coverage` of the face's column band differs from the background.
 */
export function crownByPixels(img: RawImage, bandX0: number, bandX1: number, bg: readonly number[], coverage = 0.12, threshold = 40): number {
  const x0 = Math.max(0, Math.round(bandX0));
  const x1 = Math.min(img.width - 1, Math.round(bandX1));
  const need = coverage * (x1 - x0 + 1);
  for (let y = 0; y < img.height; y++) {
    let n = 0;
    for (let x = x0; x <= x1; x++) {
      const j = (y * img.width + x) * img.channels;
      const d = Math.abs(img.data[j] - bg[0]) + Math.abs(img.data[j + 1] - bg[1]) + Math.abs(img.data[j + 2] - bg[2]);
      if (d > threshold) n++;
    }
    if (n >= need) return y;
  }
  return img.height;
}

/** Mean RGB over a rectangle. */
export function meanColor(img: RawImage, x0: number, y0: number, x1: number, y1: number): [number, number, number] {
  const s = [0, 0, 0];
  let n = 0;
  for (let y = Math.max(0, Math.round(y0)); y < Math.min(img.height, Math.round(y1)); y++) {
    for (let x = Math.max(0, Math.round(x0)); x < Math.min(img.width, Math.round(x1)); x++) {
      const j = (y * img.width + x) * img.channels;
      s[0] += img.data[j];
      s[1] += img.data[j + 1];
      s[2] += img.data[j + 2];
      n++;
    }
  }
  return [s[0] / n, s[1] / n, s[2] / n];
}

export function colorDistance(a: readonly number[], b: readonly number[]): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}

/** Places images side by side (or one image on a canvas) and returns a PNG. */
export async function canvasWith(
  width: number,
  height: number,
  items: Array<{ input: Buffer; left: number; top: number; width?: number; height?: number }>,
  background = { r: 128, g: 128, b: 128 },
): Promise<Buffer> {
  const composites = await Promise.all(
    items.map(async (it) => ({
      input: it.width || it.height ? await sharp(it.input).resize(it.width, it.height).png().toBuffer() : it.input,
      left: it.left,
      top: it.top,
    })),
  );
  return sharp({ create: { width, height, channels: 3, background } }).composite(composites).png().toBuffer();
}
