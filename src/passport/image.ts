// Decoding the passport input: EXIF orientation, colour, alpha, shrink-on-load for large JPEGs,
// and full-size regions for the render.
import sharp, { type Metadata, type OutputInfo, type Sharp } from 'sharp';
import { PassportInputError } from './errors.js';
import { withNoiseReduced } from './noise.js';
import { withTempCopy } from './temp-copy.js';
import type { PixelBounds, RawImage, Rgb } from '../vision/raw-image.js';

/** Largest accepted input (decoded pixels after EXIF orientation); sharp refuses larger inputs before decoding. */
export const MAX_INPUT_PIXELS = 50_000_000;

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
  /** The working copy's noise sigma as decoded, and whether it was reduced (noise.ts). */
  noise: { sigma: number; reduced: boolean };
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

type Rect = { left: number; top: number; width: number; height: number };

/** The stored-image rectangle that EXIF orientation `o` turns into the displayed rectangle `r`. */
export function storedRegion(r: Rect, orientation: number, storedWidth: number, storedHeight: number): Rect {
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
    const { image, ...noise } = withNoiseReduced(asRaw(data, info));
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
      image, format: meta.format, hadAlpha: meta.hasAlpha, density: meta.density ?? null, originalWidth, originalHeight,
      shrink: factor === 1 ? 1 : Math.round((originalWidth / info.width) * 100) / 100,
      noise,
      region,
    };
  } catch (e) {
    if (e instanceof PassportInputError) throw e;
    throw new PassportInputError('undecodable_image', `The image could not be decoded: ${(e as Error).message}`);
  }
}

