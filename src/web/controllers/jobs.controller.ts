// GET /jobs/{id}: state of an async job (owner only); when done, the body the synchronous call
// would have returned; when failed, the error it would have returned.
import type { Request, Response } from 'express';
import { ServiceError } from '../../errors.js';
import { QUEUE_NAMES, decodeFailure, type QueueName, type TransformResult, type UploadFinalizeJobData, type UploadFinalizeResult } from '../../jobs/job-contract.js';
import { settledJob } from '../../jobs/queues.js';
import { readJobRecord, type JobRecord } from '../../jobs/job-records.js';
import { currentUser } from '../middleware/auth.js';
import { inputOf } from '../middleware/validate.js';
import { jobStatusInputs } from '../schemas/jobs.schemas.js';
import { transformBody, uploadBody } from '../services/response-bodies.js';
import type { WebDeps } from '../web-deps.js';

const QUEUE_BY_PREFIX: Record<string, QueueName> = { up: QUEUE_NAMES.uploadFinalize, tr: QUEUE_NAMES.transform };

/** A job's status from its durable record: its outcome once it ran, else queued (the next worker start adds it again). */
function fromRecord(record: JobRecord | null) {
  if (!record) return undefined;
  const { outcome } = record;
  const state = !outcome ? 'queued' : outcome.ok ? 'completed' : 'failed';
  return { data: record.data, state, result: outcome?.ok ? outcome.result : undefined, reason: outcome && !outcome.ok ? outcome.reason : undefined, attempts: 0 };
}

export function jobStatusController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const { id } = inputOf(res, jobStatusInputs).params;
    const queue = QUEUE_BY_PREFIX[id.split('-')[0]];
    const valid = queue && /^[\w-]{1,80}$/.test(id);
    const notFound = new ServiceError('not_found', 'Job not found (finished jobs are kept for an hour)');
    const read = valid ? await deps.jobs.getJob(queue, id) : undefined;
    const settled = read ? await settledJob(read, () => deps.jobs.getJob(queue, id)) : undefined;
    // Redis may have lost the job (a power cut within its fsync second): its durable record
    // (src/jobs/job-records.ts) still tells whether it is queued and, once run, what it answered.
    const status = settled
      ? { data: settled.job.data, state: settled.state, result: settled.job.returnvalue as unknown, reason: settled.job.failedReason, attempts: settled.job.attemptsMade }
      : valid
        ? fromRecord(await readJobRecord(deps.storage, queue, id))
        : undefined;
    // Someone else's job and a missing one look the same.
    if (!status || (status.data as { userId?: string }).userId !== user.userId) throw notFound;
    const { data, state } = status;
    res.setHeader('Cache-Control', 'no-store');
    if (state === 'completed') {
      const result =
        queue === QUEUE_NAMES.uploadFinalize
          ? uploadBody(deps.storage, status.result as UploadFinalizeResult, (data as UploadFinalizeJobData).api, (data as UploadFinalizeJobData).projectSlug)
          : transformBody(deps.storage, status.result as TransformResult);
      res.json({ job_id: id, state, result });
      return;
    }
    if (state === 'failed') {
      const error = decodeFailure(status.reason, id);
      res.json({ job_id: id, state, error: { status: error.status, message: error.message } });
      return;
    }
    res.json({ job_id: id, state: state === 'unknown' ? 'queued' : state, attempts: status.attempts });
  };
}

