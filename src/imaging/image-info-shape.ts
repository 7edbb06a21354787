// The answer of GET /cdn/{id}/info and /image/info, as the worker computes it and the front door
// and the SDK pass it on (no sharp here: the front door imports it).
import type { FaceBox } from './focus.js';
import type { OutputFormat } from './formats.js';

export interface ImageInfo {
  /** After EXIF orientation. */
  width: number;
  height: number;
  format: OutputFormat;
  /** Size of the stored original. */
  bytes: number;
  has_alpha: boolean;
  /** libvips colour space (srgb, cmyk, b-w, …). */
  space: string;
  /** EXIF orientation 1-8 (1 when absent). */
  orientation: number;
  animated: boolean;
  frames: number;
  dominant_color: string | null;
  thumbhash: string | null;
  lqip: string | null;
  /** Found at upload, 0-1 of the auto-oriented original, largest first. */
  faces: (FaceBox & { score: number })[];
  /** Only these three EXIF fields are ever told; null without EXIF. */
  exif: { make: string | null; model: string | null; taken_at: string | null } | null;
  /** The original carries GPS coordinates (EXIF or XMP). */
  has_location: boolean;
}
