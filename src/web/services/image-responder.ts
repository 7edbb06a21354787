// Sends stored image bytes with validators and caching headers, and counts them as the owner's
// bandwidth (only bytes actually sent: 304s and HEADs count nothing).
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { addMonthlyUsage } from '../../catalog/usage.js';
import { ServiceError } from '../../errors.js';
import { StorageNotFoundError, type StoredObject } from '../../storage/storage.js';
import { countBytesServed } from '../monitoring/metrics.js';
import type { WebDeps } from '../web-deps.js';
import { forgetDerivative } from './transform-service.js';

export interface SendOptions {
  ownerId: string;
  cacheControl: string;
  varyAccept?: boolean;
  /** Known object (skips a stat). */
  object?: StoredObject;
}

/**
 * Bandwidth counting, coalesced per owner: a response still waits until a catalog write that
 * includes its bytes has completed (as with one write per response), but while one write for an
 * owner is in flight the bytes of further responses are summed and sent as the next single $inc.
 * Under load this turns N catalog writes into about two; alone, a response costs one write as before.
 */
class BandwidthCounter {
  private readonly inFlight = new Set<string>();
  private readonly pending = new Map<string, { bytes: number; waiters: { resolve: () => void; reject: (err: unknown) => void }[] }>();

  constructor(private readonly deps: WebDeps) {}

  add(ownerId: string, bytes: number): Promise<void> {
    if (!this.inFlight.has(ownerId)) return this.write(ownerId, bytes);
    return new Promise((resolve, reject) => {
      const batch = this.pending.get(ownerId) ?? { bytes: 0, waiters: [] };
      batch.bytes += bytes;
      batch.waiters.push({ resolve, reject });
      this.pending.set(ownerId, batch);
    });
  }

  private async write(ownerId: string, bytes: number): Promise<void> {
    this.inFlight.add(ownerId);
    try {
      await addMonthlyUsage(this.deps.catalog, ownerId, { bandwidthBytes: bytes });
    } finally {
      this.inFlight.delete(ownerId);
      const next = this.pending.get(ownerId);
      if (next) {
        this.pending.delete(ownerId);
        this.write(ownerId, next.bytes).then(
          () => next.waiters.forEach((w) => w.resolve()),
          (err: unknown) => next.waiters.forEach((w) => w.reject(err)),
        );
      }
    }
  }
}

const counters = new WeakMap<WebDeps, BandwidthCounter>();

function bandwidthCounter(deps: WebDeps): BandwidthCounter {
  let counter = counters.get(deps);
  if (!counter) {
    counter = new BandwidthCounter(deps);
    counters.set(deps, counter);
  }
  return counter;
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
  // Open the bytes and count them at the same time (two independent round trips).
  const [opened, counted] = await Promise.allSettled([deps.storage.get(key, range ?? undefined), bandwidthCounter(deps).add(options.ownerId, length)]);
  if (opened.status === 'rejected') {
    const err: unknown = opened.reason;
    if (!(err instanceof StorageNotFoundError)) throw err;
    // Known object (see statDerivative) deleted meanwhile: the same 404 as a fresh stat gives.
    forgetDerivative(key);
    for (const h of ['ETag', 'Cache-Control', 'Last-Modified', 'Accept-Ranges', 'Vary', 'Content-Type', 'Content-Length', 'Content-Range']) res.removeHeader(h);
    res.status(200);
    throw new ServiceError('not_found', 'Image not found');
  }
  const stream = opened.value;
  if (counted.status === 'rejected') {
    stream.destroy();
    throw counted.reason;
  }
  // A client that hangs up is not an error; /metrics counts bodies sent in full.
  const sent = await pipeline(stream, res).then(
    () => true,
    () => false,
  );
  if (sent) countBytesServed(res, length);
}
