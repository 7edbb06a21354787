// Redis connections and BullMQ queues as the front door, the workers and the scripts open them,
// and what Pictor relies on in BullMQ beyond its documented API. Each such assumption is checked
// against the installed BullMQ by test/jobs/queues.test.ts (real Redis, real Worker), which also
// fails when BullMQ's major version moves past the one checked here: read this file again before
// upgrading.
import { Queue, type Job, type JobState, type JobsOptions } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { REDIS_PREFIX, type QueueName } from './job-contract.js';

// One Redis connection for queues (fail fast while Redis is away), duplicated with
// maxRetriesPerRequest: null for workers and the job-outcome subscriber, as BullMQ and ioredis
// require for blocking calls.
export function createQueueConnection(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    // Commands issued while disconnected reject at once: callers get a fast 503, not a hang.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
    ...extra,
  });
}

export function createBlockingConnection(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    connectTimeout: 3000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    ...extra,
  });
}

export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 4,
  backoff: { type: 'exponential', delay: 300 },
  removeOnComplete: { age: 3600, count: 2000 },
  removeOnFail: { age: 24 * 3600, count: 5000 },
};

/** A queue as every producer adds to it (prefix, retries, retention). */
export function openQueue(name: QueueName, connection: Redis): Queue {
  return new Queue(name, { connection, prefix: REDIS_PREFIX, defaultJobOptions: DEFAULT_JOB_OPTIONS });
}

// --- BullMQ beyond its documented API

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

// A job read together with its state, consistently. GET /jobs/{id} reads the job, then its state:
// a job that finishes between the two reads is reported completed (or failed) while the object in
// hand was read as it ran, without the result (or the failure reason). Such a job is read again.
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
