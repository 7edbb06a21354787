// Focus points for content-aware crops (gravity=focal, gravity=face): where a point of the
// auto-oriented original lands after crop, rot and flip, and which crop window keeps it in frame.
// Pure arithmetic: shared by the front door (plan) and the worker (pipeline).
import { resizedSize } from './output-size.js';
import type { TransformPlan } from './transform-param.js';

/** A focus point, 0-1 of the auto-oriented original (gravity=focal's fx/fy, or the centre of the faces). */
export interface FocusPoint {
  x: number;
  y: number;
}

/** A face box, 0-1 of the auto-oriented original, as detected at upload. */
export interface FaceBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The centre of the box around every face (gravity=face); undefined when there is none. */
export function facesFocus(faces: readonly FaceBox[] | undefined): FocusPoint | undefined {
  if (!faces || faces.length === 0) return undefined;
  const left = Math.min(...faces.map((f) => f.x));
  const top = Math.min(...faces.map((f) => f.y));
  const right = Math.max(...faces.map((f) => f.x + f.w));
  const bottom = Math.max(...faces.map((f) => f.y + f.h));
  return { x: round4((left + right) / 2), y: round4((top + bottom) / 2) };
}

function round4(v: number): number {
  return Math.round(v * 10_000) / 10_000;
}

function clamp01(v: number): number {
  return Math.min(1, Math.max(0, v));
}

/**
 * The point (0-1 of the original, `width`×`height` auto-oriented pixels) in the coordinates of the
 * image that crop, rot and flip produce, which is what the resize sees.
 */
export function focusThroughGeometry(point: FocusPoint, plan: Pick<TransformPlan, 'crop' | 'rot' | 'flip'>, width: number, height: number): FocusPoint {
  let { x, y } = point;
  const crop = plan.crop;
  if (crop) {
    x = clamp01((x * width - crop.left) / crop.width);
    y = clamp01((y * height - crop.top) / crop.height);
  }
  // Clockwise quarter turns: (x, y) → (1 − y, x).
  for (let turn = 0; turn < (plan.rot ?? 0) / 90; turn++) [x, y] = [1 - y, x];
  if (plan.flip === 'h' || plan.flip === 'hv') x = 1 - x;
  if (plan.flip === 'v' || plan.flip === 'hv') y = 1 - y;
  return { x: round4(x), y: round4(y) };
}

/**
 * Cover-crop geometry around a focus: the size to resize a `sourceWidth`×`sourceHeight` image to
 * (covering `width`×`height`) and the window to extract, centred on the focus where the edges allow.
 */
export function focusWindow(sourceWidth: number, sourceHeight: number, width: number, height: number, focus: FocusPoint) {
  // What sharp's cover resize makes before it crops (fit outside), never smaller than the box.
  const resized = resizedSize({ width: sourceWidth, height: sourceHeight }, { width, height, fit: 'outside' });
  const resizedWidth = Math.max(width, resized.width);
  const resizedHeight = Math.max(height, resized.height);
  const left = Math.min(resizedWidth - width, Math.max(0, Math.round(focus.x * resizedWidth - width / 2)));
  const top = Math.min(resizedHeight - height, Math.max(0, Math.round(focus.y * resizedHeight - height / 2)));
  return { resizedWidth, resizedHeight, left, top };
}
