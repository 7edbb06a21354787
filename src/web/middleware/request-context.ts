// Request ids (honouring an incoming X-Request-Id) and one structured JSON log line per request,
// written with pino when the response has been sent. (pino-http did the same with a child logger
// per request: ~10 % of the front door's CPU on a cheap route such as /generate/srcset.)
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { pino, type Logger } from 'pino';

const INCOMING_ID = /^[\w.-]{1,100}$/;
/** Query values that are credentials: a logged signature would be a working URL for anyone reading logs. */
const SECRET_QUERY = /([?&](?:sig|token|api_key)=)[^&#]*/gi;

/** The request URL as logged: signature values replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  return url.includes('=') ? url.replace(SECRET_QUERY, '$1[redacted]') : url;
}

/** The request URL as the access log line carries it: redacted and JSON-encoded. */
export function loggedUrl(url: string): string {
  return JSON.stringify(redactUrl(url));
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

/** The request log of a front door: the general path calls `begin`, the hit path `id` and `written`. */
export interface RequestLog {
  begin: BeginRequest;
  /** The request's id: the caller's X-Request-Id when well-formed, else a new one. */
  id(req: IncomingMessage): string;
  /**
   * Writes the line of a request whose response has closed or was handed whole to the socket;
   * `urlJson` as loggedUrl() makes it (redacted, JSON-encoded), so a kept answer encodes it once.
   */
  written(res: ServerResponse, id: string, method: string, urlJson: string, started: number): void;
}

export function requestLogger(log: Logger): RequestLog {
  // Ids need to be unique, not secret: a random prefix per front door and a counter.
  const prefix = randomBytes(6).toString('hex');
  let sequence = 0;
  const lineOf = accessLine(log);
  const id = (req: IncomingMessage) => {
    const incoming = req.headers['x-request-id'];
    return typeof incoming === 'string' && INCOMING_ID.test(incoming) ? incoming : `${prefix}-${(sequence++).toString(36)}`;
  };
  const written = (res: ServerResponse, reqId: string, method: string, urlJson: string, started: number) => {
    const status = res.statusCode;
    const responseTime = Math.round(performance.now() - started);
    if (!res.writableFinished) lineOf('warn', reqId, method, urlJson, status, responseTime, 'request aborted');
    else if (status >= 500) lineOf('error', reqId, method, urlJson, status, responseTime, 'request completed');
    else if (status >= 400) lineOf('warn', reqId, method, urlJson, status, responseTime, 'request completed');
    else lineOf('info', reqId, method, urlJson, status, responseTime, 'request completed');
  };
  const begin: BeginRequest = (req, res) => {
    const reqId = id(req);
    res.setHeader('X-Request-Id', reqId);
    const rawUrl = req.url ?? '/';
    if (!QUIET_PATHS.has(rawUrl)) {
      const started = performance.now();
      const method = req.method ?? '';
      const urlJson = loggedUrl(rawUrl);
      // Headers are not logged, so keys never reach the logs; signatures in the query are redacted.
      res.once('close', () => written(res, reqId, method, urlJson, started));
    }
    return reqId;
  };
  return { begin, id, written };
}

type AccessLevel = 'info' | 'warn' | 'error';

/**
 * The access log line, written to the logger's destination as pino would write
 * `log[level]({ req: { id, method, url }, res: { statusCode }, responseTime }, msg)`, without
 * pino's per-call object walk and serialisation: with the hit path's URL redacted and encoded once
 * per kept answer, a cache hit's line costs a few µs against ~21 through `log.info` (docs/performance.md).
 * The logger's level, time and bindings are pino's own (test/web/middleware/request-context.test.ts
 * compares the two lines). The id ([\w.-]) and the method (an HTTP token) need no JSON escaping.
 */
function accessLine(log: Logger) {
  const internals = log as unknown as Record<symbol, unknown>;
  const { streamSym, timeSym, chindingsSym } = pino.symbols;
  return (level: AccessLevel, id: string, method: string, urlJson: string, status: number, responseTime: number, msg: string) => {
    if (!log.isLevelEnabled(level)) return;
    const stream = internals[streamSym] as { write(line: string): unknown };
    const time = (internals[timeSym] as () => string)();
    stream.write(
      `{"level":${log.levels.values[level]}${time}${internals[chindingsSym] as string},"req":{"id":"${id}","method":"${method}","url":${urlJson}},"res":{"statusCode":${status}},"responseTime":${responseTime},"msg":"${msg}"}\n`,
    );
  };
}

/** The Express middleware of the same (the hit path uses the RequestLog's `id` and `written`). */
export function requestContext(log: Logger, begin: BeginRequest = requestLogger(log).begin) {
  return (req: Request, res: Response, next: NextFunction) => {
    req.id = begin(req, res);
    req.log = log;
    next();
  };
}
