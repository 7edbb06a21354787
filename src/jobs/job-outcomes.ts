// How a finished job's outcome reaches the callers waiting for it: the worker that finished it
// publishes one message on a Redis channel that every front door subscribes to. (BullMQ's
// QueueEvents stream delivers ~5 events per job — added, waiting, active, completed, drained — to
// every front door; parsing them cost each front-door process ~1-2 ms of CPU per job in
// scripts/bench, whether it had a caller waiting or not.)
import type { Redis } from 'ioredis';
import { REDIS_PREFIX } from './queue-names.js';

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
