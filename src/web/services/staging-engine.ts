// Pictor's multer storage engine: stages the one uploaded file in the Storage interface (local
// or GCS alike). The type is sniffed from the first bytes, the SHA-256 computed as the bytes
// arrive (the worker's checksum and the staging etag), small files are staged from memory with
// one request (which the storage client retries as a whole) and larger ones streamed, so memory
// per upload stays bounded by BUFFERED_UPLOAD_BYTES. Any refusal removes what was staged before
// calling back, so the answer never leaves bytes behind.
import { createHash, randomUUID } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import type { Request } from 'express';
import type multer from 'multer';
import { ServiceError } from '../../errors.js';
import type { Storage } from '../../storage/storage.js';
import { SNIFF_BYTES, sniffImageType } from './sniff-image.js';

/**
 * Uploads up to this size are staged from memory with one request; larger ones are streamed.
 * Bounds memory per upload to this much.
 */
export const BUFFERED_UPLOAD_BYTES = 1024 * 1024;

/** What the engine adds to multer's `req.file`. */
export interface StagedFile {
  uploadId: string;
  stagingKey: string;
  size: number;
  sha256: string;
  detectedMime: string;
}

export interface StagingOptions {
  maxBytes: number;
  /** Flush to disk before answering (an async 202 is acknowledged before the worker's write). */
  durable: boolean;
  /** Called with the engine's own refusal as soon as it is decided (the answer need not wait for the body). */
  onRefusal: (err: ServiceError) => void;
}

export function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${Math.round(n / 1024)} kB`;
}

export const tooLarge = (maxBytes: number) => new ServiceError('too_large', `File too large: the maximum upload size is ${formatBytes(maxBytes)}`);

export class StagingEngine implements multer.StorageEngine {
  constructor(
    private readonly storage: Storage,
    private readonly options: StagingOptions,
  ) {}

  _handleFile(_req: Request, file: Express.Multer.File, callback: (error?: unknown, info?: Partial<Express.Multer.File>) => void): void {
    this.stage(file.stream).then(
      (staged) => callback(null, staged as unknown as Partial<Express.Multer.File>),
      (err: unknown) => {
        if (err instanceof ServiceError && err.status < 500) this.options.onRefusal(err);
        callback(err);
      },
    );
  }

  _removeFile(_req: Request, file: Express.Multer.File, callback: (error: Error | null) => void): void {
    const key = (file as unknown as Partial<StagedFile>).stagingKey;
    if (!key) return callback(null);
    this.storage.delete(key).then(
      () => callback(null),
      (err: Error) => callback(err),
    );
  }

  private async stage(source: Readable): Promise<StagedFile> {
    const { maxBytes } = this.options;
    const putOptions = { contentType: 'application/octet-stream', durable: this.options.durable };
    const uploadId = randomUUID();
    const stagingKey = `_staging/${uploadId}`;
    const hash = createHash('sha256');
    let held: Buffer[] = [];
    let size = 0;
    let detectedMime = '';
    let out: PassThrough | null = null;
    let put: Promise<unknown> | null = null;
    let staging = false;
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) throw tooLarge(maxBytes);
        hash.update(chunk);
        if (out) {
          if (!out.write(chunk)) await drainedOrClosed(out);
          if (out.destroyed) {
            await put; // the storage gave up on the stream: its put() rejects with the reason
            throw new Error('storage stopped reading the staged upload');
          }
          continue;
        }
        held.push(chunk);
        if (!detectedMime && size >= SNIFF_BYTES) detectedMime = await sniffImageType(Buffer.concat(held));
        if (detectedMime && size > BUFFERED_UPLOAD_BYTES) {
          out = new PassThrough();
          // put() reports a failure itself; an 'error' on the stream must not become uncaught.
          out.on('error', () => undefined);
          staging = true;
          put = this.storage.put(stagingKey, out, putOptions);
          put.catch(() => undefined);
          out.write(Buffer.concat(held));
          held = [];
        }
      }
      // busboy cut the file at the limit (multer's own LIMIT_FILE_SIZE follows).
      if ((source as { truncated?: boolean }).truncated) throw tooLarge(maxBytes);
      if (size === 0) throw new ServiceError('bad_request', 'No file provided: the "file" field is empty');
      if (!detectedMime) detectedMime = await sniffImageType(Buffer.concat(held));
      const sha256 = hash.digest('hex');
      if (out) {
        out.end();
        await put;
      } else {
        staging = true;
        await this.storage.put(stagingKey, Buffer.concat(held), { ...putOptions, sha256 });
      }
      return { uploadId, stagingKey, size, sha256, detectedMime };
    } catch (err) {
      source.resume(); // whatever busboy still holds of this part is dropped, not kept
      if (out && !out.destroyed) out.destroy(err instanceof Error ? err : new Error(String(err)));
      await put?.catch(() => undefined);
      // A refusal is removed before the answer; after a storage failure the answer (503) does not
      // also wait for a delete retried against the same failing storage.
      const removal = staging ? this.storage.delete(stagingKey).catch(() => undefined) : null;
      if (removal && err instanceof ServiceError) await removal;
      throw err;
    }
  }
}

/** Resolves when the stream wants more data, or when it is gone (the reader failed). */
function drainedOrClosed(out: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}
