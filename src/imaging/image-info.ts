// What GET /cdn/{id}/info and /image/info say about an original: its catalog entry (size after
// EXIF orientation, format, bytes, the placeholders and faces found at upload) and what its header
// says (alpha, colour space, orientation, frames, three EXIF fields and whether it carries GPS).
// Computed by an analyze job in a worker (sharp and exif-reader stay out of the front door) and
// kept in the catalog per version. Derivatives never carry any of it: the pipeline strips all
// metadata.
import exifReader from 'exif-reader';
import sharp from 'sharp';
import type { OutputFormat } from './formats.js';
import type { ImageInfo } from './image-info-shape.js';
import type { ImagePreview } from './preview.js';

export type { ImageInfo } from './image-info-shape.js';

export interface CataloguedOriginal {
  width: number;
  height: number;
  format: string;
  bytes: number;
  preview?: ImagePreview | null;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.replace(/\0+$/, '').trim() !== '' ? value.replace(/\0+$/, '').trim() : null;
}

/**
 * When the photo was taken (DateTimeOriginal, else DateTimeDigitized; not DateTime, which editors
 * change). EXIF date-times carry no zone (exif-reader reads them as UTC): told as the camera's
 * local time, ISO form without offset.
 */
function takenAt(value: unknown): string | null {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString().slice(0, 19) : null;
}

/** GPS coordinates in XMP (`exif:GPSLatitude`, as some editors write them instead of EXIF). */
function xmpHasLocation(xmp: Buffer | undefined): boolean {
  return xmp !== undefined && /GPS(Latitude|Longitude)/.test(xmp.toString('latin1'));
}

function exifFacts(exif: Buffer | undefined): { exif: ImageInfo['exif']; hasLocation: boolean } {
  if (!exif) return { exif: null, hasLocation: false };
  try {
    const tags = exifReader(exif);
    return {
      exif: { make: text(tags.Image?.Make), model: text(tags.Image?.Model), taken_at: takenAt(tags.Photo?.DateTimeOriginal ?? tags.Photo?.DateTimeDigitized) },
      hasLocation: tags.GPSInfo?.GPSLatitude !== undefined || tags.GPSInfo?.GPSLongitude !== undefined,
    };
  } catch {
    // EXIF that cannot be parsed tells nothing; whether it holds GPS is then judged from its bytes.
    return { exif: null, hasLocation: exif.includes('GPS') };
  }
}

export async function describeOriginal(bytes: Buffer, entry: CataloguedOriginal): Promise<ImageInfo> {
  const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  const { exif, hasLocation } = exifFacts(meta.exif);
  const preview = entry.preview ?? null;
  const frames = meta.pages ?? preview?.frames ?? 1;
  return {
    width: entry.width,
    height: entry.height,
    // One of the four upload formats (the upload's inspection decided it).
    format: entry.format as OutputFormat,
    bytes: entry.bytes,
    has_alpha: meta.hasAlpha === true,
    space: meta.space ?? 'srgb',
    orientation: meta.orientation ?? 1,
    animated: frames > 1,
    frames,
    dominant_color: preview?.dominantColor ?? null,
    thumbhash: preview?.thumbhash ?? null,
    lqip: preview?.lqip ?? null,
    faces: preview?.faces ?? [],
    exif,
    has_location: hasLocation || xmpHasLocation(meta.xmp),
  };
}
