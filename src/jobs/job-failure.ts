// How a processor's failure travels back to the waiting caller: ServiceErrors (bad input) are
// serialized into the failure reason so the front door can answer 4xx with the same message.
import { UnrecoverableError } from 'bullmq';
import { ServiceError } from '../errors.js';

const MARKER = 'pictor-error:';

/** Bad input: fail at once, no retries. */
export function unrecoverable(err: ServiceError): UnrecoverableError {
  return new UnrecoverableError(MARKER + JSON.stringify(err.toJSON()));
}

export function decodeFailure(failedReason: string | undefined, jobId: string): ServiceError {
  if (failedReason?.startsWith(MARKER)) {
    try {
      const parsed = ServiceError.fromJSON(JSON.parse(failedReason.slice(MARKER.length)));
      if (parsed) return parsed;
    } catch {
      /* fall through */
    }
  }
  return new ServiceError('unavailable', `Job ${jobId} failed after retries; please retry later`, { retryAfterSeconds: 5 });
}
