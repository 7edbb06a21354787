// Request and response shapes of the Pictor API, as the SDK sees them (README "Decisions").
import type { FORMAT_VALUES, ParamValues } from '../imaging/params.js';
import type { ComplianceCheck } from '../passport/compliance-check.js';
import type { PassportCountry } from '../passport/specs.js';

export type FormatParam = (typeof FORMAT_VALUES)[number];

/**
 * Parameters of `/transform` and of signed URLs (set A), generated from the server's parameter
 * registry (src/imaging/params.ts): names, enums and value types cannot drift from what it accepts.
 * Pass `v: image.version` for a URL that is immutable (and changes when the image is replaced).
 */
export type TransformParams = ParamValues<'A'>;

/** Parameters of `/image/{path}` and `/cdn/{imageId}` (set B): set A's plus `fit` and `opt`. */
export type ImageParams = ParamValues<'B'>;

/** Placeholders and faces computed once at upload (null/empty for images stored before). */
export interface ImageDescription {
  /** The original's version: pass it as `v` for immutable derivative URLs. */
  version: string;
  /** ThumbHash (base64) of the image. */
  thumbhash: string | null;
  /** `#rrggbb`. */
  dominant_color: string | null;
  /** A tiny `data:image/webp;base64,…` preview (at most 1 kB). */
  lqip: string | null;
  /** Face boxes, 0-1 of the auto-oriented image. */
  faces: { x: number; y: number; w: number; h: number }[];
}

/** What `upload` and `passport.process` accept: a Blob/File, or bytes (Node Buffer, Uint8Array, ArrayBuffer). */
export type UploadInput = Blob | ArrayBuffer | ArrayBufferView;

export interface UploadOptions {
  /** Custom public id (`/`-separated segments of letters, digits, `_`, `-`, `.`); default: the file name. */
  publicId?: string;
  /** Project name (created when missing); default: the `default` project. */
  project?: string;
  /** File name sent with bytes (a File's own name is used otherwise). */
  filename?: string;
  /** MIME type sent with bytes (the service decides the type from the bytes anyway). */
  contentType?: string;
}

export interface UploadResult extends ImageDescription {
  success: boolean;
  error: string;
  public_url: string;
  /** The same URL under the name of the spec's worked examples. */
  cdn_url: string;
  size: number;
  content_type: string;
  imageId: string;
  project: string;
  public_id: string;
  width: number;
  height: number;
  checksum: string;
}

export interface TransformResult {
  success: boolean;
  error: string;
  public_url: string;
  size: number;
  content_type: string;
}

export interface SrcsetOptions {
  /**
   * Widths in the order wanted (default 400, 800, 1200), or `'auto'`: widths about `bytes_step`
   * bytes apart from `min_w` to `max_w`, at most `max_images` of them (chosen by the server:
   * `srcset` only, not `signedSrcset`).
   */
  widths?: number[] | 'auto';
  /** widths 'auto': the smallest width (default 200). */
  min_w?: number;
  /** widths 'auto': the largest width (default the original's, at most 4096). */
  max_w?: number;
  /** widths 'auto': bytes between consecutive candidates (default 20,000). */
  bytes_step?: number;
  /** widths 'auto': at most this many widths, then evenly spaced in bytes (default 8). */
  max_images?: number;
  f?: FormatParam;
  q?: TransformParams['q'];
  /** Value of the `sizes` attribute (default `(max-width: <largest>px) 100vw, <largest>px`). */
  sizes?: string;
  /** Seconds the signed URLs stay valid (a signed `exp`); without it they do not expire. */
  ttl?: number;
  /** signedSrcset: the image's version (`version` of its upload or listing entry): the URLs become immutable. */
  version?: string;
}

export interface SrcsetResult extends Partial<ImageDescription> {
  srcset: string;
  sizes: string;
  default: string;
}

/** `GET /cdn/{imageId}/info` and `GET /image/info`: what the original is (the server's own type). */
export type { ImageInfo } from '../imaging/image-info-shape.js';

export interface ImageRecord extends ImageDescription {
  imageId: string;
  public_url: string;
  public_id: string;
  project: string;
  format: string;
  width: number;
  height: number;
  size: number;
  checksum?: string;
  created_at: string;
}

export interface ImagePage {
  images: ImageRecord[];
  next_cursor: string | null;
  has_more: boolean;
}

export interface ListImagesOptions {
  /** Project slug. */
  project?: string;
  /** 1-100 (default 50). */
  limit?: number;
  /** `next_cursor` of the previous page. */
  cursor?: string;
}

export interface DeleteImagesResult {
  deleted: string[];
  not_found: string[];
}

export interface Project {
  projectId: string;
  name: string;
  slug: string;
  description: string | null;
  image_count: number;
  created_at: string;
}

export interface DeleteProjectResult {
  deleted: boolean;
  projectId: string;
  images_moved: number;
  images_deleted: number;
}

export interface Usage {
  storage_bytes: number;
  image_count: number;
  derivative_count: number;
  bandwidth_bytes: number;
  transformations: number;
  period_start: string;
  plan: string;
  limits: {
    storage_bytes: number;
    bandwidth_bytes_per_month: number;
    transformations_per_month: number;
    max_upload_bytes: number;
  };
}

/** A plan as `GET /plans` returns it (the server's own record type). */
export type { Plan } from '../catalog/plans.js';

export interface KeyInfo {
  valid: boolean;
  user_id: string;
  plan: string;
}

/** The documents the server has records for (one source: src/passport/specs.ts). */
export type { PassportCountry };

export interface FaceBox {
  /** Normalized 0-1 in the source image. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PassportOptions {
  country?: PassportCountry;
  includePrintSheet?: boolean;
  /** Replace the background with the spec's colour (default true). */
  removeBackground?: boolean;
  /** Mild exposure, white balance and sharpening (default true). */
  enhance?: boolean;
  /** Manual face box instead of detection. */
  faceBox?: FaceBox;
  /** Overrides the client's `demoToken`. */
  demoToken?: string;
  filename?: string;
}

export type { ComplianceCheck };

export interface PassportImage {
  /** `data:image/jpeg;base64,…` */
  data_url: string;
  width: number;
  height: number;
  dpi: number;
}

export interface PassportResult {
  success: boolean;
  country: PassportCountry;
  spec: Record<string, unknown> & { name: string };
  /** The face found (or given) in the source image; coordinates normalized 0-1. */
  face: { box: FaceBox; confidence?: number; keypoints?: Record<string, { x: number; y: number }>; detector?: string } | null;
  measurements: Record<string, unknown>;
  checks: ComplianceCheck[];
  /** Every check of severity 'error' passed. */
  compliant: boolean;
  warnings: string[];
  photo: PassportImage & { bytes: number; format: string; quality: number };
  print_sheet: (PassportImage & { copies: number }) | null;
}

export interface PassportSpecs {
  countries: PassportCountry[];
  specs: Record<PassportCountry, Record<string, unknown> & { name: string }>;
}
