// What Pictor relies on in BullMQ beyond its documented API, in one place. Each assumption is
// checked against the installed BullMQ by test/jobs/bullmq-internals.test.ts (real Redis, real
// Worker), which also fails when BullMQ's major version moves past the one checked here: read
// these functions again before upgrading.
import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** The BullMQ version these assumptions were last checked against. */
export const CHECKED_BULLMQ_VERSION = '6.7.0';

/**
 * Whether a job has finished (completed, or failed with no attempt left). BullMQ writes the
 * `finishedOn` field of the job's hash (key `queue.toKey(jobId)`) in the same script that moves the
 * job to completed or failed, and never for a failure it will retry. One HGET, where
 * Queue.getJobState runs a script over the queue's lists. `connection`: the queue's own, so the
 * HGET is pipelined with a preceding add.
 */
export async function hasFinished(connection: Redis, queue: Queue, jobId: string): Promise<boolean> {
  return (await connection.hget(queue.toKey(jobId), 'finishedOn')) !== null;
}

/**
 * In a Worker's 'failed' handler: true when no attempt is left. BullMQ sets job.finishedOn only
 * when it moves the job to failed for good; a failure it will retry leaves it unset.
 */
export function isFinalFailure(job: Pick<Job, 'finishedOn'>): boolean {
  return Boolean(job.finishedOn);
}
