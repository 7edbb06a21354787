// Raw-pixel helpers for the passport pipeline: decode, resampling warps, box filters.
//
// Pixel loops (here and in the other passport modules) are functions of their own that write into
// arrays they are given and return nothing. V8 optimizes a long loop while it runs (on-stack
// replacement); code after it in the same function (building the result, the next loop) had no
// type feedback yet, so it was deoptimized and recompiled, and again at every photo: a function
// is called once per photo here. Split this way, the 12 MP bench's compiler time fell from ~190
// to ~100 ms per photo, on the same two cores the photo is processed on.
import sharp, { type Metadata, type OutputInfo, type Sharp } from 'sharp';
import { PassportInputError } from './errors.js';
import { withTempCopy } from './temp-copy.js';
import { bicubicRgbRowsInto, bilinearRgbaInto, boxMeanInto } from './wasm/pixels.js';

/** Interleaved 8-bit pixels, row-major, no padding. */
export interface RawImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 3 | 4;
}

/** Largest accepted input (decoded pixels after EXIF orientation); sharp refuses larger inputs before decoding. */
export const MAX_INPUT_PIXELS = 50_000_000;
/** Detection runs on a copy whose long side is at most this (BlazeFace itself works at 128/192 px). */
export const DETECTION_MAX_SIDE = 1280;

export type Rgb = readonly [number, number, number];

export interface DecodedInput {
  /**
   * The working copy: 3 channels, sRGB, EXIF orientation applied, alpha flattened onto the
   * background. Detection, refinement and segmentation run on it; for large JPEGs it is reduced.
   */
  image: RawImage;
  format: string;
  hadAlpha: boolean;
  density: number | null;
  /** The input's own size (EXIF-oriented) and the factor the working copy is reduced by (1 = full size). */
  originalWidth: number;
  originalHeight: number;
  shrink: number;
  /**
   * Pixels of a rectangle of the full-size image (EXIF-oriented coordinates, clipped to the image),
   * with the same colour handling as the working copy. `left`/`top` say where the returned pixels
   * start. Without a reduced working copy this is the working copy itself. With `reduce` > 1 the
   * rectangle is reduced by about that factor in the same libvips pipeline (libjpeg's DCT scaling
   * as far as it goes, lanczos3 for the rest; the rectangle then widens to whole scaled pixels);
   * `scaleX` / `scaleY` are the returned pixels per full-size pixel.
   */
  region(bounds: PixelBounds, reduce?: number): Promise<{ image: RawImage; left: number; top: number; scaleX: number; scaleY: number }>;
}

/** A rectangle in whole pixels: [left, right) x [top, bottom). */
export interface PixelBounds {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/**
 * JPEGs with a long side of at least this get a reduced working copy (libjpeg's DCT scaling decodes
 * it at 1/4 or 1/8 of the work) and the output is rendered from a region decode of the full-size
 * image: a 12 MP phone portrait is never decoded whole at full size.
 */
export const SHRINK_ON_LOAD_MIN_SIDE = 3000;
/** The reduced working copy keeps a long side of at least this (the models see <= 256 px of it). */
export const WORKING_MIN_SIDE = 760;
/** The larger working copy (largeWorkingShrink) keeps a long side of at least this where it can. */
export const LARGE_WORKING_MIN_SIDE = 2000;

/**
 * The working copy when faces are small (or none is found) in the reduced one: decoded at a DCT
 * scale (1/2 or 1/4) keeping a long side of LARGE_WORKING_MIN_SIDE, half size below that. A 12 MP
 * photo: 2016 x 1512, where the tile pass finds faces whose box is ~75 px (at 806 px none under
 * ~50-130 px were found); a 48 MP one: 2000 x 1500 (at half size its tile pass took 0.66 s).
 */
export function largeWorkingShrink(longSide: number): number {
  return longSide / 4 >= LARGE_WORKING_MIN_SIDE ? 4 : 2;
}

/**
 * The resize factor for the working copy. sharp decodes a JPEG at 1/s (s = 2, 4, 8) when the
 * factor is at least s + 1 (it lowers s for factors in [s, s + 1) to avoid libjpeg rounding): the
 * largest s whose copy keeps WORKING_MIN_SIDE, with the factor set to s + 1 so DCT scaling applies.
 */
export function workingShrink(longSide: number): number {
  for (const s of [8, 4, 2]) if (longSide / (s + 1) >= WORKING_MIN_SIDE) return s + 1;
  return 1;
}

/** The stored-image rectangle that EXIF orientation `o` turns into the displayed rectangle `r`. */
export function storedRegion(
  r: { left: number; top: number; width: number; height: number },
  orientation: number,
  storedWidth: number,
  storedHeight: number,
): { left: number; top: number; width: number; height: number } {
  const { left: L, top: T, width: w, height: h } = r;
  switch (orientation) {
    case 2: return { left: storedWidth - L - w, top: T, width: w, height: h };
    case 3: return { left: storedWidth - L - w, top: storedHeight - T - h, width: w, height: h };
    case 4: return { left: L, top: storedHeight - T - h, width: w, height: h };
    case 5: return { left: T, top: L, width: h, height: w };
    case 6: return { left: T, top: storedHeight - L - w, width: h, height: w };
    case 7: return { left: storedWidth - T - h, top: storedHeight - L - w, width: h, height: w };
    case 8: return { left: storedWidth - T - h, top: L, width: h, height: w };
    default: return { ...r };
  }
}

function asRaw(data: Buffer, info: { width: number; height: number; channels: number }): RawImage {
  if (info.channels !== 3 || data.length !== info.width * info.height * 3) throw new Error(`unexpected ${info.channels}-channel pixels (${data.length} bytes) after conversion`);
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: 3 };
}

type Rect = { left: number; top: number; width: number; height: number };
type Decoded = { data: Buffer; info: OutputInfo };
/** Decoded pixels of a region and the rectangle of the full-size (oriented) image they cover. */
type RegionPixels = Decoded & Rect;

/**
 * libjpeg's DCT scaling (1/2, 1/4, 1/8) for a region to be reduced by `reduce`: the largest
 * scale that does not reduce further than asked (lanczos takes the rest), and only when the stored
 * size divides by it, so that a scaled pixel covers exactly s x s full-size pixels.
 */
export function dctScale(reduce: number, storedWidth: number, storedHeight: number): number {
  for (const s of [8, 4, 2]) if (s <= reduce && storedWidth % s === 0 && storedHeight % s === 0) return s;
  return 1;
}

/** The input as stored (before EXIF orientation), and how this decode opens and finishes its pipelines. */
interface StoredInput {
  bytes: Buffer;
  orientation: number;
  width: number;
  height: number;
  open(source?: Buffer | string): Sharp;
  finish(p: Sharp): Promise<Decoded>;
}

/**
 * `build`'s pipeline on the JPEG decoded at 1/s by libjpeg's DCT scaling: the IDCT, upsampling and
 * colour conversion run on 1/s² of the pixels. sharp applies DCT scaling only to resizes of the
 * whole image by at least s + 1; libvips' own load option `shrink` is reachable only through a
 * file name (`photo.jpg[shrink=2]`), so the bytes are written to a temporary file (null when that
 * fails: the caller decodes without it).
 */
function decodeDctScaled(stored: StoredInput, s: number, build: (p: Sharp) => Sharp): Promise<Decoded | null> {
  return withTempCopy(stored.bytes, 'jpg', (file) => stored.finish(build(stored.open(`${file}[shrink=${s}]`))));
}

/** The rectangle at full size: extracted in stored coordinates, oriented, then reduced by lanczos. */
async function regionAtFullSize(stored: StoredInput, rect: Rect, reduce: number): Promise<RegionPixels> {
  // Extract in stored coordinates before orienting: libjpeg then skips the blocks outside the
  // rectangle where it can (about half a whole decode's CPU for a 12 MP photo's crop).
  let p = stored.open().extract(storedRegion(rect, stored.orientation, stored.width, stored.height)).autoOrient();
  // Target size in oriented pixels (sharp swaps it when the orientation turns the image).
  if (reduce > 1) p = p.resize(Math.max(2, Math.round(rect.width / reduce)), Math.max(2, Math.round(rect.height / reduce)), { fit: 'fill', kernel: 'lanczos3' });
  return { ...(await stored.finish(p)), ...rect };
}

/**
 * The rectangle decoded at 1/s (decodeDctScaled; a 12 MP photo's crop: ~75 ms of CPU instead of
 * ~140), widened to whole scaled pixels, then reduced by lanczos for the rest; null without a
 * temporary copy.
 */
async function regionAtDctScale(stored: StoredInput, s: number, rect: Rect, reduce: number): Promise<RegionPixels | null> {
  const left = Math.floor(rect.left / s);
  const top = Math.floor(rect.top / s);
  const scaled: Rect = { left, top, width: Math.ceil((rect.left + rect.width) / s) - left, height: Math.ceil((rect.top + rect.height) / s) - top };
  const cover: Rect = { left: left * s, top: top * s, width: scaled.width * s, height: scaled.height * s };
  const width = Math.max(2, Math.round(cover.width / reduce));
  const height = Math.max(2, Math.round(cover.height / reduce));
  const decoded = await decodeDctScaled(stored, s, (p) => {
    const oriented = p.extract(storedRegion(scaled, stored.orientation, stored.width / s, stored.height / s)).autoOrient();
    return width !== scaled.width || height !== scaled.height ? oriented.resize(width, height, { fit: 'fill', kernel: 'lanczos3' }) : oriented;
  });
  return decoded && { ...decoded, ...cover };
}

/**
 * Decodes any sharp-supported input to sRGB RGB. Undecodable or oversized inputs are
 * PassportInputErrors. With `allowShrink`, a large JPEG's working copy is decoded reduced (by
 * `workingFactor` when given, else workingShrink's) and `region` decodes only the rectangle it is
 * asked for (at full size, or DCT-scaled when reduced).
 */
export async function decodeInput(input: Buffer, background: Rgb, allowShrink = false, workingFactor?: number): Promise<DecodedInput> {
  let meta: Metadata;
  try {
    // Header only: the pixel limit is checked below so that the error says so.
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch (e) {
    throw new PassportInputError('undecodable_image', `The image could not be decoded: ${(e as Error).message}`);
  }
  if (meta.width * meta.height > MAX_INPUT_PIXELS) {
    throw new PassportInputError('image_too_large', `The image has ${meta.width * meta.height} pixels; the limit is ${MAX_INPUT_PIXELS}.`);
  }
  const orientation = meta.orientation ?? 1;
  const swap = orientation >= 5;
  const originalWidth = swap ? meta.height : meta.width;
  const originalHeight = swap ? meta.width : meta.height;
  const longSide = Math.max(originalWidth, originalHeight);
  const factor = allowShrink && meta.format === 'jpeg' && longSide >= SHRINK_ON_LOAD_MIN_SIDE ? (workingFactor ?? workingShrink(longSide)) : 1;
  const stored: StoredInput = {
    bytes: input,
    orientation,
    width: meta.width,
    height: meta.height,
    open: (source = input) => sharp(source, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' }),
    finish: (p) =>
      p.flatten({ background: { r: background[0], g: background[1], b: background[2] } })
        .toColourspace('srgb')
        .removeAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true }),
  };
  try {
    // An exact DCT scale (largeWorkingShrink) is decoded as such, without resampling; sharp would
    // decode such a factor at full size.
    const exact = factor > 1 && dctScale(factor, meta.width, meta.height) === factor ? await decodeDctScaled(stored, factor, (p) => p.autoOrient()) : null;
    const { data, info } = exact ?? (await stored.finish(factor > 1
      ? stored.open().autoOrient().resize(Math.round(originalWidth / factor), Math.round(originalHeight / factor), { fit: 'fill', kernel: 'lanczos3', fastShrinkOnLoad: true })
      : stored.open().autoOrient()));
    const image = asRaw(data, info);
    const region: DecodedInput['region'] =
      factor === 1
        ? async () => ({ image, left: 0, top: 0, scaleX: 1, scaleY: 1 })
        : async (b, reduce = 1) => {
            const left = Math.max(0, Math.min(originalWidth - 1, b.left));
            const top = Math.max(0, Math.min(originalHeight - 1, b.top));
            const width = Math.max(1, Math.min(originalWidth, b.right) - left);
            const height = Math.max(1, Math.min(originalHeight, b.bottom) - top);
            const scale = dctScale(reduce, meta.width, meta.height);
            try {
              const rect = { left, top, width, height };
              const out = (scale > 1 ? await regionAtDctScale(stored, scale, rect, reduce) : null) ?? (await regionAtFullSize(stored, rect, reduce));
              return { image: asRaw(out.data, out.info), left: out.left, top: out.top, scaleX: out.info.width / out.width, scaleY: out.info.height / out.height };
            } catch (e) {
              throw new PassportInputError('undecodable_image', `The image could not be decoded: ${(e as Error).message}`);
            }
          };
    return {
      image,
      format: meta.format,
      hadAlpha: meta.hasAlpha,
      density: meta.density ?? null,
      originalWidth,
      originalHeight,
      shrink: factor === 1 ? 1 : Math.round((originalWidth / info.width) * 100) / 100,
      region,
    };
  } catch (e) {
    if (e instanceof PassportInputError) throw e;
    throw new PassportInputError('undecodable_image', `The image could not be decoded: ${(e as Error).message}`);
  }
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

/** Rec. 709 luma of sRGB-encoded values, 0..255. */
export function luma(r: number, g: number, b: number): number {
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
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
