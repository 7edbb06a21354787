// Sends stored image bytes with validators and caching headers, and counts them as the owner's
// bandwidth (only bodies sent: 304s and HEADs count nothing; see BandwidthCounter).
import type { Request, Response } from 'express';
import fresh from 'fresh';
import parseRange from 'range-parser';
import { pipeline } from 'node:stream/promises';
import { ServiceError } from '../../errors.js';
import { notesHeaders } from '../../storage/derivative-metadata.js';
import { StorageNotFoundError, type StoredObject } from '../../storage/storage.js';
import { countBytesServed, routeLabel } from '../monitoring/metrics.js';
import type { WebDeps } from '../web-deps.js';

export interface SendOptions {
  ownerId: string;
  cacheControl: string;
  varyAccept?: boolean;
  /** Request headers besides Accept the answer depends on (client hints). */
  vary?: string[];
  /** Known object (skips a stat). */
  object?: StoredObject;
}

function etagOf(obj: StoredObject): string {
  return `"${obj.etag.replace(/"/g, '')}"`;
}

/**
 * The one byte range to send, as Express's own `send` decides it (range-parser): none when there
 * is no Range header, an If-Range that no longer matches (the client's copy is stale: send it
 * whole), a unit other than bytes, a malformed header or several ranges (sent whole rather than
 * as multipart); 'unsatisfiable' (416) when no range lies inside the object.
 */
function rangeOf(req: Request, size: number, etag: string, lastModified: string): { start: number; end: number } | null | 'unsatisfiable' {
  const header = req.headers.range;
  if (!header || !ifRangeHolds(req.get('if-range'), etag, lastModified)) return null;
  const ranges = parseRange(size, header, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return null;
  return ranges[0];
}

/** If-Range names the current entity tag (strong comparison) or a date no earlier than Last-Modified. */
function ifRangeHolds(ifRange: string | undefined, etag: string, lastModified: string): boolean {
  if (!ifRange) return true;
  if (ifRange.includes('"')) return ifRange.trim() === etag;
  const since = Date.parse(ifRange);
  return !Number.isNaN(since) && Date.parse(lastModified) <= since;
}

/** What the render noted (`X-Pictor-Quality`, `X-Pictor-Remove-Bg`), read from the stored object, so hits say it too. */
export function setRenderHeaders(res: Response, obj: StoredObject): void {
  for (const [name, value] of notesHeaders(obj)) res.setHeader(name, value);
}

export async function sendStoredImage(deps: WebDeps, req: Request, res: Response, key: string, options: SendOptions): Promise<void> {
  const obj = options.object ?? (await deps.storage.stat(key));
  if (!obj) throw new ServiceError('not_found', 'Image not found');
  const etag = etagOf(obj);
  const lastModified = obj.updatedAt.toUTCString();
  // If-None-Match, else If-Modified-Since (fresh, as Express's req.fresh), without the request's
  // Cache-Control: fetch() adds "no-cache" to every request carrying a validator, and fresh would
  // then never answer 304. That directive addresses caches on the way; the origin (RFC 9110 §13)
  // still evaluates the condition.
  const conditions = { 'if-none-match': req.headers['if-none-match'], 'if-modified-since': req.headers['if-modified-since'] };
  const notModified = fresh(conditions, { etag, 'last-modified': lastModified });
  // Past the owner's monthly bandwidth no more bytes go out (a 304 or a HEAD sends none). Checked
  // before any caching header is set, so the refusal is not cached as the image.
  if (!notModified && req.method !== 'HEAD') await deps.limits.assertMayServe(options.ownerId);
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', options.cacheControl);
  res.setHeader('Last-Modified', lastModified);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  setRenderHeaders(res, obj);
  const vary = [...(options.varyAccept ? ['Accept'] : []), ...(options.vary ?? [])];
  if (vary.length > 0) res.setHeader('Vary', vary.join(', '));
  if (notModified) {
    res.status(304).end();
    return;
  }
  res.setHeader('Content-Type', obj.contentType);
  const range = rangeOf(req, obj.size, etag, lastModified);
  if (range === 'unsatisfiable') {
    res.setHeader('Content-Range', `bytes */${obj.size}`);
    res.status(416).end();
    return;
  }
  const length = range ? range.end - range.start + 1 : obj.size;
  res.setHeader('Content-Length', String(length));
  if (range) {
    res.status(206);
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${obj.size}`);
  }
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  try {
    // Small derivatives come from (and go to) memory; anything else is streamed from storage.
    const whole = range ? null : await deps.derivatives.bytes(obj);
    if (whole) {
      res.end(whole);
      deps.bandwidth.add(options.ownerId, length);
      countBytesServed(res, length);
      deps.hits.record(req, res, obj.key, options.ownerId, routeLabel(req, res));
      return;
    }
    const stream = await deps.storage.get(key, range ?? undefined);
    // A client that hangs up is not an error; bandwidth and /metrics count bodies sent in full.
    const sent = await pipeline(stream, res).then(
      () => true,
      () => false,
    );
    if (sent) {
      deps.bandwidth.add(options.ownerId, length);
      countBytesServed(res, length);
    }
  } catch (err) {
    if (!(err instanceof StorageNotFoundError)) throw err;
    // Known object (see DerivativeCache) deleted meanwhile: the same 404 as a fresh stat gives.
    deps.derivatives.forget(key);
    for (const h of ['ETag', 'Cache-Control', 'Last-Modified', 'Accept-Ranges', 'Vary', 'Content-Type', 'Content-Length', 'Content-Range']) res.removeHeader(h);
    res.status(200);
    throw new ServiceError('not_found', 'Image not found');
  }
}
