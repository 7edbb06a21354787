// Resampling warps and box filters over raw pixels.
//
// Pixel loops are functions of their own that write into arrays they are given and return nothing.
// V8 optimizes a long loop while it runs (on-stack replacement); code after it in the same function
// (building the result, the next loop) had no type feedback yet, so it was deoptimized and
// recompiled, and again at every photo: a function is called once per photo here.
import sharp from 'sharp';
import { bicubicRgbRowsInto, bilinearRgbaInto, boxMeanInto } from './kernels/pixels.js';
import type { AffineMap, RawImage, Rgb, SourceRows } from './raw-image.js';

/**
 * Rows [v0, v1) of the bicubic (Catmull-Rom, a = -0.5) warp of an RGB source, from only the source
 * rows they read (sourceRowsFor; the whole source when `src` holds all its rows): the same values
 * bit for bit as the whole warp (each pixel's coordinates are computed as on the whole photo; only
 * the row index is offset). Output pixels whose centre falls outside the source get `fill`;
 * `inside` (0/1 per output pixel) says which ones came from the source.
 */
export function warpRgbBicubicRows(src: SourceRows, map: AffineMap, width: number, v0: number, v1: number, fill: Rgb): { image: RawImage; inside: Uint8Array } {
  if (src.image.channels !== 3) throw new Error('warpRgbBicubicRows expects RGB');
  const reads = sourceRowsFor(map, width, v0, v1, src.fullHeight);
  if (src.top > reads.top || src.top + src.image.height < reads.bottom || src.image.data.length < src.image.width * src.image.height * 3) {
    throw new RangeError(`warpRgbBicubicRows: rows ${src.top}-${src.top + src.image.height} given, ${reads.top}-${reads.bottom} read`);
  }
  const height = v1 - v0;
  const out = new Uint8Array(width * height * 3);
  const inside = new Uint8Array(width * height);
  bicubicRgbRowsInto(src.image.data, src.image.width, src.fullHeight, src.top, map, width, v0, v1, fill, out, inside);
  return { image: { data: out, width, height, channels: 3 }, inside };
}

/**
 * The source rows [top, bottom) that output rows [v0, v1) of a bicubic warp read: those the
 * pixel centres of the band's corners fall between (an affine map's extremes are at corners),
 * plus the kernel's reach (1 row above, 2 below) and one row to spare, within the source.
 */
export function sourceRowsFor(map: AffineMap, width: number, v0: number, v1: number, sourceHeight: number): { top: number; bottom: number } {
  const ys = [0.5, width - 0.5].flatMap((u) => [v0 + 0.5, v1 - 0.5].map((v) => map.oy + u * map.duy + v * map.dvy));
  const top = Math.max(0, Math.floor(Math.min(...ys) - 0.5) - 2);
  const bottom = Math.min(sourceHeight, Math.floor(Math.max(...ys) - 0.5) + 4);
  return bottom > top ? { top, bottom } : { top: 0, bottom: Math.min(sourceHeight, 1) };
}

/** Bilinear warp of an RGB image to RGBA (alpha 255); outside the source: `fill`. */
export function warpRgbaBilinear(src: RawImage, map: AffineMap, width: number, height: number, fill: Rgb): RawImage {
  if (src.channels !== 3) throw new Error('warpRgbaBilinear expects RGB');
  const out = new Uint8Array(width * height * 4);
  bilinearRgbaInto(src.data, src.width, src.height, map, width, height, fill, out);
  return { data: out, width, height, channels: 4 };
}

/** Rows [v0, v1) of the bilinear resample of a float grid (edge values extend beyond it). */
export function warpFloatBilinearRows(src: Float32Array, sw: number, sh: number, map: AffineMap, width: number, v0: number, v1: number): Float32Array {
  const out = new Float32Array(width * (v1 - v0));
  bilinearFloatInto(src, sw, sh, map, width, v0, v1, out);
  return out;
}

function bilinearFloatInto(src: Float32Array, sw: number, sh: number, map: AffineMap, width: number, v0: number, v1: number, out: Float32Array): void {
  for (let v = v0; v < v1; v++) {
    let sx = map.ox + 0.5 * map.dux + (v + 0.5) * map.dvx;
    let sy = map.oy + 0.5 * map.duy + (v + 0.5) * map.dvy;
    for (let u = 0; u < width; u++, sx += map.dux, sy += map.duy) {
      const fx = Math.min(sw - 1, Math.max(0, sx - 0.5));
      const fy = Math.min(sh - 1, Math.max(0, sy - 0.5));
      const x0 = Math.floor(fx);
      const y0 = Math.floor(fy);
      const x1 = Math.min(sw - 1, x0 + 1);
      const y1 = Math.min(sh - 1, y0 + 1);
      const tx = fx - x0;
      const ty = fy - y0;
      const top = src[y0 * sw + x0] + (src[y0 * sw + x1] - src[y0 * sw + x0]) * tx;
      const bot = src[y1 * sw + x0] + (src[y1 * sw + x1] - src[y1 * sw + x0]) * tx;
      out[(v - v0) * width + u] = top + (bot - top) * ty;
    }
  }
}

/**
 * Mean over a (2r+1)^2 window, clipped at the borders (each output divides by the number of
 * pixels actually inside the window). O(n) running sums, rows then columns (wasm/pixels.ts).
 */
export function boxMean(src: Float32Array, width: number, height: number, r: number, out: Float32Array = new Float32Array(width * height)): Float32Array {
  boxMeanInto(src, width, height, r, out);
  return out;
}

/**
 * Renders `map` over `src`. When the map shrinks by more than 1.25x, the needed part of the source
 * is first reduced with sharp (lanczos3) so the warp samples at about 1:1 (no aliasing).
 */
export async function renderWarp<T>(
  src: RawImage,
  map: AffineMap,
  width: number,
  height: number,
  warp: (img: RawImage, m: AffineMap) => T,
): Promise<T> {
  const source = await warpSource(src, map, width, height);
  return warp(source.image, source.map);
}

/** renderWarp's source and map: `src` itself, or the reduced part of it the warp then samples at about 1:1. */
export async function warpSource(src: RawImage, map: AffineMap, width: number, height: number): Promise<{ image: RawImage; map: AffineMap }> {
  const step = Math.hypot(map.dux, map.duy);
  const same = { image: src, map };
  if (step <= 1.25) return same;
  const xs: number[] = [];
  const ys: number[] = [];
  for (const [u, v] of [[0, 0], [width, 0], [0, height], [width, height]]) {
    xs.push(map.ox + u * map.dux + v * map.dvx);
    ys.push(map.oy + u * map.duy + v * map.dvy);
  }
  const pad = 3 * step;
  const left = Math.max(0, Math.floor(Math.min(...xs) - pad));
  const top = Math.max(0, Math.floor(Math.min(...ys) - pad));
  const right = Math.min(src.width, Math.ceil(Math.max(...xs) + pad));
  const bottom = Math.min(src.height, Math.ceil(Math.max(...ys) + pad));
  if (right - left < 2 || bottom - top < 2) return same;
  const rw = Math.max(2, Math.round((right - left) / step));
  const rh = Math.max(2, Math.round((bottom - top) / step));
  const data = await sharp(src.data, { raw: { width: src.width, height: src.height, channels: src.channels } })
    .extract({ left, top, width: right - left, height: bottom - top })
    .resize(rw, rh, { fit: 'fill', kernel: 'lanczos3' })
    .raw()
    .toBuffer();
  const small: RawImage = { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: rw, height: rh, channels: src.channels };
  const sx = rw / (right - left);
  const sy = rh / (bottom - top);
  // The reduced crop covers bounds ∩ image, so "outside it" still means "outside the source image".
  const m: AffineMap = {
    ox: (map.ox - left) * sx,
    oy: (map.oy - top) * sy,
    dux: map.dux * sx,
    duy: map.duy * sy,
    dvx: map.dvx * sx,
    dvy: map.dvy * sy,
  };
  return { image: small, map: m };
}
