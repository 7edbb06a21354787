// The manual face box: normalized to the (EXIF-oriented) image, checked before any decoding.
import { PassportInputError } from './errors.js';

/** Face box in normalized image coordinates (0..1), top-left corner and size. */
export interface NormalizedBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A face box given as an object, checked: a PassportInputError when a field is missing or out of range. */
export function validateFaceBox(b: unknown): NormalizedBox {
  const fields = ['x', 'y', 'width', 'height'] as const;
  if (typeof b !== 'object' || b === null) throw new PassportInputError('invalid_face_box', 'The face box must be an object with x, y, width and height.');
  const rec = b as Record<string, unknown>;
  const missing = fields.filter((f) => rec[f] === undefined || rec[f] === null);
  if (missing.length) {
    throw new PassportInputError('invalid_face_box', `Partial face box: ${missing.join(', ')} missing. Give all of face_x, face_y, face_width and face_height, or none.`, { missing });
  }
  const v = Object.fromEntries(fields.map((f) => [f, Number(rec[f])])) as unknown as NormalizedBox;
  for (const f of fields) {
    if (!Number.isFinite(v[f]) || v[f] < 0 || v[f] > 1) {
      throw new PassportInputError('invalid_face_box', `Face box ${f} must be a number between 0 and 1 (normalized), got ${String(rec[f])}.`);
    }
  }
  if (v.width <= 0 || v.height <= 0) throw new PassportInputError('invalid_face_box', 'Face box width and height must be greater than 0.');
  const eps = 1e-6;
  if (v.x + v.width > 1 + eps || v.y + v.height > 1 + eps) {
    throw new PassportInputError('invalid_face_box', 'The face box extends beyond the image (x + width and y + height must be at most 1).');
  }
  return v;
}

/**
 * Face box from the HTTP fields face_x/face_y/face_width/face_height: null when none is given,
 * a PassportInputError when only some are given or any is out of range.
 */
export function faceBoxFromFields(fields: { face_x?: unknown; face_y?: unknown; face_width?: unknown; face_height?: unknown }): NormalizedBox | null {
  const vals = [fields.face_x, fields.face_y, fields.face_width, fields.face_height];
  const given = vals.filter((v) => v !== undefined && v !== null && v !== '');
  if (given.length === 0) return null;
  const num = (v: unknown): unknown => (v === undefined || v === null || v === '' ? undefined : typeof v === 'string' ? Number(v) : v);
  return validateFaceBox({ x: num(fields.face_x), y: num(fields.face_y), width: num(fields.face_width), height: num(fields.face_height) });
}
