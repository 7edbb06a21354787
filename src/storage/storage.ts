// The one storage interface every backend implements (ipx-style: small, driver-agnostic).
import type { Readable } from 'node:stream';

export interface StoredObject {
  key: string;
  size: number;
  contentType: string;
  /** Opaque validator that changes whenever the bytes change. */
  etag: string;
  updatedAt: Date;
  metadata: Record<string, string>;
  /** Cache-Control stored with the object, when one was given at put time. */
  cacheControl?: string;
}

export interface PutOptions {
  contentType?: string;
  metadata?: Record<string, string>;
  /** Cache-Control to store with the object (GCS serves it to browsers). */
  cacheControl?: string;
  /**
   * false: the object can be re-created (a derivative), so the driver may skip making its name
   * durable before it becomes visible: a power cut may lose it (it is rendered again on demand),
   * but never leaves it torn or empty under its name.
   */
  durable?: boolean;
  /**
   * SHA-256 (hex) of a Buffer body, when the caller computed it anyway: the local driver takes
   * its etag from it instead of hashing the bytes again. (GCS computes its own.)
   */
  sha256?: string;
}

/** Inclusive byte range, as in HTTP `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end?: number;
}

export interface ListOptions {
  limit?: number;
  /** Opaque cursor returned by a previous page. */
  cursor?: string;
}

export interface ListPage {
  items: StoredObject[];
  nextCursor: string | null;
}

export interface Storage {
  readonly driver: string;
  put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<StoredObject>;
  /** Streams the object's bytes; rejects with StorageNotFoundError when absent. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Whole object as a buffer (convenience for workers). */
  read(key: string): Promise<Buffer>;
  stat(key: string): Promise<StoredObject | null>;
  /** Returns true when something was deleted; deleting a missing key is not an error. */
  delete(key: string): Promise<boolean>;
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  /** Absolute public URL of a key under CDN_URL. */
  publicUrl(key: string): string;
  /** Throws when the backend is unreachable (health check). */
  check(): Promise<void>;
}

export class StorageNotFoundError extends Error {
  readonly code = 'STORAGE_NOT_FOUND';
  constructor(readonly key: string) {
    super(`Object not found: ${key}`);
  }
}

/** storage.read, with a missing object as null (other failures still reject). */
export async function readIfPresent(storage: Pick<Storage, 'read'>, key: string): Promise<Buffer | null> {
  try {
    return await storage.read(key);
  } catch (err) {
    if (err instanceof StorageNotFoundError) return null;
    throw err;
  }
}

export class InvalidStorageKeyError extends Error {
  readonly code = 'INVALID_STORAGE_KEY';
  constructor(readonly key: string, reason: string) {
    super(`Invalid storage key "${key}": ${reason}`);
  }
}

/** A byte range that does not fit the object (start past the end, or end before start): HTTP 416. */
export class StorageRangeError extends RangeError {
  readonly code = 'STORAGE_RANGE_NOT_SATISFIABLE';
  constructor(readonly key: string, readonly range: ByteRange, readonly size?: number) {
    super(`Range ${range.start}-${range.end ?? ''} not satisfiable for ${key}${size === undefined ? '' : ` (${size} bytes)`}`);
  }
}

/** Marks failures worth retrying (network, 5xx, timeouts) so job processors can back off. */
export class StorageUnavailableError extends Error {
  readonly code: string = 'STORAGE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No space left for the write (ENOSPC, EDQUOT): retrying at once cannot help. */
export class StorageFullError extends StorageUnavailableError {
  override readonly code = 'STORAGE_FULL';
}

/**
 * Keys are relative, '/'-separated, and can never name anything outside the store:
 * no empty, '.' or '..' segments, no backslashes, control characters or leading slash.
 */
export function assertSafeKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidStorageKeyError(String(key), 'empty');
  if (key.length > 1024) throw new InvalidStorageKeyError(key.slice(0, 40) + '…', 'longer than 1024 characters');
  if (key.startsWith('/')) throw new InvalidStorageKeyError(key, 'absolute');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(key)) throw new InvalidStorageKeyError(key, 'control character or backslash');
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') throw new InvalidStorageKeyError(key, `bad segment "${segment}"`);
  }
}

/**
 * List prefixes are free-form ('' lists everything, 'a/b' matches 'a/b/c' and 'a/bc'), but the
 * part up to the last '/' must be a safe key so a prefix can never walk out of the store.
 */
export function assertSafePrefix(prefix: string): void {
  if (typeof prefix !== 'string') throw new InvalidStorageKeyError(String(prefix), 'prefix must be a string');
  if (prefix === '') return;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(prefix)) throw new InvalidStorageKeyError(prefix, 'control character or backslash');
  const lastSlash = prefix.lastIndexOf('/');
  if (lastSlash >= 0) assertSafeKey(prefix.slice(0, lastSlash));
}

/** Validates a byte range's shape (integers, start >= 0, end >= start); fit to the object is checked by drivers. */
export function assertValidRange(key: string, range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || start < 0 || (end !== undefined && (!Number.isSafeInteger(end) || end < start))) {
    throw new StorageRangeError(key, range);
  }
}

/** Joins CDN_URL and a key, escaping each segment but keeping '/' (and '&', '=' used by derivatives). */
export function joinPublicUrl(cdnUrl: string, key: string): string {
  const encoded = key
    .split('/')
    .map((s) => encodeURIComponent(s).replace(/%26/g, '&').replace(/%3D/g, '='))
    .join('/');
  return `${cdnUrl}/${encoded}`;
}
