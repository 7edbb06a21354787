// Sends stored image bytes with validators and caching headers, and counts them as the owner's
// bandwidth (only bytes actually sent: 304s and HEADs count nothing).
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { addMonthlyUsage } from '../../catalog/usage.js';
import { ServiceError } from '../../errors.js';
import type { StoredObject } from '../../storage/storage.js';
import type { WebDeps } from '../web-deps.js';

export interface SendOptions {
  ownerId: string;
  cacheControl: string;
  varyAccept?: boolean;
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
  if (options.varyAccept) res.setHeader('Vary', 'Accept');
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
  const stream = await deps.storage.get(key, range ?? undefined);
  await addMonthlyUsage(deps.catalog, options.ownerId, { bandwidthBytes: length });
  await pipeline(stream, res).catch(() => undefined); // a client that hangs up is not an error
}
