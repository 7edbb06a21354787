// The upload pipeline shared by POST /upload (set A) and POST /cdn/upload (set B):
// stream to staging → upload-finalize job in a worker → catalogued original.
import type { Request, Response } from 'express';
import type { AuthenticatedUser } from '../../catalog/api-keys.js';
import { planById } from '../../catalog/plans.js';
import { QUEUE_NAMES, uploadJobId, type UploadFinalizeJobData } from '../../jobs/job-contract.js';
import { randomUUID } from 'node:crypto';
import { releaseAsyncUploadSlot, renameAsyncUploadSlot, takeAsyncUploadSlot } from '../../jobs/async-upload-slots.js';
import { ServiceError } from '../../errors.js';
import type { WebDeps } from '../web-deps.js';
import { publicIdFromFilename, validatePublicId } from './public-id.js';
import { priorityOf, wantsAsync } from './request-mode.js';
import { jobAccepted, uploadBody } from './response-bodies.js';
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

/**
 * An async upload is acknowledged before a worker checks it, so its bounds are checked before
 * its body is staged: the plan's storage (by the declared size) and the user's async uploads in
 * flight (MAX_ASYNC_UPLOADS_PER_USER, MAX_STAGED_BYTES_PER_USER). Returns the slot taken.
 */
async function takeAsyncSlot(deps: WebDeps, req: Request, res: Response, user: AuthenticatedUser): Promise<string> {
  const maxBytes = maxUploadBytesFor(deps, user);
  const declared = Number(req.headers['content-length']);
  const bytes = Number.isFinite(declared) && declared > 0 ? Math.min(declared, maxBytes) : maxBytes;
  const slot = `slot-${randomUUID()}`;
  try {
    await deps.limits.assertMayStore(user.userId, bytes);
    const refused = await takeAsyncUploadSlot(deps.redis, user.userId, slot, bytes, { maxCount: deps.config.maxAsyncUploadsPerUser, maxBytes: deps.config.maxStagedBytesPerUser });
    if (refused?.reason === 'count') {
      throw new ServiceError('rate_limited', `${refused.inFlight} async uploads of this account are still being processed (limit ${deps.config.maxAsyncUploadsPerUser}, MAX_ASYNC_UPLOADS_PER_USER); retry when some have finished`, { retryAfterSeconds: 5 });
    }
    if (refused) {
      throw new ServiceError('rate_limited', `Async uploads of this account have ${refused.stagedBytes} bytes waiting to be processed; ${bytes} more would pass ${deps.config.maxStagedBytesPerUser} (MAX_STAGED_BYTES_PER_USER); retry when some have finished`, { retryAfterSeconds: 5 });
    }
  } catch (err) {
    // Refused before the body was read: this connection ends with the answer.
    res.setHeader('Connection', 'close');
    throw err;
  }
  return slot;
}

/** Receives the upload and answers: the result (200), or 202 with a job status URL when async. */
export async function handleUpload(deps: WebDeps, req: Request, res: Response, user: AuthenticatedUser, options: UploadOptions): Promise<void> {
  const explicitId = options.publicId !== undefined ? validatePublicId(options.publicId) : undefined;
  const async = wantsAsync(req);
  const slot = async ? await takeAsyncSlot(deps, req, res, user) : null;
  let received: Awaited<ReturnType<typeof receiveUpload>>;
  try {
    received = await receiveUpload(req, res, deps.storage, { maxBytes: maxUploadBytesFor(deps, user), durable: async });
  } catch (err) {
    if (slot) await releaseAsyncUploadSlot(deps.redis, user.userId, slot).catch(() => undefined);
    throw err;
  }
  if (slot) await renameAsyncUploadSlot(deps.redis, user.userId, slot, received.uploadId, received.size);
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
    if (slot) await releaseAsyncUploadSlot(deps.redis, user.userId, received.uploadId).catch(() => undefined);
    throw err;
  }
  const jobId = uploadJobId(received.uploadId);
  const runOptions = { jobId, priority: priorityOf(req) };
  try {
    if (async) {
      await deps.jobs.enqueue(QUEUE_NAMES.uploadFinalize, data, runOptions);
      const accepted = jobAccepted(deps.config.baseUrl, jobId);
      res.status(202).setHeader('Location', accepted.status_url);
      res.json(accepted);
      return;
    }
    const result = await deps.jobs.run(QUEUE_NAMES.uploadFinalize, data, runOptions);
    // The worker announced the replacement to every front door; this one also forgets at once.
    if (result.replaced) deps.images.forget({ imageId: result.imageId, userId: user.userId, publicId: result.publicId });
    res.json(uploadBody(deps.storage, result, options.api, data.projectSlug));
  } catch (err) {
    // Not queued (back-pressure, Redis down): the staged bytes must not linger.
    const queued = await deps.jobs.getJob(QUEUE_NAMES.uploadFinalize, jobId).catch(() => null);
    if (!queued) {
      await deps.storage.delete(received.stagingKey).catch(() => undefined);
      if (slot) await releaseAsyncUploadSlot(deps.redis, user.userId, received.uploadId).catch(() => undefined);
    }
    throw err;
  }
}
