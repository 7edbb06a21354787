// Wraps a processor: bad input (ServiceError) fails at once without retries; anything else
// (storage, network, catalog) is thrown as-is so BullMQ retries it with backoff.
import type { Job } from 'bullmq';
import { ServiceError } from '../../src/errors.js';
import { unrecoverable } from '../../src/jobs/job-contract.js';

export function guarded<D, R>(fn: (job: Job<D, R>) => Promise<R>) {
  return async (job: Job<D, R>): Promise<R> => {
    try {
      return await fn(job);
    } catch (err) {
      if (err instanceof ServiceError && err.status < 500) throw unrecoverable(err);
      throw err;
    }
  };
}
