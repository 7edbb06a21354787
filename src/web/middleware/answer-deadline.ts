// A caller without a body to send (GET, HEAD) is answered within JOB_TIMEOUT_MS of its arrival,
// whatever the front door waits on: a catalog, Redis or storage behind a broken link sends no
// reset, and the steps before a job (key, image, cached derivative) each wait their own timeout.
// When the deadline passes unanswered: 504 with Retry-After in the route's error shape, as a job
// that did not finish in time is answered; what the handler answers later is dropped (see
// errorHandler). Uploads are left to their own timeouts:
// a slow client may legitimately take longer to send its body.
import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../../errors.js';
import { renderError } from './error-handler.js';

export function answerDeadline(ms: number) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      req.log?.warn({ reqId: req.id, ms }, 'request not answered in time; answering 504');
      renderError(new ServiceError('timeout', `Not answered within ${ms} ms (JOB_TIMEOUT_MS): the work or a backing service is slow; retry shortly`, { retryAfterSeconds: 5 }), res);
    }, ms);
    res.once('close', () => clearTimeout(timer));
    res.once('finish', () => clearTimeout(timer));
    next();
  };
}
