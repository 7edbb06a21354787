// Resampling warps over raw pixels (TypeScript: as fast as the WebAssembly they once were, and
// libvips' affine through sharp fixes its output's origin to the warped image's bounding box).
//
// Pixel loops are functions of their own that write into arrays they are given and return nothing.
// V8 optimizes a long loop while it runs (on-stack replacement); code after it in the same function
// (building the result, the next loop) had no type feedback yet, so it was deoptimized and
// recompiled, and again at every photo: a function is called once per photo here.
import sharp from 'sharp';
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
  bicubicRowsInto(src.image.data, src.image.width, src.fullHeight, src.top, map, width, v0, v1, fill, out, inside);
  return { image: { data: out, width, height, channels: 3 }, inside };
}

/** warpRgbBicubicRows' loop: rows [v0, v1) into out (RGB) and inside (source rows from srcTop). */
function bicubicRowsInto(
  s: Uint8Array,
  sw: number,
  sh: number,
  srcTop: number,
  map: AffineMap,
  width: number,
  v0: number,
  v1: number,
  fill: Rgb,
  out: Uint8Array,
  inside: Uint8Array,
): void {
  const clamped = new Uint8ClampedArray(out.buffer, out.byteOffset, out.length);
  const stride = sw * 3;
  const xi = new Int32Array(4);
  const yi = new Int32Array(4);
  for (let v = v0; v < v1; v++) {
    let sx = map.ox + 0.5 * map.dux + (v + 0.5) * map.dvx;
    let sy = map.oy + 0.5 * map.duy + (v + 0.5) * map.dvy;
    for (let u = 0; u < width; u++, sx += map.dux, sy += map.duy) {
      const o = ((v - v0) * width + u) * 3;
      if (sx < 0 || sy < 0 || sx > sw || sy > sh) {
        out[o] = fill[0];
        out[o + 1] = fill[1];
        out[o + 2] = fill[2];
        continue;
      }
      inside[(v - v0) * width + u] = 1;
      const fx = sx - 0.5;
      const fy = sy - 0.5;
      const x0 = Math.floor(fx);
      const y0 = Math.floor(fy);
      const tx = fx - x0;
      const ty = fy - y0;
      const tx2 = tx * tx;
      const tx3 = tx2 * tx;
      const ty2 = ty * ty;
      const ty3 = ty2 * ty;
      const wx0 = -0.5 * tx3 + tx2 - 0.5 * tx;
      const wx1 = 1.5 * tx3 - 2.5 * tx2 + 1;
      const wx2 = -1.5 * tx3 + 2 * tx2 + 0.5 * tx;
      const wx3 = 0.5 * tx3 - 0.5 * tx2;
      const wy0 = -0.5 * ty3 + ty2 - 0.5 * ty;
      const wy1 = 1.5 * ty3 - 2.5 * ty2 + 1;
      const wy2 = -1.5 * ty3 + 2 * ty2 + 0.5 * ty;
      const wy3 = 0.5 * ty3 - 0.5 * ty2;
      let r = 0;
      let g = 0;
      let b = 0;
      if (x0 >= 1 && y0 >= 1 && x0 + 2 < sw && y0 + 2 < sh) {
        // interior: no clamping; the four rows unrolled
        const p0 = (y0 - 1 - srcTop) * stride + (x0 - 1) * 3;
        const p1 = p0 + stride;
        const p2 = p1 + stride;
        const p3 = p2 + stride;
        r =
          wy0 * (wx0 * s[p0] + wx1 * s[p0 + 3] + wx2 * s[p0 + 6] + wx3 * s[p0 + 9]) +
          wy1 * (wx0 * s[p1] + wx1 * s[p1 + 3] + wx2 * s[p1 + 6] + wx3 * s[p1 + 9]) +
          wy2 * (wx0 * s[p2] + wx1 * s[p2 + 3] + wx2 * s[p2 + 6] + wx3 * s[p2 + 9]) +
          wy3 * (wx0 * s[p3] + wx1 * s[p3 + 3] + wx2 * s[p3 + 6] + wx3 * s[p3 + 9]);
        g =
          wy0 * (wx0 * s[p0 + 1] + wx1 * s[p0 + 4] + wx2 * s[p0 + 7] + wx3 * s[p0 + 10]) +
          wy1 * (wx0 * s[p1 + 1] + wx1 * s[p1 + 4] + wx2 * s[p1 + 7] + wx3 * s[p1 + 10]) +
          wy2 * (wx0 * s[p2 + 1] + wx1 * s[p2 + 4] + wx2 * s[p2 + 7] + wx3 * s[p2 + 10]) +
          wy3 * (wx0 * s[p3 + 1] + wx1 * s[p3 + 4] + wx2 * s[p3 + 7] + wx3 * s[p3 + 10]);
        b =
          wy0 * (wx0 * s[p0 + 2] + wx1 * s[p0 + 5] + wx2 * s[p0 + 8] + wx3 * s[p0 + 11]) +
          wy1 * (wx0 * s[p1 + 2] + wx1 * s[p1 + 5] + wx2 * s[p1 + 8] + wx3 * s[p1 + 11]) +
          wy2 * (wx0 * s[p2 + 2] + wx1 * s[p2 + 5] + wx2 * s[p2 + 8] + wx3 * s[p2 + 11]) +
          wy3 * (wx0 * s[p3 + 2] + wx1 * s[p3 + 5] + wx2 * s[p3 + 8] + wx3 * s[p3 + 11]);
      } else {
        for (let k = 0; k < 4; k++) {
          xi[k] = Math.min(sw - 1, Math.max(0, x0 + k - 1)) * 3;
          yi[k] = (Math.min(sh - 1, Math.max(0, y0 + k - 1)) - srcTop) * stride;
        }
        for (let j = 0; j < 4; j++) {
          const wy = j === 0 ? wy0 : j === 1 ? wy1 : j === 2 ? wy2 : wy3;
          const row = yi[j];
          const p0 = row + xi[0];
          const p1 = row + xi[1];
          const p2 = row + xi[2];
          const p3 = row + xi[3];
          r += wy * (wx0 * s[p0] + wx1 * s[p1] + wx2 * s[p2] + wx3 * s[p3]);
          g += wy * (wx0 * s[p0 + 1] + wx1 * s[p1 + 1] + wx2 * s[p2 + 1] + wx3 * s[p3 + 1]);
          b += wy * (wx0 * s[p0 + 2] + wx1 * s[p1 + 2] + wx2 * s[p2 + 2] + wx3 * s[p3 + 2]);
        }
      }
      // The clamped view rounds (half to even) and clamps natively.
      clamped[o] = r;
      clamped[o + 1] = g;
      clamped[o + 2] = b;
    }
  }
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

/**
 * Bilinear warp of an RGB image to RGBA (alpha 255); outside the source: `fill`, or with
 * `edgesBelowAndBeside` only above it (beyond its sides and bottom its edge pixels continue).
 */
export function warpRgbaBilinear(src: RawImage, map: AffineMap, width: number, height: number, fill: Rgb, edgesBelowAndBeside = false): RawImage {
  if (src.channels !== 3) throw new Error('warpRgbaBilinear expects RGB');
  const out = new Uint8Array(width * height * 4);
  bilinearRgbaInto(src, map, width, height, fill, edgesBelowAndBeside, out);
  return { data: out, width, height, channels: 4 };
}

function bilinearRgbaInto(src: RawImage, map: AffineMap, width: number, height: number, fill: Rgb, edges: boolean, out: Uint8Array): void {
  const { data: s, width: sw, height: sh } = src;
  for (let v = 0; v < height; v++) {
    // Source coordinates advance by (dux, duy) per output pixel: no multiplications in the row.
    let sx = map.ox + 0.5 * map.dux + (v + 0.5) * map.dvx;
    let sy = map.oy + 0.5 * map.duy + (v + 0.5) * map.dvy;
    let o = v * width * 4;
    for (let u = 0; u < width; u++, sx += map.dux, sy += map.duy, o += 4) {
      out[o + 3] = 255;
      if (sy < 0 || (!edges && (sx < 0 || sx > sw || sy > sh))) {
        out[o] = fill[0];
        out[o + 1] = fill[1];
        out[o + 2] = fill[2];
        continue;
      }
      const fx = Math.min(sw - 1, Math.max(0, sx - 0.5));
      const fy = Math.min(sh - 1, Math.max(0, sy - 0.5));
      const x0 = Math.floor(fx);
      const y0 = Math.floor(fy);
      const x1 = Math.min(sw - 1, x0 + 1);
      const y1 = Math.min(sh - 1, y0 + 1);
      const tx = fx - x0;
      const ty = fy - y0;
      const p00 = (y0 * sw + x0) * 3;
      const p10 = (y0 * sw + x1) * 3;
      const p01 = (y1 * sw + x0) * 3;
      const p11 = (y1 * sw + x1) * 3;
      const w00 = (1 - tx) * (1 - ty);
      const w10 = tx * (1 - ty);
      const w01 = (1 - tx) * ty;
      const w11 = tx * ty;
      // + 0.5 and truncation: Math.round for these non-negative values
      out[o] = w00 * s[p00] + w10 * s[p10] + w01 * s[p01] + w11 * s[p11] + 0.5;
      out[o + 1] = w00 * s[p00 + 1] + w10 * s[p10 + 1] + w01 * s[p01 + 1] + w11 * s[p11 + 1] + 0.5;
      out[o + 2] = w00 * s[p00 + 2] + w10 * s[p10 + 2] + w01 * s[p01 + 2] + w11 * s[p11 + 2] + 0.5;
    }
  }
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
