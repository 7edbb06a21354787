// The photo's JPEG: within the document's kB limit, with its DPI and an sRGB profile.
import sharp from 'sharp';
import type { RawImage } from '../vision/raw-image.js';
import { sharpenLuma } from './enhance.js';
import type { PassportSpec } from './specs.js';
import { withSrgbProfile } from './srgb-profile.js';

/** JPEG qualities tried in order until the file fits the spec's kB limit. */
export const JPEG_QUALITY_STEPS = [95, 92, 90, 87, 84, 80, 76, 72, 68, 64, 60, 55, 50, 45, 40] as const;

/** The photo's JPEG, its quality, and the pixels that were encoded. */
export interface EncodedPhoto {
  buffer: Buffer;
  quality: number;
  pixels: RawImage;
}

/**
 * JPEG (sRGB profile, DPI written) at the first quality of JPEG_QUALITY_STEPS that fits the spec's
 * kB limit; never padded. Sharpened first (enhance.ts, sharpenLuma) when asked; returns the pixels
 * that were encoded.
 */
export async function encodeWithinLimit(img: RawImage, spec: PassportSpec, sharpen: boolean): Promise<EncodedPhoto> {
  const pixels = sharpen ? sharpenLuma(img) : img;
  const rawIn = { raw: { width: img.width, height: img.height, channels: 3 as const } };
  const maxBytes = (spec.fileSizeKb.max ?? Infinity) * 1000;
  let last: EncodedPhoto | null = null;
  for (const quality of JPEG_QUALITY_STEPS) {
    const jpeg = await sharp(pixels.data, rawIn)
      .jpeg({ quality, chromaSubsampling: quality >= 90 ? '4:4:4' : '4:2:0' })
      .withDensity(spec.dpi)
      .toBuffer();
    last = { buffer: await withSrgbProfile(jpeg), quality, pixels };
    if (last.buffer.length <= maxBytes) return last;
  }
  if (!last) throw new Error('no JPEG quality steps');
  return last; // still too large at the lowest quality: reported by the file_size check
}

/** The JPEG read back as a reader would: its pixels and size as decoded, and the DPI in its header. */
export interface Encoded extends EncodedPhoto {
  decoded: RawImage;
  density: number | null;
}

export async function encodeAndReadBack(img: RawImage, spec: PassportSpec, sharpen: boolean): Promise<Encoded> {
  const jpeg = await encodeWithinLimit(img, spec, sharpen);
  const [{ data, info }, meta] = await Promise.all([sharp(jpeg.buffer).removeAlpha().raw().toBuffer({ resolveWithObject: true }), sharp(jpeg.buffer).metadata()]);
  const decoded = { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: 3 as const };
  return { ...jpeg, decoded, density: meta.density ?? null };
}
