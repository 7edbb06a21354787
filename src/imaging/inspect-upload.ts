// Deep check of an uploaded original (worker side): real format from the bytes, pixel-bomb
// guard from the header before decoding, then a check for truncated/corrupt files: JPEGs by walking
// their structure to the end-of-image marker (jpeg-structure.ts), everything else (and any JPEG the
// walk cannot vouch for) by decoding it.
import crypto from 'node:crypto';
import sharp, { type Metadata } from 'sharp';
import { ServiceError } from '../errors.js';
import { jpegCompleteness } from './jpeg-structure.js';
import { FORMAT_EXTENSION, FORMAT_MIME, type OutputFormat } from './params.js';

export interface InspectedUpload {
  format: OutputFormat;
  extension: string;
  contentType: string;
  width: number;
  height: number;
  checksum: string;
  hasAlpha: boolean;
  /** Frames (animated WebP); 1 otherwise. */
  frames: number;
}


/**
 * `knownSha256`: the bytes' SHA-256 when the caller has it (not hashed again). `maxFrames`: an
 * animated WebP is accepted up to this many frames (MAX_ANIMATED_FRAMES); other formats need one.
 */
export async function inspectUpload(bytes: Buffer, maxInputPixels: number, knownSha256?: string, maxFrames = 1): Promise<InspectedUpload> {
  let meta: Metadata;
  try {
    // Header only: no pixel limit here (sharp's default would misreport a huge bomb as corrupt).
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw new ServiceError('unsupported_type', 'The file is corrupt or not an image (JPEG, PNG, WebP or AVIF expected)');
  }
  let format: OutputFormat;
  if (meta.format === 'jpeg' || meta.format === 'png' || meta.format === 'webp') format = meta.format;
  else if (meta.format === 'heif' && meta.compression === 'av1') format = 'avif';
  else throw new ServiceError('unsupported_type', `Unsupported image type "${meta.format}${meta.compression ? '/' + meta.compression : ''}"; JPEG, PNG, WebP or AVIF expected`);
  const width = meta.autoOrient?.width ?? meta.width ?? 0;
  const height = meta.autoOrient?.height ?? meta.height ?? 0;
  if (!width || !height) throw new ServiceError('unsupported_type', 'The image is corrupt: it has no dimensions');
  if (width * height > maxInputPixels) {
    throw new ServiceError('too_large', `The image has ${width}×${height} = ${width * height} pixels; the maximum is ${maxInputPixels}`);
  }
  const frames = format === 'avif' ? 1 : (meta.pages ?? 1);
  if (frames > 1 && format !== 'webp') throw new ServiceError('unsupported_type', 'Animated images are supported as WebP only');
  if (frames > maxFrames) {
    throw new ServiceError('unsupported_type', `The animated WebP has ${frames} frames; at most ${maxFrames} are accepted`);
  }
  // Every frame is decoded by a transform: the pixel guard counts them all.
  if (width * height * frames > maxInputPixels) {
    throw new ServiceError('too_large', `The animation has ${frames} frames of ${width}×${height} pixels; the maximum is ${maxInputPixels} pixels in all`);
  }
  const completeness = format === 'jpeg' ? jpegCompleteness(bytes) : 'unsure';
  if (completeness === 'truncated') {
    throw new ServiceError('unsupported_type', 'The image is corrupt or truncated (the JPEG data ends before its end-of-image marker)');
  }
  if (completeness === 'unsure') await decodeCheck(bytes, maxInputPixels);
  return {
    format,
    extension: FORMAT_EXTENSION[format],
    contentType: FORMAT_MIME[format],
    width,
    height,
    checksum: knownSha256 ?? crypto.createHash('sha256').update(bytes).digest('hex'),
    hasAlpha: meta.hasAlpha ?? false,
    frames,
  };
}

async function decodeCheck(bytes: Buffer, maxInputPixels: number): Promise<void> {
  try {
    // Decoding a small version still reads every byte of the stream, so truncation shows.
    await sharp(bytes, { failOn: 'warning', limitInputPixels: maxInputPixels }).resize(32, 32, { fit: 'inside' }).raw().toBuffer();
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : 'decode failed';
    throw new ServiceError('unsupported_type', `The image is corrupt or truncated (${reason})`);
  }
}
