// GET /jobs/{id}: state of an async job (owner only); when done, the body the synchronous call
// would have returned; when failed, the error it would have returned.
import type { Request, Response } from 'express';
import { ServiceError } from '../../errors.js';
import { QUEUE_NAMES, decodeFailure, type QueueName, type TransformResult, type UploadFinalizeJobData, type UploadFinalizeResult } from '../../jobs/job-contract.js';
import { settledJob } from '../../jobs/queues.js';
import { currentUser } from '../middleware/auth.js';
import { transformBody, uploadBody } from '../services/response-bodies.js';
import type { WebDeps } from '../web-deps.js';

const QUEUE_BY_PREFIX: Record<string, QueueName> = { up: QUEUE_NAMES.uploadFinalize, tr: QUEUE_NAMES.transform };

export function jobStatusController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    const user = currentUser(res);
    const id = String(req.params.id);
    const queue = QUEUE_BY_PREFIX[id.split('-')[0]];
    const read = queue && /^[\w-]{1,80}$/.test(id) ? await deps.jobs.getJob(queue, id) : undefined;
    const notFound = new ServiceError('not_found', 'Job not found (finished jobs are kept for an hour)');
    // Someone else's job and a missing one look the same.
    if (!read || (read.data as { userId?: string }).userId !== user.userId) throw notFound;
    const settled = await settledJob(read, () => deps.jobs.getJob(queue, id));
    if (!settled) throw notFound;
    const { job, state } = settled;
    res.setHeader('Cache-Control', 'no-store');
    if (state === 'completed') {
      const result =
        queue === QUEUE_NAMES.uploadFinalize
          ? uploadBody(deps.storage, job.returnvalue as UploadFinalizeResult, (job.data as UploadFinalizeJobData).api, (job.data as UploadFinalizeJobData).projectSlug)
          : transformBody(deps.storage, job.returnvalue as TransformResult);
      res.json({ job_id: id, state, result });
      return;
    }
    if (state === 'failed') {
      const error = decodeFailure(job.failedReason, id);
      res.json({ job_id: id, state, error: { status: error.status, message: error.message } });
      return;
    }
    res.json({ job_id: id, state: state === 'unknown' ? 'queued' : state, attempts: job.attemptsMade });
  };
}

