// What GET /cdn/{id}/info and /image/info say about an original: its catalog entry (size, format,
// the placeholders and faces found at upload) and what its header says (alpha, colour space,
// orientation, frames, three EXIF fields and whether it carries GPS). Read from the header only;
// derivatives never carry any of it (the pipeline strips all metadata).
import exifReader from 'exif-reader';
import sharp from 'sharp';
import type { ImagePreview } from './preview.js';

export interface ImageInfo {
  width: number;
  height: number;
  format: string;
  bytes: number;
  has_alpha: boolean;
  space: string;
  /** EXIF orientation 1-8 (1 when absent); width and height are after applying it. */
  orientation: number;
  animated: boolean;
  frames: number;
  dominant_color: string | null;
  thumbhash: string | null;
  lqip: string | null;
  faces: ImagePreview['faces'];
  /** Only these three EXIF fields are ever told. */
  exif: { make: string | null; model: string | null; taken_at: string | null } | null;
  has_location: boolean;
}

export interface CatalogedOriginal {
  width: number;
  height: number;
  format: string;
  bytes: number;
  preview?: ImagePreview | null;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.replace(/\0+$/, '').trim() : null;
}

/** EXIF date-times carry no zone: given as the camera's local time, ISO form without offset. */
function takenAt(value: unknown): string | null {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString().slice(0, 19) : null;
}

export async function describeOriginal(bytes: Buffer, entry: CatalogedOriginal): Promise<ImageInfo> {
  const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  let exif: ImageInfo['exif'] = null;
  let hasLocation = false;
  if (meta.exif) {
    try {
      const tags = exifReader(meta.exif);
      exif = { make: text(tags.Image?.Make), model: text(tags.Image?.Model), taken_at: takenAt(tags.Photo?.DateTimeOriginal ?? tags.Image?.DateTime) };
      hasLocation = tags.GPSInfo?.GPSLatitude !== undefined || tags.GPSInfo?.GPSLongitude !== undefined;
    } catch {
      // Unreadable EXIF tells nothing.
    }
  }
  const preview = entry.preview ?? null;
  const frames = meta.pages ?? preview?.frames ?? 1;
  return {
    width: entry.width,
    height: entry.height,
    format: entry.format,
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
    has_location: hasLocation,
  };
}
