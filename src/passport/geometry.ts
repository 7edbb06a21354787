// Pure geometry: head roll, chin and crown estimates, and the spec-exact crop. No I/O, no models.
//
// Coordinates are continuous pixel coordinates of the (EXIF-oriented) source image: x right, y
// down, (0, 0) is the top-left corner of the top-left pixel, pixel (i, j) has its centre at
// (i + 0.5, j + 0.5). The "face frame" is the source rotated about the eye midpoint E so that the
// eye line is horizontal: a point p has face-frame coordinates
//   a = (p - E) . ex   (along the eyes, towards the image-right eye)
//   b = (p - E) . ey   (down the face; the eye line is b = 0)
// with ex = (cos t, sin t), ey = (-sin t, cos t) and t the roll applied (0 when |roll| <= 1 deg).
import { frameAt, fromFrame, rollDegrees, toFrame, type Box, type FaceFrame, type FaceKeypoints, type Point } from '../vision/face-frame.js';
import type { PassportSpec, Range } from './specs.js';

export interface FaceLike {
  box: Box;
  keypoints: FaceKeypoints;
}

// ---------------------------------------------------------------------------------------------
// Documented constants. Calibrated by hand-labelling crown (top of hair or headwear), chin and
// eyes in the three corpus portraits (test/fixtures/corpus/faces; labels in
// test/passport/helpers.ts) against refined BlazeFace short-range detections (face-detector.ts).
// ---------------------------------------------------------------------------------------------

/**
 * Chin from the face box: chin = box top + CHIN_BOX_RATIO x box height. Measured 1.06 (astronaut,
 * wide smile), 0.95 (Hopper), 1.13 (cameraman, 3/4 profile: small box). Others use 0.88 on
 * unrefined boxes, which sit lower on the forehead.
 */
export const CHIN_BOX_RATIO = 1.02;
/**
 * Chin from the keypoints: chin = mouth + CHIN_MOUTH_EXTENSION x (mouth - eye line), along the
 * face's vertical axis. Measured 0.70, 0.48, 0.71.
 */
export const CHIN_MOUTH_EXTENSION = 0.6;
// The chin used is the mean of the two estimators; on the corpus its error is -2.5 %, +4.4 % and
// -3.8 % of the head height (the spec ranges are +-16 % wide around their middle).
/**
 * Crown fallback when the person mask gives no plausible head top: crown = box top -
 * CROWN_FALLBACK_RATIO x box height. Measured with hair / headwear: 0.59, 0.57 (cap), 1.02
 * (profile); the anatomical skull top is ~0.25-0.3. 0.5 is a compromise: it is a last resort and
 * produces a warning.
 */
export const CROWN_FALLBACK_RATIO = 0.5;
/** A mask crown is accepted when box top - crown lies in [CROWN_MIN, CROWN_MAX] x box height. */
export const CROWN_MIN_RATIO = 0.1;
export const CROWN_MAX_RATIO = 1.3;
/** Column band for the crown search: the face box centre +- this share of the box width. */
export const CROWN_BAND_HALF_WIDTH = 0.3;
/** A mask row counts as "head" when at least this share of the band is person (p >= 0.5). */
export const CROWN_ROW_COVERAGE = 0.12;
/** Without keypoints (manual face box and no matching detection): eye line and mouth as box shares. */
export const EYE_BOX_RATIO = 0.3; // measured 0.30, 0.26, 0.35
export const MOUTH_BOX_RATIO = 0.75; // measured 0.75, 0.73, 0.81
export const EYE_HALF_SPACING_BOX_RATIO = 0.21; // frontal faces: 0.22, 0.21
/** Minimum gap above the crown and below the chin, as a share of the photo height. */
export const MIN_TOP_MARGIN = 0.03;
export const MIN_BOTTOM_MARGIN = 0.05;

// ---------------------------------------------------------------------------------------------

/** The frame at the eyes' midpoint, turned by any roll when `level` (the photo is resampled once either way; night
 * shots' eye lines on the output: <= 2.5 degrees over 144 noise patterns x 8 documents, 2.9 leaving rolls under 1). */
export function makeFaceFrame(k: Pick<FaceKeypoints, 'rightEye' | 'leftEye'>, level = true): FaceFrame {
  return frameAt({ x: (k.rightEye.x + k.leftEye.x) / 2, y: (k.rightEye.y + k.leftEye.y) / 2 }, level ? rollDegrees(k) : 0);
}

/**
 * The head's roll, degrees: asin of the eyes' height difference over their distance, or over a
 * frontal face's (2 x EYE_HALF_SPACING_BOX_RATIO box widths) when the face is turned: its eye line,
 * foreshortened by cos(yaw), magnifies the roll and the keypoints' error (3/4 profile: 1.75x).
 */
export function headRollDegrees({ box, keypoints: { rightEye: r, leftEye: l } }: FaceLike): number {
  const eyes = Math.max(Math.hypot(l.x - r.x, l.y - r.y), 2 * EYE_HALF_SPACING_BOX_RATIO * box.width);
  return (Math.asin((l.y - r.y) / eyes) * 180) / Math.PI;
}

/** Keypoints estimated from a bare face box (manual box without a matching detection). */
export function keypointsFromBox(box: Box): FaceKeypoints {
  const cx = box.x + box.width / 2;
  const eyeY = box.y + EYE_BOX_RATIO * box.height;
  const dx = EYE_HALF_SPACING_BOX_RATIO * box.width;
  const mouthY = box.y + MOUTH_BOX_RATIO * box.height;
  return {
    rightEye: { x: cx - dx, y: eyeY }, leftEye: { x: cx + dx, y: eyeY }, noseTip: { x: cx, y: (eyeY + mouthY) / 2 },
    mouth: { x: cx, y: mouthY }, rightEar: { x: box.x, y: eyeY }, leftEar: { x: box.x + box.width, y: eyeY },
  };
}

/** Face measurements in the face frame (source pixels). */
export interface FaceInFrame {
  /** Horizontal centre of the face box. */
  centerA: number;
  /** Top of the face box (brows / forehead, not the crown). */
  boxTopB: number;
  boxHeight: number;
  boxWidth: number;
  mouthB: number;
  chinB: number;
  chinFromBoxB: number;
  chinFromKeypointsB: number;
  fallbackCrownB: number;
}

export function faceInFrame(frame: FaceFrame, face: FaceLike): FaceInFrame {
  const { box, keypoints } = face;
  const c = toFrame(frame, { x: box.x + box.width / 2, y: box.y + box.height / 2 });
  const boxTopB = c.b - box.height / 2;
  const mouthB = toFrame(frame, keypoints.mouth).b; // eye line is b = 0
  const chinFromBoxB = boxTopB + CHIN_BOX_RATIO * box.height;
  const chinFromKeypointsB = mouthB + CHIN_MOUTH_EXTENSION * Math.max(0, mouthB);
  return {
    centerA: c.a, boxTopB, boxHeight: box.height, boxWidth: box.width, mouthB, chinFromBoxB, chinFromKeypointsB,
    chinB: (chinFromBoxB + chinFromKeypointsB) / 2,
    fallbackCrownB: boxTopB - CROWN_FALLBACK_RATIO * box.height,
  };
}

/** A probability mask sampled on an axis-aligned grid of the face frame. */
export interface FrameMask {
  data: Float32Array;
  width: number;
  height: number;
  /** Face-frame coordinates of the grid's top-left corner, and source pixels per grid pixel. */
  a0: number;
  b0: number;
  step: number;
}

export interface CrownEstimate {
  crownB: number;
  source: 'mask' | 'fallback';
  /** Why the mask was not used, when it was not. */
  reason?: string;
}

/** Mask values >= 0.5 in data[from..to]. */
function maskedInRow(data: Float32Array, from: number, to: number): number {
  let n = 0;
  for (let i = from; i <= to; i++) if (data[i] >= 0.5) n++;
  return n;
}

/**
 * Crown = top of the person mask within the face's column band, walking up from the eye line
 * while rows stay covered (so detached blobs above the head are ignored). Falls back to the box
 * ratio when the mask is missing, does not cover the eye row, or the result is implausible.
 */
export function crownFromMask(face: FaceInFrame, mask: FrameMask | null): CrownEstimate {
  const fallback = (reason: string): CrownEstimate => ({ crownB: face.fallbackCrownB, source: 'fallback', reason });
  if (!mask) return fallback('no mask');
  const { data, width, height, a0, b0, step } = mask;
  const c0 = Math.max(0, Math.floor((face.centerA - CROWN_BAND_HALF_WIDTH * face.boxWidth - a0) / step));
  const c1 = Math.min(width - 1, Math.ceil((face.centerA + CROWN_BAND_HALF_WIDTH * face.boxWidth - a0) / step));
  if (c1 <= c0) return fallback('face band outside the mask');
  const need = Math.max(2, CROWN_ROW_COVERAGE * (c1 - c0 + 1));
  const covered = (r: number): boolean => maskedInRow(data, r * width + c0, r * width + c1) >= need;
  const eyeRow = Math.min(height - 1, Math.max(0, Math.round((0 - b0) / step)));
  if (!covered(eyeRow)) return fallback('mask does not cover the eyes');
  let r = eyeRow;
  while (r > 0 && covered(r - 1)) r--;
  if (r === 0) return fallback('head touches the top of the analysed region');
  const crownB = b0 + r * step;
  const above = face.boxTopB - crownB;
  if (above < CROWN_MIN_RATIO * face.boxHeight || above > CROWN_MAX_RATIO * face.boxHeight) {
    return fallback(`mask crown ${(above / face.boxHeight).toFixed(2)} box heights above the box top`);
  }
  return { crownB, source: 'mask' };
}

/**
 * The head measured on a produced photo alone (output pixels): the face found there from scratch,
 * the crown = top of the photo's person mask in the face's column band (null when it cannot be
 * measured: `crownProblem` says why), the chin from that face (faceInFrame).
 */
export interface PhotoGeometry {
  crownY: number | null;
  crownProblem: string | null;
  eyeY: number;
  chinY: number;
  faceCenterX: number;
  roll: number;
  box: Box;
  keypoints: FaceKeypoints;
}

export interface CropPlan {
  frame: FaceFrame;
  /** Output pixels per source pixel. */
  scale: number;
  /** Face-frame coordinates of the output's top-left corner. */
  a0: number;
  b0: number;
  width: number;
  height: number;
  /** Where the head lands, in output pixels from the top. */
  crownY: number;
  chinY: number;
  eyeY: number;
  faceCenterX: number;
  headHeightRatio: number;
  eyeLineRatio: number;
}

const mid = (r: readonly [number, number]): number => (r[0] + r[1]) / 2;

/**
 * Scale so the head (crown to chin) lands in the middle of the spec's range and centre the face box
 * horizontally. Vertically, by the first rule the document allows:
 * 1. an eye-line range: the eye line at its middle, moved only as far as needed to keep
 *    MIN_TOP_MARGIN above the crown and MIN_BOTTOM_MARGIN below the chin, never outside the range;
 * 2. a top-margin range (crown to the top edge, mm): the crown at its middle;
 * 3. neither (the document only says "centred"): the head, crown to chin, centred vertically.
 */
export function planCrop(spec: PassportSpec, frame: FaceFrame, face: FaceInFrame, crownB: number): CropPlan {
  const W = spec.digital.width;
  const H = spec.digital.height;
  const headSrc = face.chinB - crownB;
  if (!(headSrc > 0)) throw new RangeError('chin above crown');
  const headRatio = mid(spec.headHeightRatio);
  const scale = (headRatio * H) / headSrc;
  const crownDown = -crownB * scale; // output px from crown down to the eye line
  const chinDown = face.chinB * scale; // output px from the eye line down to the chin
  const eyeY = spec.eyeLineRatio
    ? eyeLineInRange(spec.eyeLineRatio, H, crownDown, chinDown)
    : crownTop(spec, H, headRatio * H) + crownDown;
  const a0 = face.centerA - W / 2 / scale;
  const b0 = -eyeY / scale;
  return {
    frame, scale, a0, b0, width: W, height: H, eyeY,
    crownY: eyeY - crownDown,
    chinY: eyeY + chinDown,
    faceCenterX: (face.centerA - a0) * scale,
    headHeightRatio: headSrc * scale / H,
    eyeLineRatio: 1 - eyeY / H,
  };
}

function eyeLineInRange(range: Range, H: number, crownDown: number, chinDown: number): number {
  const eyeLo = H * (1 - range[1]);
  const eyeHi = H * (1 - range[0]);
  const lo = Math.max(eyeLo, MIN_TOP_MARGIN * H + crownDown);
  const hi = Math.min(eyeHi, H * (1 - MIN_BOTTOM_MARGIN) - chinDown);
  const eyeY = H * (1 - mid(range));
  if (lo <= hi) return Math.min(hi, Math.max(lo, eyeY));
  return Math.min(eyeHi, Math.max(eyeLo, lo)); // margins conflict: keep the eye line legal
}

/** Output y of the crown for documents without an eye-line range (rules 2 and 3 of planCrop). */
export function crownTop(spec: Pick<PassportSpec, 'topMarginMm' | 'print'>, H: number, headPx: number): number {
  if (spec.topMarginMm) return (mid(spec.topMarginMm) / spec.print.heightMm) * H;
  return (H - headPx) / 2;
}

/** Source point of an output position (continuous output pixel coordinates). */
export function outputToSource(plan: CropPlan, u: number, v: number): Point {
  return fromFrame(plan.frame, plan.a0 + u / plan.scale, plan.b0 + v / plan.scale);
}

/** Output position of a source point. */
export function sourceToOutput(plan: CropPlan, p: Point): Point {
  const { a, b } = toFrame(plan.frame, p);
  return { x: (a - plan.a0) * plan.scale, y: (b - plan.b0) * plan.scale };
}

/** Share of the output area that lies outside the source image (filled with the background colour). */
export function outsideShare(plan: CropPlan, imageWidth: number, imageHeight: number, samples = 24): number {
  let out = 0;
  for (let j = 0; j < samples; j++) {
    for (let i = 0; i < samples; i++) {
      const p = outputToSource(plan, ((i + 0.5) / samples) * plan.width, ((j + 0.5) / samples) * plan.height);
      if (p.x < 0 || p.y < 0 || p.x > imageWidth || p.y > imageHeight) out++;
    }
  }
  return out / (samples * samples);
}

