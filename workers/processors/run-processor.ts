// Wraps a processor: bad input (ServiceError) and a full disk fail at once without retries;
// anything else (storage, network, catalog) is thrown as-is so BullMQ retries it with backoff.
import type { Job } from 'bullmq';
import { ServiceError, storageFull } from '../../src/errors.js';
import { StorageFullError } from '../../src/storage/storage.js';
import { unrecoverable } from '../../src/jobs/job-contract.js';

export function guarded<D, R>(fn: (job: Job<D, R>) => Promise<R>) {
  return async (job: Job<D, R>): Promise<R> => {
    try {
      return await fn(job);
    } catch (err) {
      if (err instanceof ServiceError && err.status < 500) throw unrecoverable(err);
      if (err instanceof StorageFullError) throw unrecoverable(storageFull());
      throw err;
    }
  };
}
