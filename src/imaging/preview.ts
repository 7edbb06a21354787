// What the finalize job learns about an original once, at upload, so that no request has to
// decode it for this: face boxes (gravity=face), a ThumbHash, the dominant colour, a tiny LQIP data
// URL and the frame count. Everything comes from ONE small decode (JPEG shrink-on-load makes it
// cheap); the face detector is the passport worker's MediaPipe BlazeFace. Worker processes only.
import sharp, { type Sharp } from 'sharp';
import { rgbaToThumbHash } from 'thumbhash';
import { detectFaces } from '../passport/face-detector.js';
import type { FaceBox } from './focus.js';

export interface ImagePreview {
  /** Face boxes, 0-1 of the auto-oriented original, largest first. */
  faces: (FaceBox & { score: number })[];
  /** ThumbHash (base64): a ~25-byte placeholder that also encodes the aspect ratio. */
  thumbhash: string;
  /** `#rrggbb`. */
  dominantColor: string;
  /** `data:image/webp;base64,…`, at most LQIP_MAX_BYTES. */
  lqip: string;
  /** Frames of the original (1 unless an animated WebP). */
  frames: number;
}

/**
 * Long side of the copy faces are detected on. BlazeFace itself sees 128 / 192 px; 256 lets a
 * 2560 px JPEG decode at 1/8 scale (shrink-on-load) and still finds the off-centre portraits
 * of the tests (384 found no more).
 */
export const DETECTION_SIDE = 256;
/** ThumbHash takes at most 100×100 pixels. */
const THUMBHASH_SIDE = 100;
const LQIP_SIDE = 24;
export const LQIP_MAX_BYTES = 1024;

function hex(n: number): string {
  return Math.round(n).toString(16).padStart(2, '0');
}

async function lqipOf(small: Sharp): Promise<string> {
  for (const [side, quality] of [[LQIP_SIDE, 40], [16, 25], [10, 20]] as const) {
    const webp = await small.clone().resize(side, side, { fit: 'inside' }).webp({ quality, alphaQuality: 50, effort: 2 }).toBuffer();
    const url = `data:image/webp;base64,${webp.toString('base64')}`;
    if (url.length <= LQIP_MAX_BYTES) return url;
  }
  return '';
}

/** `frames`: as the upload inspection counted them. */
export async function describeImage(bytes: Buffer, maxInputPixels: number, frames = 1): Promise<ImagePreview> {
  // First frame only; sRGB RGBA at most DETECTION_SIDE px.
  const { data, info } = await sharp(bytes, { limitInputPixels: maxInputPixels })
    .autoOrient()
    .resize(DETECTION_SIDE, DETECTION_SIDE, { fit: 'inside', withoutEnlargement: true })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: info.width, height: info.height, channels: 4 as const } };
  const small = sharp(data, raw);
  const thumb = await small.clone().resize(THUMBHASH_SIDE, THUMBHASH_SIDE, { fit: 'inside' }).raw().toBuffer({ resolveWithObject: true });
  const thumbhash = Buffer.from(rgbaToThumbHash(thumb.info.width, thumb.info.height, thumb.data)).toString('base64');
  const { dominant } = await sharp(thumb.data, { raw: { width: thumb.info.width, height: thumb.info.height, channels: 4 } }).stats();
  const { faces } = await detectFaces({ data, width: info.width, height: info.height, channels: 4 });
  return {
    faces: faces.map((f) => ({
      x: clamp01(f.box.x / info.width),
      y: clamp01(f.box.y / info.height),
      w: clamp01(f.box.width / info.width),
      h: clamp01(f.box.height / info.height),
      score: Math.round(f.confidence * 1000) / 1000,
    })),
    thumbhash,
    dominantColor: `#${hex(dominant.r)}${hex(dominant.g)}${hex(dominant.b)}`,
    lqip: await lqipOf(small),
    frames,
  };
}

function clamp01(v: number): number {
  return Math.round(Math.min(1, Math.max(0, v)) * 10_000) / 10_000;
}
