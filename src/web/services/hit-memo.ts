// What the front door answered to a request shape that ended as a derivative sent whole from
// memory, so the same request can be answered again before the Express stack runs (see
// src/web/hit-path.ts). An entry keeps the response's headers, the derivative's key and owner,
// and the conditions the general path relied on (the image document and the credential it found
// in the front door's caches, a signed URL's expiry): the entry answers only while each of them
// still holds, so its answer is the one the general path would give, no staler than its caches.
//
// Routes opt in per request (expectHit) and declare what they relied on (dependOn, evaluated only
// when the answer is kept); a request whose route did not opt in, or relied on something that
// cannot be re-checked (a cache that is off), is not kept.
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Response } from 'express';
import { LRUCache } from 'lru-cache';
import { loggedUrl } from '../middleware/request-context.js';

/** Re-checks, in one map read, that something a recorded answer relied on is unchanged. */
export type Hold = () => boolean;
/** Makes the Hold when the answer is recorded (most answers never are); null: it cannot be re-checked. */
export type HoldSource = () => Hold | null;

export interface MemoEntry {
  /** Derivative key: the bytes come from the derivative memory cache (DerivativeCache.hot). */
  objectKey: string;
  ownerId: string;
  /**
   * Every header of the 200 except Date (added by node), as `writeHead`'s flat list of names and
   * values; it ends with X-Request-Id, whose value slot the hit path fills in for each request.
   */
  head: string[];
  /** The request URL as the access log line carries it (request-context.ts, loggedUrl). */
  loggedUrl: string;
  /** The answer said X-Cache: HIT (the derivative cache's hit metric). */
  cacheHit: boolean;
  /** The metrics' route label of the general path. */
  route: string;
  holds: Hold[];
  /** Epoch ms after which the answer must be recomputed (a signed URL's exp); Infinity if none. */
  validUntil: number;
}

/** Per-request notes of the general path (kept on the response). */
interface MemoNotes {
  /** The route opted in (expectHit). */
  expected: boolean;
  holds: HoldSource[];
  validUntil: number;
}

const NOTES = Symbol('pictor.hitMemoNotes');
/** Notes live on the Express response's locals (a plain object), not on node's response. */
export type Noted = Pick<Response, 'locals'>;
const MAX_ENTRIES = 10_000;
/** Request headers the answer of a memoised route may depend on (negotiation, client hints, key). */
const KEY_HEADERS = ['accept', 'x-api-key', 'sec-ch-width', 'width', 'sec-ch-dpr', 'dpr'] as const;

/** The request shape an entry answers: the URL and every header the answer may depend on. */
export function memoKey(req: IncomingMessage): string {
  let key = req.url ?? '';
  for (const name of KEY_HEADERS) {
    const v = req.headers[name];
    key += '\n' + (v === undefined ? '' : String(v));
  }
  return key;
}

function notesOf(res: Noted): MemoNotes {
  const locals = res.locals as Record<symbol, MemoNotes | undefined>;
  return (locals[NOTES] ??= { expected: false, holds: [], validUntil: Infinity });
}

/** The route's answer may be kept (when everything it relied on can be re-checked). */
export function expectHit(res: Noted): void {
  notesOf(res).expected = true;
}

/** Something the answer relied on, as the source of its Hold. */
export function dependOn(res: Noted, hold: HoldSource): void {
  notesOf(res).holds.push(hold);
}

/** The answer is valid until `epochMs` at most (a signed URL's expiry). */
export function validUntil(res: Noted, epochMs: number): void {
  const notes = notesOf(res);
  notes.validUntil = Math.min(notes.validUntil, epochMs);
}

export class HitMemo {
  private readonly entries = new LRUCache<string, MemoEntry>({ max: MAX_ENTRIES });

  /** Keeps the answer just sent, when its route opted in and everything it relied on can be re-checked. */
  record(req: IncomingMessage, res: { getHeaders(): OutgoingHttpHeaders } & Noted, objectKey: string, ownerId: string, route: string): void {
    const notes = (res.locals as Record<symbol, MemoNotes | undefined>)[NOTES];
    if (!notes?.expected || req.method !== 'GET') return;
    const headers = res.getHeaders();
    // A miss's answer differs from the hits after it (X-Cache, a consumed rate limit's headers).
    if (headers['x-cache'] === 'MISS') return;
    const holds: Hold[] = [];
    for (const source of notes.holds) {
      const hold = source();
      if (!hold) return;
      holds.push(hold);
    }
    const head: string[] = [];
    for (const [name, value] of Object.entries(headers)) {
      if (name === 'x-request-id' || value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) head.push(name, v);
      else head.push(name, String(value));
    }
    head.push('x-request-id', '');
    this.entries.set(memoKey(req), { objectKey, ownerId, head, loggedUrl: loggedUrl(req.url ?? '/'), cacheHit: headers['x-cache'] === 'HIT', route, holds, validUntil: notes.validUntil });
  }

  /** The entry for this request when everything it relied on still holds. */
  lookup(req: IncomingMessage, now = Date.now()): MemoEntry | null {
    const key = memoKey(req);
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (now >= entry.validUntil || !entry.holds.every((hold) => hold())) {
      this.entries.delete(key);
      return null;
    }
    return entry;
  }

  /** Drops the entry of a request (its derivative's bytes turned out to be gone from memory). */
  forget(req: IncomingMessage): void {
    this.entries.delete(memoKey(req));
  }

  get size(): number {
    return this.entries.size;
  }
}
