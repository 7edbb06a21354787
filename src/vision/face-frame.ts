// Face-frame geometry shared by the face detector and the passport crop. No I/O, no models.
//
// Coordinates are continuous pixel coordinates of the (EXIF-oriented) source image: x right, y
// down, (0, 0) is the top-left corner of the top-left pixel, pixel (i, j) has its centre at
// (i + 0.5, j + 0.5). The "face frame" is the source rotated about the eye midpoint E so that the
// eye line is horizontal: a point p has face-frame coordinates
//   a = (p - E) . ex   (along the eyes, towards the image-right eye)
//   b = (p - E) . ey   (down the face; the eye line is b = 0)
// with ex = (cos t, sin t), ey = (-sin t, cos t) and t the roll applied (0 when |roll| <= 1 deg).
import type { AffineMap } from './raw-image.js';

export interface Point {
  x: number;
  y: number;
}
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** BlazeFace keypoints, in source pixels. "right" is the subject's right (image left). */
export interface FaceKeypoints {
  rightEye: Point;
  leftEye: Point;
  noseTip: Point;
  mouth: Point;
  rightEar: Point;
  leftEar: Point;
}

export function rollDegrees(k: Pick<FaceKeypoints, 'rightEye' | 'leftEye'>): number {
  return (Math.atan2(k.leftEye.y - k.rightEye.y, k.leftEye.x - k.rightEye.x) * 180) / Math.PI;
}

export interface FaceFrame {
  /** Eye midpoint in source pixels (origin of the frame). */
  origin: Point;
  /** Rotation applied, degrees (0 when the roll is within the threshold). */
  angleDeg: number;
  cos: number;
  sin: number;
}

export function toFrame(f: FaceFrame, p: Point): { a: number; b: number } {
  const dx = p.x - f.origin.x;
  const dy = p.y - f.origin.y;
  return { a: dx * f.cos + dy * f.sin, b: -dx * f.sin + dy * f.cos };
}

export function fromFrame(f: FaceFrame, a: number, b: number): Point {
  return { x: f.origin.x + a * f.cos - b * f.sin, y: f.origin.y + a * f.sin + b * f.cos };
}

/**
 * Affine map (for the warps in warp.ts) from a grid laid on the face frame: grid pixel (u, v) has
 * its centre at face-frame (a0 + (u + 0.5) * step, b0 + (v + 0.5) * step).
 */
export function affineFromFrame(f: FaceFrame, a0: number, b0: number, step: number): AffineMap {
  const o = fromFrame(f, a0, b0);
  return { ox: o.x, oy: o.y, dux: step * f.cos, duy: step * f.sin, dvx: -step * f.sin, dvy: step * f.cos };
}

/** A face frame with an explicit origin and angle (degrees). */
export function frameAt(origin: Point, angleDeg: number): FaceFrame {
  const t = (angleDeg * Math.PI) / 180;
  return { origin, angleDeg, cos: Math.cos(t), sin: Math.sin(t) };
}

/** IoU of two boxes. */
export function iou(a: Box, b: Box): number {
  const x0 = Math.max(a.x, b.x);
  const y0 = Math.max(a.y, b.y);
  const x1 = Math.min(a.x + a.width, b.x + b.width);
  const y1 = Math.min(a.y + a.height, b.y + b.height);
  const inter = Math.max(0, x1 - x0) * Math.max(0, y1 - y0);
  const union = a.width * a.height + b.width * b.height - inter;
  return union > 0 ? inter / union : 0;
}
