// Request and response shapes of the Pictor API, as the SDK sees them (README "Decisions"). The
// response bodies are the server's own schemas (src/api/responses.schemas.ts, types inferred in src/api/response-types.ts), their types inferred.
import type { CdnUploadResult, ImageList, ImageTestResult } from '../api/response-types.js';
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

/** What `upload` answers (POST /cdn/upload). */
export type UploadResult = CdnUploadResult;

export interface SrcsetOptions {
  /**
   * Widths in the order wanted (default SRCSET_WIDTHS.default: 400, 800, 1200), or `'auto'`:
   * widths about `bytes_step` bytes apart from `min_w` to `max_w`, at most `max_images` of them
   * (chosen by the server: `srcset` only, not `signedSrcset`).
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

/** `GET /cdn/{imageId}/info` and `GET /image/info`: what the original is (the server's own type). */
export type { ImageInfo } from '../imaging/image-info-shape.js';

export type ImagePage = ImageList;
export type ImageRecord = ImageList['images'][number];

export interface ListImagesOptions {
  /** Project slug. */
  project?: string;
  /** 1-100 (default 50). */
  limit?: number;
  /** `next_cursor` of the previous page. */
  cursor?: string;
}

/** A plan as `GET /plans` returns it (the server's own record type). */
export type { Plan } from '../catalog/plans.js';

/** What `GET /image/test` answers for a valid key. */
export type KeyInfo = ImageTestResult;

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

export type { DeleteImagesResult, DeleteProjectResult, ImageDescription, PassportResult, PassportSpecs, Project, SrcsetResult, TransformResult, Usage } from '../api/response-types.js';
