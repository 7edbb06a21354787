// Storage on Google Cloud Storage through the official client (@google-cloud/storage v7).
// Errors are translated at this boundary: 404 → StorageNotFoundError, 416 → StorageRangeError,
// 408/429/5xx, connection failures and timeouts → StorageUnavailableError (retry later).
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Storage as GcsClient, IdempotencyStrategy, type Bucket, type FileMetadata, type StorageOptions } from '@google-cloud/storage';
import {
  assertSafeKey,
  assertSafePrefix,
  assertValidRange,
  joinPublicUrl,
  StorageNotFoundError,
  StorageRangeError,
  StorageUnavailableError,
  type ByteRange,
  type ListOptions,
  type ListPage,
  type PutOptions,
  type Storage,
  type StoredObject,
} from './storage.js';

export interface GcsStorageOptions {
  bucket: string;
  /** e.g. a local fake or emulator; requests to it are sent without Google credentials. */
  apiEndpoint?: string;
  projectId?: string;
  publicBaseUrl: string;
  /**
   * Client-side retries (exponential backoff, at most 60 s in all) of any request failing with
   * 408/429/5xx or a reset connection; 0 disables. After that, StorageUnavailableError.
   */
  maxRetries?: number;
  /**
   * Stream puts are sent in resumable-session chunks of this size (multiple of 256 KiB; default
   * 8 MiB). The client keeps the current chunk in memory so a failed chunk is resent, not the object.
   */
  uploadChunkBytes?: number;
  /** Per-request timeout of JSON API calls in ms (the client's default is 60 s). */
  requestTimeoutMs?: number;
}

const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
const DEFAULT_LIST_LIMIT = 1000;
const DEFAULT_UPLOAD_CHUNK_BYTES = 8 * 1024 * 1024;
const UPLOAD_CHUNK_GRANULARITY = 256 * 1024;
const MAX_LIST_LIMIT = 1000;
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  // The client's own checksum check of a download failed: corrupted in transit, worth a retry.
  'CONTENT_DOWNLOAD_MISMATCH',
]);

export class GcsStorage implements Storage {
  readonly driver = 'gcs';
  private readonly client: GcsClient;
  private readonly bucket: Bucket;
  private readonly publicBaseUrl: string;
  private readonly uploadChunkBytes: number;

  constructor(options: GcsStorageOptions) {
    const maxRetries = options.maxRetries ?? 3;
    this.uploadChunkBytes = options.uploadChunkBytes ?? DEFAULT_UPLOAD_CHUNK_BYTES;
    if (!(this.uploadChunkBytes > 0) || this.uploadChunkBytes % UPLOAD_CHUNK_GRANULARITY !== 0) {
      throw new RangeError(`uploadChunkBytes must be a positive multiple of ${UPLOAD_CHUNK_GRANULARITY}`);
    }
    const clientOptions: StorageOptions = {
      retryOptions: {
        // The client reads maxRetries: 0 as "use the default (3)", so "no retries" is autoRetry: false.
        autoRetry: maxRetries > 0,
        maxRetries: Math.max(1, maxRetries),
        maxRetryDelay: 8,
        totalTimeout: 60,
        // RetryAlways, deliberately. (1) A put replaces the whole object under its key and a delete
        // removes it, so repeating either converges to the same state (last writer wins, as it
        // would without retries); a retried delete can report false. (2) With the default
        // RetryConditional, v7 turns retries off by setting `autoRetry = false` on the client's
        // SHARED retryOptions for each upload or delete without preconditions, and after a simple
        // upload never turns them back on (seen in 7.22): every later read would lose its retries.
        idempotencyStrategy: IdempotencyStrategy.RetryAlways,
      },
      ...(options.requestTimeoutMs !== undefined ? { timeout: options.requestTimeoutMs } : {}),
    };
    if (options.apiEndpoint && !isGoogleHost(options.apiEndpoint)) {
      // With an apiEndpoint outside *.googleapis.com the v7 client skips google-auth-library for
      // JSON calls and uses plain gaxios for resumable uploads unless useAuthWithCustomEndpoint is
      // true; we pin it to false. A fixed projectId rules out project-id discovery (which could ask
      // the metadata server). Net effect: no credential lookup, no network besides apiEndpoint.
      Object.assign(clientOptions, {
        apiEndpoint: options.apiEndpoint,
        projectId: options.projectId ?? 'pictor-local',
        useAuthWithCustomEndpoint: false,
      });
    } else if (options.apiEndpoint) {
      // A Google endpoint (regional, private service connect): keep normal credentials.
      Object.assign(clientOptions, {
        apiEndpoint: options.apiEndpoint,
        useAuthWithCustomEndpoint: true,
        ...(options.projectId ? { projectId: options.projectId } : {}),
      });
    } else if (options.projectId) {
      clientOptions.projectId = options.projectId;
    }
    this.client = new GcsClient(clientOptions);
    this.bucket = this.client.bucket(options.bucket);
    this.publicBaseUrl = options.publicBaseUrl.replace(/\/+$/, '');
  }

  async put(key: string, body: Buffer | Readable, options: PutOptions = {}): Promise<StoredObject> {
    assertSafeKey(key);
    const file = this.bucket.file(key);
    const metadata: FileMetadata = {
      contentType: options.contentType ?? DEFAULT_CONTENT_TYPE,
      metadata: { ...(options.metadata ?? {}) },
      ...(options.cacheControl !== undefined ? { cacheControl: options.cacheControl } : {}),
    };
    try {
      if (Buffer.isBuffer(body)) {
        // Buffers (derivatives, small files): one multipart request, no session round trip.
        await file.save(body, { resumable: false, metadata });
      } else {
        // Streams (uploaded originals: size unknown, possibly large): a resumable session sent in
        // chunks, so a failure resends one chunk instead of the object and memory stays bounded by
        // one chunk. (Without chunkSize the v7 client cannot resume a stream once more than one
        // buffer has gone out; it gives up with a RangeError.)
        const source = await withoutEmptyStream(body);
        if (source === 'empty') await file.save(Buffer.alloc(0), { resumable: false, metadata });
        else await pipeline(source, file.createWriteStream({ resumable: true, chunkSize: this.uploadChunkBytes, metadata }));
      }
    } catch (err) {
      throw this.translateError(err, key, { notFoundMeansBucket: true });
    }
    return toStoredObject(key, file.metadata);
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    assertSafeKey(key);
    if (range) assertValidRange(key, range);
    const source = this.bucket.file(key).createReadStream(range ? { start: range.start, end: range.end } : {});
    const output = new PassThrough();
    // The client only sends the request once the stream is read, and reports a missing object as a
    // stream error; wait for the response status so a missing key rejects here, as the contract says.
    return new Promise<Readable>((resolve, reject) => {
      let settled = false;
      source.on('response', (response: { statusCode?: number }) => {
        const status = response.statusCode ?? 0;
        if (!settled && status >= 200 && status < 300) {
          settled = true;
          resolve(output);
        }
      });
      source.on('error', (err) => {
        const translated = this.translateError(err, key, { range });
        if (!settled) {
          settled = true;
          output.destroy();
          reject(translated);
        } else {
          output.destroy(translated as Error);
        }
      });
      source.on('end', () => {
        // An empty object may end before any consumer; treat the end as success too.
        if (!settled) {
          settled = true;
          resolve(output);
        }
      });
      output.on('close', () => {
        if (!source.destroyed) source.destroy();
      });
      source.pipe(output);
    });
  }

  async read(key: string): Promise<Buffer> {
    assertSafeKey(key);
    try {
      const [contents] = await this.bucket.file(key).download();
      return contents;
    } catch (err) {
      throw this.translateError(err, key);
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    assertSafeKey(key);
    try {
      const [metadata] = await this.bucket.file(key).getMetadata();
      return toStoredObject(key, metadata);
    } catch (err) {
      if (httpStatusOf(err) === 404) return null;
      throw this.translateError(err, key);
    }
  }

  async delete(key: string): Promise<boolean> {
    assertSafeKey(key);
    try {
      await this.bucket.file(key).delete();
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 404) return false;
      throw this.translateError(err, key);
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    assertSafePrefix(prefix);
    const limit = clampLimit(options.limit);
    try {
      const [files, nextQuery] = await this.bucket.getFiles({
        ...(prefix ? { prefix } : {}),
        maxResults: limit,
        ...(options.cursor ? { pageToken: options.cursor } : {}),
        autoPaginate: false,
      });
      const pageToken = (nextQuery as { pageToken?: string } | null | undefined)?.pageToken;
      return {
        items: files.map((file) => toStoredObject(file.name, file.metadata)),
        // GCS may hand out a token whose next page is empty; callers simply stop at null.
        nextCursor: pageToken ?? null,
      };
    } catch (err) {
      throw this.translateError(err, prefix, { notFoundMeansBucket: true });
    }
  }

  publicUrl(key: string): string {
    assertSafeKey(key);
    return joinPublicUrl(this.publicBaseUrl, key);
  }

  async check(): Promise<void> {
    let exists: boolean;
    try {
      [exists] = await this.bucket.exists();
    } catch (err) {
      const translated = this.translateError(err, '');
      if (translated instanceof StorageUnavailableError) throw translated;
      throw new StorageUnavailableError(`GCS check of bucket "${this.bucket.name}" failed: ${(err as Error).message}`, { cause: err });
    }
    if (!exists) throw new StorageUnavailableError(`GCS bucket "${this.bucket.name}" does not exist`);
  }

  // -------------------------------------------------------------------------------------------

  private translateError(err: unknown, key: string, context: { range?: ByteRange; notFoundMeansBucket?: boolean } = {}): unknown {
    const status = httpStatusOf(err);
    const message = err instanceof Error ? err.message : String(err);
    if (status === 404) {
      // Uploads and lists only 404 when the bucket itself is missing: a configuration error, not a missing key.
      if (context.notFoundMeansBucket) return new Error(`GCS bucket "${this.bucket.name}" not found`, { cause: err });
      return new StorageNotFoundError(key);
    }
    if (status === 416 && context.range) return new StorageRangeError(key, context.range);
    if (status !== undefined && (status >= 500 || status === 408 || status === 429)) {
      return new StorageUnavailableError(`GCS answered ${status} for "${key}": ${message}`, { cause: err });
    }
    if (isTransientFailure(err)) return new StorageUnavailableError(`GCS unreachable for "${key}": ${message}`, { cause: err });
    return err;
  }
}

function isGoogleHost(endpoint: string): boolean {
  try {
    return /(^|\.)googleapis\.com$/i.test(new URL(endpoint).hostname);
  } catch {
    return false;
  }
}

/**
 * Peeks at the first chunk: the v7 client sends an empty stream as `Content-Range: bytes 0--1/0`,
 * which is not a valid range, so empty streams are uploaded as an empty buffer instead.
 */
async function withoutEmptyStream(body: Readable): Promise<Readable | 'empty'> {
  const iterator = body[Symbol.asyncIterator]() as AsyncIterator<unknown>;
  const first = await iterator.next();
  if (first.done) return 'empty';
  return Readable.from(
    (async function* () {
      try {
        yield first.value;
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
      } finally {
        await iterator.return?.(); // destroys `body` when the upload stops early
      }
    })(),
    { objectMode: false },
  );
}

function toStoredObject(key: string, metadata: FileMetadata): StoredObject {
  const custom: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata.metadata ?? {})) {
    if (value !== null && value !== undefined) custom[name] = String(value);
  }
  return {
    key,
    size: Number(metadata.size ?? 0),
    contentType: metadata.contentType ?? DEFAULT_CONTENT_TYPE,
    // GCS's own MD5 in hex (the local driver uses SHA-256: an etag only compares within one backend).
    // Composite objects have no md5; their generation changes with every write instead.
    etag: metadata.md5Hash ? Buffer.from(metadata.md5Hash, 'base64').toString('hex') : String(metadata.generation ?? metadata.etag ?? ''),
    updatedAt: new Date(metadata.updated ?? metadata.timeCreated ?? Date.now()),
    metadata: custom,
    ...(metadata.cacheControl !== undefined ? { cacheControl: metadata.cacheControl } : {}),
  };
}

/** The HTTP status in the several error shapes the client produces (ApiError, GaxiosError, upload errors). */
function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; status?: unknown; response?: { status?: unknown; statusCode?: unknown } };
  for (const candidate of [e.code, e.status, e.response?.status, e.response?.statusCode]) {
    const value = typeof candidate === 'string' && /^\d{3}$/.test(candidate) ? Number(candidate) : candidate;
    if (typeof value === 'number' && value >= 100 && value < 600) return value;
  }
  return undefined;
}

/** Network errors, timeouts, and the client's own "gave up" errors of resumable uploads. */
function isTransientFailure(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const e = err as { code?: unknown; name?: unknown; type?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && NETWORK_ERROR_CODES.has(e.code.toUpperCase())) return true;
  if (e.name === 'AbortError' || e.name === 'TimeoutError' || e.type === 'request-timeout' || e.type === 'body-timeout') return true;
  // Resumable uploads report exhausted retries (e.g. after a 503) as a plain Error with this text,
  // and a server that lost bytes the client no longer holds as a RangeError.
  if (typeof e.message === 'string' && /^(Retry (limit|total time limit) exceeded|The offset is lower than the number of bytes written)/.test(e.message)) {
    return true;
  }
  if (isTransientFailure(e.cause, depth + 1)) return true;
  return Array.isArray(e.errors) && e.errors.some((inner) => isTransientFailure(inner, depth + 1));
}

function clampLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`list limit must be a positive integer, got ${limit}`);
  return Math.min(limit, MAX_LIST_LIMIT);
}
