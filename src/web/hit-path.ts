// The hit path: a plain GET that the general path (the Express app) answered before with a
// derivative from memory is answered again here, before Express, from the HitMemo entry: one
// memo read, its holds re-checked (each one map read), the bytes from the derivative memory
// cache, the owner's bandwidth standing read without waiting. Everything else (a first request,
// If-None-Match / If-Modified-Since, Range, HEAD, a stale entry, an owner whose standing must be
// read) goes to the general path, the one place where those are decided. The request still gets
// its id, log line, metrics and bandwidth count, from the same request log and metrics as the app.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestLog } from './middleware/request-context.js';
import type { FrontDoorMetrics } from './monitoring/metrics.js';
import type { MemoEntry } from './services/hit-memo.js';
import type { WebDeps } from './web-deps.js';

export type HitPath = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createHitPath(deps: WebDeps, metrics: FrontDoorMetrics, requestLog: RequestLog): HitPath {
  const { hits, derivatives, limits, bandwidth } = deps;
  const settled = (res: ServerResponse, id: string, entry: MemoEntry, size: number, started: number) => {
    requestLog.written(res, id, 'GET', entry.loggedUrl, started);
    metrics.countHit(res, entry.route, size, entry.cacheHit, started);
  };
  /** Whether it answered; false leaves the request untouched for the general path. */
  return (req, res) => {
    if (req.method !== 'GET') return false;
    const h = req.headers;
    if (h.range !== undefined || h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) return false;
    const entry = hits.lookup(req);
    if (!entry) return false;
    const bytes = derivatives.hot(entry.objectKey);
    if (!bytes) {
      hits.forget(req);
      return false;
    }
    if (limits.mayServeNow(entry.ownerId) !== true) return false;
    const started = performance.now();
    const id = requestLog.id(req);
    // writeHead with the whole list and nothing set before takes node's path that formats the
    // list as it is (setHeader would first store every header in the response's own map).
    const head = entry.head;
    head[head.length - 1] = id;
    res.writeHead(200, head);
    res.end(bytes);
    bandwidth.add(entry.ownerId, bytes.length);
    // Handed whole to the socket (the usual case: the kernel took every byte), the answer is
    // logged and counted now, as it would be at its 'close'; one still being sent is logged at
    // its 'close', as the general path logs. A listener per answer is work a hit need not do.
    if (res.writableFinished) settled(res, id, entry, bytes.length, started);
    else res.once('close', () => settled(res, id, entry, bytes.length, started));
    return true;
  };
}
