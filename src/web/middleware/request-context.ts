// Request ids (honouring an incoming X-Request-Id) and one structured JSON log line per request,
// written with pino when the response has been sent. (pino-http did the same with a child logger
// per request: ~10 % of the front door's CPU on a cheap route such as /generate/srcset.)
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

const INCOMING_ID = /^[\w.-]{1,100}$/;
/** Query values that are credentials: a logged signature would be a working URL for anyone reading logs. */
const SECRET_QUERY = /([?&](?:sig|token|api_key)=)[^&#]*/gi;

/** The request URL as logged: signature values replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  return url.includes('=') ? url.replace(SECRET_QUERY, '$1[redacted]') : url;
}
/** Probes and scrapes every few seconds would drown the request log. */
const QUIET_PATHS = new Set(['/health', '/metrics']);

declare module 'express-serve-static-core' {
  interface Request {
    /** Request id: the caller's X-Request-Id when well-formed, else a new one. */
    id?: string;
    /** The front door's logger, bound to nothing per request (log lines carry `reqId`). */
    log?: Logger;
  }
}

/** Gives a request its id (X-Request-Id) and logs one line when its response ends; returns the id. */
export type BeginRequest = (req: IncomingMessage, res: ServerResponse) => string;

export function requestLogger(log: Logger): BeginRequest {
  // Ids need to be unique, not secret: a random prefix per front door and a counter.
  const prefix = randomBytes(6).toString('hex');
  let sequence = 0;
  return (req, res) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && INCOMING_ID.test(incoming) ? incoming : `${prefix}-${(sequence++).toString(36)}`;
    res.setHeader('X-Request-Id', id);
    const rawUrl = req.url ?? '/';
    if (!QUIET_PATHS.has(rawUrl)) {
      const started = performance.now();
      const method = req.method;
      const url = redactUrl(rawUrl);
      // Headers are not logged, so keys never reach the logs; signatures in the query are redacted.
      res.once('close', () => {
        const status = res.statusCode;
        const line = { req: { id, method, url }, res: { statusCode: status }, responseTime: Math.round(performance.now() - started) };
        if (!res.writableFinished) log.warn(line, 'request aborted');
        else if (status >= 500) log.error(line, 'request completed');
        else if (status >= 400) log.warn(line, 'request completed');
        else log.info(line, 'request completed');
      });
    }
    return id;
  };
}

/** The Express middleware of the same (the hit path calls `begin` itself). */
export function requestContext(log: Logger, begin: BeginRequest = requestLogger(log)) {
  return (req: Request, res: Response, next: NextFunction) => {
    req.id = begin(req, res);
    req.log = log;
    next();
  };
}
