// The upload pipeline shared by POST /upload (set A) and POST /cdn/upload (set B):
// stream to staging → upload-finalize job in a worker → catalogued original.
import type { Request } from 'express';
import type { AuthenticatedUser } from '../../catalog/api-keys.js';
import { planById } from '../../catalog/plans.js';
import { QUEUE_NAMES } from '../../jobs/queue-names.js';
import type { UploadFinalizeResult } from '../../jobs/job-types.js';
import type { WebDeps } from '../web-deps.js';
import { publicIdFromFilename, validatePublicId } from './public-id.js';
import { receiveUpload } from './upload-receiver.js';

export interface UploadOutcome extends UploadFinalizeResult {
  publicUrl: string;
}

export interface UploadOptions {
  publicId?: string;
  /** Resolves the project after the body is read (set B's `project` form field). */
  resolveProject?: (fields: Record<string, string>) => Promise<string | null>;
  priority?: number;
}

export function maxUploadBytesFor(deps: WebDeps, user: AuthenticatedUser): number {
  return Math.min(deps.config.maxUploadBytes, planById(user.plan).max_upload_bytes);
}

export async function handleUpload(deps: WebDeps, req: Request, user: AuthenticatedUser, options: UploadOptions): Promise<UploadOutcome> {
  const explicitId = options.publicId !== undefined ? validatePublicId(options.publicId) : undefined;
  const received = await receiveUpload(req, deps.storage, maxUploadBytesFor(deps, user));
  try {
    const publicId = explicitId ?? (received.fields.public_id ? validatePublicId(received.fields.public_id) : publicIdFromFilename(received.filename));
    const projectId = options.resolveProject ? await options.resolveProject(received.fields) : null;
    const result = await deps.jobs.run(
      QUEUE_NAMES.uploadFinalize,
      {
        uploadId: received.uploadId,
        userId: user.userId,
        publicId,
        stagingKey: received.stagingKey,
        stagedBytes: received.size,
        projectId,
        maxInputPixels: deps.config.maxInputPixels,
        storageQuotaBytes: planById(user.plan).storage_bytes,
      },
      { jobId: `up-${received.uploadId}`, priority: options.priority },
    );
    return { ...result, publicUrl: deps.storage.publicUrl(result.storageKey) };
  } catch (err) {
    // Refused before the job ran (bad public id, project): nothing may stay behind.
    await deps.storage.delete(received.stagingKey).catch(() => undefined);
    throw err;
  }
}
