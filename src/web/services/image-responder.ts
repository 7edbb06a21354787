// Sends stored image bytes with validators and caching headers, and counts them as the owner's
// bandwidth (only bodies sent: 304s and HEADs count nothing; see BandwidthCounter).
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { ServiceError } from '../../errors.js';
import { StorageNotFoundError, type StoredObject } from '../../storage/storage.js';
import { countBytesServed } from '../monitoring/metrics.js';
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

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const v = t.trim().replace(/^W\//, '');
    return v === '*' || v === etag;
  });
}

function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | 'invalid' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null; // multi-range or malformed: send everything
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) return 'invalid';
  return { start, end };
}

export async function sendStoredImage(deps: WebDeps, req: Request, res: Response, key: string, options: SendOptions): Promise<void> {
  const obj = options.object ?? (await deps.storage.stat(key));
  if (!obj) throw new ServiceError('not_found', 'Image not found');
  const etag = etagOf(obj);
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', options.cacheControl);
  res.setHeader('Last-Modified', obj.updatedAt.toUTCString());
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  const vary = [...(options.varyAccept ? ['Accept'] : []), ...(options.vary ?? [])];
  if (vary.length > 0) res.setHeader('Vary', vary.join(', '));
  if (matches(req.headers['if-none-match'], etag)) {
    res.status(304).end();
    return;
  }
  res.setHeader('Content-Type', obj.contentType);
  const range = parseRange(req.headers.range, obj.size);
  if (range === 'invalid') {
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
