// Job data carries storage keys and parameters, never image bytes.
import type { DerivativeOrigin } from '../catalog/models/derivative.model.js';
import type { TransformPlan } from '../imaging/params.js';
import type { ImagePreview } from '../imaging/preview.js';
import type { QUEUE_NAMES } from './queue-names.js';

export interface UploadFinalizeJobData {
  uploadId: string;
  userId: string;
  publicId: string;
  stagingKey: string;
  /** Size counted by the front door while streaming; the worker re-checks it. */
  stagedBytes: number;
  /**
   * SHA-256 of the file as the front door received it: the worker takes it as the checksum
   * when the staged object still has stagedBytes.
   */
  stagedSha256: string;
  projectId: string | null;
  maxInputPixels: number;
  /** Storage quota of the owner's plan at request time. */
  storageQuotaBytes: number;
  /** Which face of the API received it (shapes the async job-status body). */
  api: 'A' | 'B';
  projectSlug: string | null;
}

export interface UploadFinalizeResult {
  imageId: string;
  publicId: string;
  storageKey: string;
  size: number;
  contentType: string;
  format: string;
  width: number;
  height: number;
  checksum: string;
  projectId: string | null;
  replaced: boolean;
  /** The original's version: derivative URLs handed out name it. */
  version: string;
  preview: ImagePreview | null;
}

export interface TransformJobData {
  userId: string;
  imageId: string;
  sourceKey: string;
  version: string;
  derivativeKey: string;
  plan: TransformPlan;
  origin: DerivativeOrigin;
}

export interface TransformResult {
  key: string;
  size: number;
  contentType: string;
  width: number;
  height: number;
  /** Validators of the stored derivative (as storage.stat reports them): the front door then skips a stat. */
  etag: string;
  updatedAt: string;
}

export interface PassportJobData {
  requestId: string;
  stagingKey: string;
  country: string;
  removeBackground: boolean;
  enhance: boolean;
  includePrintSheet: boolean;
  faceBox: { x: number; y: number; width: number; height: number } | null;
}

/** The processor's JSON answer; photo and sheet bytes are in storage under the given keys. */
export interface PassportJobResult {
  photoKey: string;
  printSheetKey: string | null;
  report: Record<string, unknown>;
}

export interface JobTypes {
  [QUEUE_NAMES.uploadFinalize]: { data: UploadFinalizeJobData; result: UploadFinalizeResult };
  [QUEUE_NAMES.transform]: { data: TransformJobData; result: TransformResult };
  [QUEUE_NAMES.passport]: { data: PassportJobData; result: PassportJobResult };
}
