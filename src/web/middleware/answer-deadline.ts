// Every caller is answered within JOB_TIMEOUT_MS (plus a short grace) of handing over its request,
// whatever the front door waits on: a catalog, Redis or storage behind a broken link sends no
// reset, and the steps around a job (key, image, staging, cached derivative) each wait their own
// timeouts. The clock starts when the request is complete: at arrival for a GET or HEAD, once the
// body has been read for the others (a slow client may take longer to send its body). When it
// runs out unanswered: 504 with Retry-After in the route's error shape, as for a job that did not
// finish in time; what the handler answers later is dropped (see errorHandler).
import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../../errors.js';
import { renderError } from './error-handler.js';

/**
 * After JOB_TIMEOUT_MS a job's own 504 (which names the job) comes first: the job's clock starts
 * a little later than the request's, after authentication and staging.
 */
export const ANSWER_GRACE_MS = 250;

export function answerDeadline(jobTimeoutMs: number) {
  const ms = jobTimeoutMs + ANSWER_GRACE_MS;
  return (req: Request, res: Response, next: NextFunction) => {
    let timer: NodeJS.Timeout | undefined;
    const start = () => {
      if (res.writableEnded) return;
      timer = setTimeout(() => {
        if (res.headersSent) return;
        req.log?.warn({ reqId: req.id, ms }, 'request not answered in time; answering 504');
        renderError(new ServiceError('timeout', `Not answered within ${jobTimeoutMs} ms (JOB_TIMEOUT_MS): the work or a backing service is slow; retry shortly`, { retryAfterSeconds: 5 }), res);
      }, ms);
    };
    if (req.method === 'GET' || req.method === 'HEAD' || req.readableEnded) start();
    else req.once('end', start);
    const stop = () => {
      clearTimeout(timer);
      req.off('end', start);
    };
    res.once('close', stop);
    res.once('finish', stop);
    next();
  };
}
