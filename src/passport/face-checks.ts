// Pixel measures on landmarked face regions of the produced photo: eyes open and visible, glasses,
// expression, and light on the face. The regions are placed from the BlazeFace keypoints detected
// on the output (eye centres, mouth, nose) and sized by the eye distance d, so they scale with the
// face. No extra model: the 478-point mesh of @mediapipe/face_mesh was tried through tasks-vision's
// FaceLandmarker and gave landmarks unrelated to the face (docs/passport.md, "Decisions").
import { luma, type RawImage } from '../vision/raw-image.js';
import { type FaceKeypoints, type Point } from '../vision/face-frame.js';

/** Thresholds of the face checks (calibration in docs/passport.md). */
export const FACE_CHECKS = {
  /**
   * An eye patch (0.5 d x 0.25 d around the eye keypoint) counts as an open, visible eye when its
   * luma spread (95th - 5th percentile) is at least this share of the cheek luma (iris and sclera
   * against skin) ...
   */
  EYE_MIN_CONTRAST: 0.7,
  /** ... and its mean luma is at least this share of the cheek's (dark lenses, a hand, hair). */
  EYE_MIN_LUMA_RATIO: 0.55,
  /**
   * Glasses: a frame's bridge is a dark line across the nose between the eyes. Depth of the darkest
   * row below the band's median row, as a share of the median luma, at or above this = frame.
   */
  BRIDGE_MIN_DIP: 0.16,
  /** Dark lenses: both eye patches' luma below this share of the cheek luma. */
  DARK_LENS_RATIO: 0.55,
  /** Mouth region: a pixel darker than this share of the face luma is mouth cavity. */
  CAVITY_LUMA_RATIO: 0.45,
  /** Teeth: brighter than this share of the face luma and chroma below TEETH_MAX_CHROMA. */
  TEETH_LUMA_RATIO: 1.12,
  TEETH_MAX_CHROMA: 40,
  /** Share of the mouth region that is dark (an open mouth; lips and their shadow reach ~0.12-0.27) ... */
  MAX_CAVITY_SHARE: 0.3,
  /** ... and, where the mouth must be closed, share that is teeth. */
  MOUTH_CLOSED_MAX_TEETH_SHARE: 0.06,
  /** Face halves' luma difference over the brighter half: left/right and top/bottom. */
  MAX_LEFT_RIGHT_DIFF: 0.3,
  MAX_TOP_BOTTOM_DIFF: 0.3,
} as const;

export interface EyeMeasure {
  contrast: number;
  lumaRatio: number;
}

export interface FaceMeasures {
  eyeDistance: number;
  eyes: { right: EyeMeasure; left: EyeMeasure };
  cheekLuma: number;
  bridgeDip: number;
  mouthCavityShare: number;
  mouthTeethShare: number;
  leftRightDiff: number;
  topBottomDiff: number;
  faceLuma: number;
}

interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

function rectAround(c: Point, w: number, h: number): Rect {
  return { x0: c.x - w / 2, y0: c.y - h / 2, x1: c.x + w / 2, y1: c.y + h / 2 };
}

/** Luma values (and optional chroma) of the pixels in a rectangle, clipped to the image. */
function pixels(img: RawImage, r: Rect): { l: number[]; chroma: number[] } {
  const l: number[] = [];
  const chroma: number[] = [];
  const x0 = Math.max(0, Math.floor(r.x0));
  const y0 = Math.max(0, Math.floor(r.y0));
  const x1 = Math.min(img.width, Math.ceil(r.x1));
  const y1 = Math.min(img.height, Math.ceil(r.y1));
  collectPixels(img, x0, y0, x1, y1, l, chroma);
  return { l, chroma };
}

function collectPixels(img: RawImage, x0: number, y0: number, x1: number, y1: number, l: number[], chroma: number[]): void {
  const c = img.channels;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const j = (y * img.width + x) * c;
      const R = img.data[j];
      const G = img.data[j + 1];
      const B = img.data[j + 2];
      l.push(luma(R, G, B));
      chroma.push(Math.max(R, G, B) - Math.min(R, G, B));
    }
  }
}

function mean(v: number[]): number {
  return v.length ? v.reduce((s, x) => s + x, 0) / v.length : 0;
}

function quantile(v: number[], q: number): number {
  if (!v.length) return 0;
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
}

/** Measures on the photo around the detected keypoints ("right" = the subject's right, image left). */
export function measureFace(img: RawImage, k: FaceKeypoints): FaceMeasures {
  const d = Math.hypot(k.leftEye.x - k.rightEye.x, k.leftEye.y - k.rightEye.y);
  const eyeMidY = (k.leftEye.y + k.rightEye.y) / 2;
  const cheek = (e: Point): number => mean(pixels(img, rectAround({ x: e.x, y: e.y + 0.6 * d }, 0.4 * d, 0.2 * d)).l);
  const cheekLuma = (cheek(k.rightEye) + cheek(k.leftEye)) / 2;
  const eye = (e: Point): EyeMeasure => {
    const { l } = pixels(img, rectAround(e, 0.5 * d, 0.25 * d));
    const ref = Math.max(1, cheekLuma);
    return { contrast: (quantile(l, 0.95) - quantile(l, 0.05)) / ref, lumaRatio: mean(l) / ref };
  };
  // Bridge band: the middle third between the eyes, from above the eye line to just below it.
  const midX = (k.leftEye.x + k.rightEye.x) / 2;
  const rows: number[] = [];
  for (let y = Math.round(eyeMidY - 0.22 * d); y <= Math.round(eyeMidY + 0.12 * d); y++) {
    rows.push(mean(pixels(img, { x0: midX - 0.12 * d, x1: midX + 0.12 * d, y0: y, y1: y + 1 }).l));
  }
  const med = quantile(rows, 0.5);
  const bridgeDip = med > 0 ? (med - Math.min(...rows)) / med : 0;
  // Mouth region.
  const face = pixels(img, { x0: k.rightEye.x, x1: k.leftEye.x, y0: eyeMidY + 0.25 * d, y1: k.mouth.y - 0.1 * d });
  const faceLuma = Math.max(1, mean(face.l));
  const mouth = pixels(img, rectAround(k.mouth, 0.7 * d, 0.3 * d));
  let cavity = 0;
  let teeth = 0;
  mouth.l.forEach((v, i) => {
    if (v < FACE_CHECKS.CAVITY_LUMA_RATIO * faceLuma) cavity++;
    else if (v > FACE_CHECKS.TEETH_LUMA_RATIO * faceLuma && mouth.chroma[i] < FACE_CHECKS.TEETH_MAX_CHROMA) teeth++;
  });
  const n = Math.max(1, mouth.l.length);
  // Light: forehead and cheeks (skin only: the eye band with brows, eyes and glasses is left out),
  // image-left against image-right and forehead against cheeks.
  const fx0 = k.rightEye.x - 0.3 * d;
  const fx1 = k.leftEye.x + 0.3 * d;
  const forehead = { y0: eyeMidY - 0.65 * d, y1: eyeMidY - 0.35 * d };
  const cheeks = { y0: eyeMidY + 0.35 * d, y1: Math.max(eyeMidY + 0.5 * d, k.mouth.y - 0.15 * d) };
  const avg = (x0: number, x1: number, band: { y0: number; y1: number }): number => mean(pixels(img, { x0, x1, ...band }).l);
  const L = (avg(fx0, midX, forehead) + avg(fx0, midX, cheeks)) / 2;
  const R = (avg(midX, fx1, forehead) + avg(midX, fx1, cheeks)) / 2;
  const T = avg(fx0 + 0.2 * d, fx1 - 0.2 * d, forehead);
  const B = avg(fx0, fx1, cheeks);
  return {
    eyeDistance: d,
    eyes: { right: eye(k.rightEye), left: eye(k.leftEye) },
    cheekLuma,
    bridgeDip,
    mouthCavityShare: cavity / n,
    mouthTeethShare: teeth / n,
    leftRightDiff: Math.abs(L - R) / Math.max(1, L, R),
    topBottomDiff: Math.abs(T - B) / Math.max(1, T, B),
    faceLuma,
  };
}
