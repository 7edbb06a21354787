// The upload pipeline shared by POST /upload (set A) and POST /cdn/upload (set B):
// stream to staging → upload-finalize job in a worker → catalogued original.
import type { Request, Response } from 'express';
import type { AuthenticatedUser } from '../../catalog/api-keys.js';
import { planById } from '../../catalog/plans.js';
import { QUEUE_NAMES } from '../../jobs/queue-names.js';
import type { UploadFinalizeJobData } from '../../jobs/job-types.js';
import type { WebDeps } from '../web-deps.js';
import { publicIdFromFilename, validatePublicId } from './public-id.js';
import { priorityOf, wantsAsync } from './request-mode.js';
import { uploadBody } from './response-bodies.js';
import { receiveUpload } from './upload-receiver.js';

export interface UploadOptions {
  api: 'A' | 'B';
  publicId?: string;
  /** Resolves the project after the body is read (set B's `project` form field). */
  resolveProject?: (fields: Record<string, string>) => Promise<{ id: string; slug: string } | null>;
}

export function maxUploadBytesFor(deps: WebDeps, user: AuthenticatedUser): number {
  return Math.min(deps.config.maxUploadBytes, planById(user.plan).max_upload_bytes);
}

/** Receives the upload and answers: the result (200), or 202 with a job status URL when async. */
export async function handleUpload(deps: WebDeps, req: Request, res: Response, user: AuthenticatedUser, options: UploadOptions): Promise<void> {
  const explicitId = options.publicId !== undefined ? validatePublicId(options.publicId) : undefined;
  const async = wantsAsync(req);
  const received = await receiveUpload(req, deps.storage, { maxBytes: maxUploadBytesFor(deps, user), durable: async });
  let data: UploadFinalizeJobData;
  try {
    const publicId = explicitId ?? (received.fields.public_id ? validatePublicId(received.fields.public_id) : publicIdFromFilename(received.filename));
    const project = options.resolveProject ? await options.resolveProject(received.fields) : null;
    data = {
      uploadId: received.uploadId,
      userId: user.userId,
      publicId,
      stagingKey: received.stagingKey,
      stagedBytes: received.size,
      stagedSha256: received.sha256,
      projectId: project?.id ?? null,
      maxInputPixels: deps.config.maxInputPixels,
      storageQuotaBytes: planById(user.plan).storage_bytes,
      api: options.api,
      projectSlug: project?.slug ?? null,
    };
  } catch (err) {
    // Refused before the job: nothing may stay behind.
    await deps.storage.delete(received.stagingKey).catch(() => undefined);
    throw err;
  }
  const jobId = `up-${received.uploadId}`;
  const runOptions = { jobId, priority: priorityOf(req) };
  try {
    if (async) {
      await deps.jobs.enqueue(QUEUE_NAMES.uploadFinalize, data, runOptions);
      res.status(202).setHeader('Location', `${deps.config.baseUrl}/jobs/${jobId}`);
      res.json({ job_id: jobId, state: 'queued', status_url: `${deps.config.baseUrl}/jobs/${jobId}` });
      return;
    }
    const result = await deps.jobs.run(QUEUE_NAMES.uploadFinalize, data, runOptions);
    // The worker announced the replacement to every front door; this one also forgets at once.
    if (result.replaced) deps.images.forget({ imageId: result.imageId, userId: user.userId, publicId: result.publicId });
    res.json(uploadBody(deps.storage, result, options.api, data.projectSlug));
  } catch (err) {
    // Not queued (back-pressure, Redis down): the staged bytes must not linger.
    const queued = await deps.jobs.getJob(QUEUE_NAMES.uploadFinalize, jobId).catch(() => null);
    if (!queued) await deps.storage.delete(received.stagingKey).catch(() => undefined);
    throw err;
  }
}
