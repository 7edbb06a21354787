// Raw pixels as the vision layer and its users pass them: interleaved 8-bit images, affine maps
// between pixel grids, and the copies the detector and segmenter take.
import sharp from 'sharp';

/** Interleaved 8-bit pixels, row-major, no padding. */
export interface RawImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 3 | 4;
}

export type Rgb = readonly [number, number, number];

/** A rectangle in whole pixels: [left, right) x [top, bottom). */
export interface PixelBounds {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/**
 * An affine map from output pixel centres to source coordinates:
 * source(u, v) = origin + (u + 0.5) * du + (v + 0.5) * dv, in continuous source pixel coordinates.
 */
export interface AffineMap {
  ox: number;
  oy: number;
  dux: number;
  duy: number;
  dvx: number;
  dvy: number;
}

/** Some rows of a source image: `image` holds rows [top, top + image.height) of one `fullHeight` rows tall. */
export interface SourceRows {
  image: RawImage;
  top: number;
  fullHeight: number;
}

/** Rec. 709 luma of sRGB-encoded values, 0..255. */
export function luma(r: number, g: number, b: number): number {
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** RGBA copy with the long side at most maxSide (never enlarged), for the detector. */
export function toRgbaMaxSide(img: RawImage, maxSide: number): Promise<{ image: RawImage; scale: number }> {
  return copyMaxSide(img, maxSide, 4);
}

/** The same copy as toRgbaMaxSide without its alpha (the same R, G, B bytes): for the refinement crops, which warp RGB. */
export function toRgbMaxSide(img: RawImage, maxSide: number): Promise<{ image: RawImage; scale: number }> {
  return copyMaxSide(img, maxSide, 3);
}

async function copyMaxSide(img: RawImage, maxSide: number, channels: 3 | 4): Promise<{ image: RawImage; scale: number }> {
  const s = Math.min(1, maxSide / Math.max(img.width, img.height));
  const w = Math.max(1, Math.round(img.width * s));
  const h = Math.max(1, Math.round(img.height * s));
  let pipeline = sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels } });
  if (s < 1) pipeline = pipeline.resize(w, h, { kernel: 'lanczos3', fit: 'fill' });
  pipeline = channels === 4 ? pipeline.ensureAlpha() : pipeline.removeAlpha();
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return {
    image: { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels },
    scale: info.width / img.width,
  };
}

/** RGB -> RGBA (alpha 255). */
export function toRgba(img: RawImage): RawImage {
  if (img.channels === 4) return img;
  if (img.channels !== 3) throw new Error('toRgba expects RGB');
  const out = new Uint8Array(img.width * img.height * 4);
  rgbToRgba(img.data, out);
  return { data: out, width: img.width, height: img.height, channels: 4 };
}

function rgbToRgba(rgb: Uint8Array, out: Uint8Array): void {
  const n = out.length >> 2;
  for (let i = 0, j = 0, k = 0; i < n; i++, j += 3, k += 4) {
    out[k] = rgb[j];
    out[k + 1] = rgb[j + 1];
    out[k + 2] = rgb[j + 2];
    out[k + 3] = 255;
  }
}
