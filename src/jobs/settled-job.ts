// A job read together with its state, consistently. GET /jobs/{id} reads the job, then its state:
// a job that finishes between the two reads is reported completed (or failed) while the object in
// hand was read as it ran, without the result (or the failure reason); the caller then got a 500
// (seen in the crash tests, which poll every 100 ms while jobs run).
import type { Job, JobState } from 'bullmq';

export interface SettledJob<J extends Job> {
  job: J;
  state: JobState | 'unknown';
}

/**
 * `job` (already read) and its state; when the state says finished but the job was read before
 * it finished (no finishedOn), the job as `reread` finds it now. Undefined when it is gone by then.
 */
export async function settledJob<J extends Job>(job: J, reread: () => Promise<J | undefined>): Promise<SettledJob<J> | undefined> {
  const state = await job.getState();
  if ((state === 'completed' || state === 'failed') && !job.finishedOn) {
    const now = await reread();
    return now ? { job: now, state } : undefined;
  }
  return { job, state };
}
