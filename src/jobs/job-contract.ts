// The job contract between the front door and the workers: the queues, what a job of each carries
// (storage keys and parameters, never image bytes), what it returns, and how its outcome or failure
// travels back to a waiting caller.
import { UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { DerivativeOrigin } from '../catalog/models/derivative.model.js';
import { ConfigError } from '../config.js';
import { ServiceError } from '../errors.js';
import type { ImageInfo } from '../imaging/image-info-shape.js';
import type { OutputFormat, TransformPlan } from '../imaging/params.js';
import type { ImagePreview } from '../imaging/preview.js';
import type { ByteCurve } from '../imaging/srcset-widths.js';

export const QUEUE_NAMES = {
  uploadFinalize: 'upload-finalize',
  transform: 'transform',
  passport: 'passport',
  analyze: 'analyze',
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

export const ALL_QUEUES: readonly QueueName[] = Object.values(QUEUE_NAMES);

/** BullMQ key prefix; also used for worker heartbeats. */
export const REDIS_PREFIX = 'pictor';

/** The upload-finalize job of an upload (one per upload: a repeated request finds it). */
export function uploadJobId(uploadId: string): string {
  return `up-${uploadId}`;
}

/**
 * The queues a worker process serves: the names WORKER_QUEUES lists (config.workerQueues), all
 * when it lists none. An unknown name is a ConfigError naming WORKER_QUEUES.
 */
export function servedQueues(requested: readonly string[]): readonly QueueName[] {
  const unknown = requested.filter((q) => !ALL_QUEUES.includes(q as QueueName));
  if (unknown.length > 0) throw new ConfigError('WORKER_QUEUES', `has unknown queue(s) ${unknown.join(', ')}; known: ${ALL_QUEUES.join(', ')}`);
  return requested.length > 0 ? (requested as QueueName[]) : ALL_QUEUES;
}

// --- Job data and results

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
  /** The stored object's custom metadata (q=auto's chosen quality). */
  metadata: Record<string, string>;
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

/** What an analyze job computes about one image version (kept in the catalog: image-analysis.ts). */
export type AnalyzeTask =
  /** GET /cdn/{id}/info's answer. */
  | { kind: 'info' }
  /** srcset w=auto's byte curve: renders as the srcset's URLs ask for them, in this format and quality. */
  | { kind: 'byte-curve'; format: OutputFormat; quality: number | string };

export interface AnalyzeJobData {
  userId: string;
  imageId: string;
  /** The version analysed: the job fails (not found) once the image names another. */
  version: string;
  sourceKey: string;
  task: AnalyzeTask;
}

export type AnalyzeResult = { kind: 'info'; info: ImageInfo } | { kind: 'byte-curve'; curve: ByteCurve };

export interface JobTypes {
  [QUEUE_NAMES.uploadFinalize]: { data: UploadFinalizeJobData; result: UploadFinalizeResult };
  [QUEUE_NAMES.transform]: { data: TransformJobData; result: TransformResult };
  [QUEUE_NAMES.passport]: { data: PassportJobData; result: PassportJobResult };
  [QUEUE_NAMES.analyze]: { data: AnalyzeJobData; result: AnalyzeResult };
}

/** Job data of a job with a durable record (job-records.ts): the worker removes the record once the job has run. */
export interface RecordedJobData {
  jobRecordKey?: string;
}

// --- Failures: ServiceErrors (bad input) are serialized into the failure reason, so the front
// door answers 4xx with the worker's message.
const MARKER = 'pictor-error:';

/** Bad input: fail at once, no retries. */
export function unrecoverable(err: ServiceError): UnrecoverableError {
  return new UnrecoverableError(MARKER + JSON.stringify(err.toJSON()));
}

export function decodeFailure(failedReason: string | undefined, jobId: string): ServiceError {
  if (failedReason?.startsWith(MARKER)) {
    try {
      const parsed = ServiceError.fromJSON(JSON.parse(failedReason.slice(MARKER.length)));
      if (parsed) return parsed;
    } catch {
      /* fall through */
    }
  }
  return new ServiceError('unavailable', `Job ${jobId} failed after retries; please retry later`, { retryAfterSeconds: 5 });
}

// --- Outcomes: the worker that finishes a job publishes one message on a Redis channel that every
// front door subscribes to. (BullMQ's QueueEvents stream delivers ~5 events per job — added,
// waiting, active, completed, drained — to every front door; parsing them costs each front-door
// process ~1-2 ms of CPU per job in scripts/bench, whether it has a caller waiting or not.)
export const JOB_OUTCOMES_CHANNEL = `${REDIS_PREFIX}:job-outcomes`;

export type JobOutcome =
  | { queue: string; id: string; ok: true; result: unknown }
  /** Final failures only (retries exhausted, or bad input); `reason` is BullMQ's failedReason. */
  | { queue: string; id: string; ok: false; reason: string };

/** Worker side: announce a finished job (best effort: a waiting caller also checks the job's state). */
export async function publishJobOutcome(redis: Redis, outcome: JobOutcome): Promise<void> {
  await redis.publish(JOB_OUTCOMES_CHANNEL, JSON.stringify(outcome));
}

export function parseJobOutcome(message: string): JobOutcome | null {
  try {
    const value = JSON.parse(message) as Partial<JobOutcome>;
    if (typeof value.queue !== 'string' || typeof value.id !== 'string' || typeof value.ok !== 'boolean') return null;
    return value as JobOutcome;
  } catch {
    return null;
  }
}
