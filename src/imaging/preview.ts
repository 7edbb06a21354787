// What the finalize job learns about an original once, at upload, so that no request has to
// decode it for this: face boxes (gravity=face), a ThumbHash, the dominant colour, a tiny LQIP data
// URL and the frame count. Everything comes from ONE small decode (JPEG shrink-on-load makes it
// cheap); the face detector is the passport worker's MediaPipe BlazeFace. Worker processes only.
import sharp, { type Sharp } from 'sharp';
import { rgbaToThumbHash } from 'thumbhash';
import { detectFacesInPhoto } from '../vision/face-detector.js';
import { detectFacesInPhotoOffThread } from '../vision/mediapipe/detector-thread.js';
import type { FaceBox } from './focus.js';

export interface ImagePreview {
  /** Face boxes, 0-1 of the auto-oriented original, largest first. */
  faces: (FaceBox & { score: number })[];
  /** ThumbHash (base64): a ~25-byte placeholder that also encodes the aspect ratio. */
  thumbhash: string;
  /** `#rrggbb`: the fullest bin of a 4-bit-per-channel histogram (dominantColour). */
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
/**
 * ThumbHash takes at most 100×100 pixels; its few low-frequency terms need far fewer, and 64 px
 * halves the encoder's time (0.6 ms instead of 1.3 here).
 */
const THUMBHASH_SIDE = 64;
const LQIP_SIDE = 24;
export const LQIP_MAX_BYTES = 1024;

function hex(n: number): string {
  return Math.round(n).toString(16).padStart(2, '0');
}

async function lqipOf(image: Sharp): Promise<string> {
  for (const [side, quality] of [[LQIP_SIDE, 40], [16, 25], [10, 20]] as const) {
    const webp = await (side === LQIP_SIDE ? image : image.clone()).resize(side, side, { fit: 'inside' }).webp({ quality, alphaQuality: 50, effort: 2 }).toBuffer();
    const url = `data:image/webp;base64,${webp.toString('base64')}`;
    if (url.length <= LQIP_MAX_BYTES) return url;
  }
  return '';
}

/**
 * The most common colour of RGBA pixels: the fullest bin of a 4-bit-per-channel histogram
 * (transparent pixels left out), as the mean of the pixels in it. On a ≤ 64 px copy this is a
 * fraction of a millisecond (sharp's stats() costs ~10 ms of pipeline set-up on such an image).
 */
export function dominantColour(rgba: Uint8Array): string {
  const count = new Uint32Array(4096);
  const sum = new Float64Array(4096 * 3);
  colourHistogram(rgba, count, sum);
  const best = fullestBin(count);
  if (count[best] === 0) return '#000000';
  return `#${[0, 1, 2].map((c) => hex(sum[best * 3 + c] / count[best])).join('')}`;
}

// The loops are functions of their own that write into arrays they are given (V8 recompiled a
// function at each upload when its code after a long loop built the result: src/vision/warp.ts).

function colourHistogram(rgba: Uint8Array, count: Uint32Array, sum: Float64Array): void {
  for (let i = 0; i < rgba.length; i += 4) {
    if (rgba[i + 3] < 128) continue;
    const bin = ((rgba[i] >> 4) << 8) | ((rgba[i + 1] >> 4) << 4) | (rgba[i + 2] >> 4);
    count[bin]++;
    sum[bin * 3] += rgba[i];
    sum[bin * 3 + 1] += rgba[i + 1];
    sum[bin * 3 + 2] += rgba[i + 2];
  }
}

function fullestBin(count: Uint32Array): number {
  let best = 0;
  for (let b = 1; b < count.length; b++) if (count[b] > count[best]) best = b;
  return best;
}

/**
 * Area-average reduction of RGBA pixels so that the long side is at most `maxSide` (integer
 * source windows per output pixel). In JS: on a 256 px copy it costs ~0.2 ms, where starting one
 * more libvips pipeline costs the calling thread ~1.4 ms.
 */
export function reduceRgba(data: Uint8Array, width: number, height: number, maxSide: number): { data: Uint8Array; width: number; height: number } {
  const s = Math.max(width, height) / maxSide;
  if (s <= 1) return { data, width, height };
  const w = Math.max(1, Math.round(width / s));
  const h = Math.max(1, Math.round(height / s));
  const out = new Uint8Array(w * h * 4);
  areaAverage(data, width, height, out, w, h);
  return { data: out, width: w, height: h };
}

function areaAverage(data: Uint8Array, width: number, height: number, out: Uint8Array, w: number, h: number): void {
  for (let y = 0; y < h; y++) {
    const y0 = Math.floor((y * height) / h);
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * height) / h));
    for (let x = 0; x < w; x++) {
      const x0 = Math.floor((x * width) / w);
      const x1 = Math.max(x0 + 1, Math.floor(((x + 1) * width) / w));
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let yy = y0; yy < y1; yy++) {
        for (let i = (yy * width + x0) * 4, end = (yy * width + x1) * 4; i < end; i += 4) {
          r += data[i];
          g += data[i + 1];
          b += data[i + 2];
          a += data[i + 3];
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      const o = (y * w + x) * 4;
      out[o] = Math.round(r / n);
      out[o + 1] = Math.round(g / n);
      out[o + 2] = Math.round(b / n);
      out[o + 3] = Math.round(a / n);
    }
  }
}

/**
 * Everything of the preview but its frame count, which the caller adds from the upload inspection
 * (the finalize job starts this before the inspection has counted them).
 */
export async function describeImage(bytes: Buffer, maxInputPixels: number): Promise<Omit<ImagePreview, 'frames'>> {
  // First frame only; sRGB RGBA at most DETECTION_SIDE px.
  const { data, info } = await sharp(bytes, { limitInputPixels: maxInputPixels })
    .autoOrient()
    .resize(DETECTION_SIDE, DETECTION_SIDE, { fit: 'inside', withoutEnlargement: true })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  // The detector runs on its own thread, the LQIP (a libvips WebP encode) on libuv's; this thread
  // reduces the ThumbHash copy meanwhile and stays free for the job's other calls.
  const detecting = facesIn({ data, width: info.width, height: info.height });
  const lqiping = lqipOf(sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } }));
  const thumb = reduceRgba(data, info.width, info.height, THUMBHASH_SIDE);
  const thumbhash = Buffer.from(rgbaToThumbHash(thumb.width, thumb.height, thumb.data)).toString('base64');
  return {
    faces: await detecting,
    thumbhash,
    dominantColor: dominantColour(thumb.data),
    lqip: await lqiping,
  };
}

/**
 * Face boxes (0-1, with scores) of RGBA pixels at most DETECTION_SIDE px. Off-thread; without the
 * thread (it died or did not answer), on this thread; none if that fails too.
 */
export async function facesIn(rgba: { data: Buffer; width: number; height: number }): Promise<ImagePreview['faces']> {
  const pixels = { ...rgba, channels: 4 as const };
  const faces = await detectFacesInPhotoOffThread(pixels)
    .catch(() => detectFacesInPhoto(pixels))
    .catch(() => []);
  return faces.map((f) => ({
    x: clamp01(f.box.x / rgba.width),
    y: clamp01(f.box.y / rgba.height),
    w: clamp01(f.box.width / rgba.width),
    h: clamp01(f.box.height / rgba.height),
    score: Math.round(f.confidence * 1000) / 1000,
  }));
}

/** Face boxes of any decoded pixels (reduced to DETECTION_SIDE first), as at upload. */
export async function detectFaces(image: Sharp): Promise<ImagePreview['faces']> {
  const { data, info } = await image.resize(DETECTION_SIDE, DETECTION_SIDE, { fit: 'inside', withoutEnlargement: true }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return facesIn({ data, width: info.width, height: info.height });
}

function clamp01(v: number): number {
  return Math.round(Math.min(1, Math.max(0, v)) * 10_000) / 10_000;
}
