// Receives a multipart upload into staging storage: the type is sniffed from the first bytes, the
// size is counted while streaming, and the excess over the limit is never buffered. Small files
// are staged with one request from memory, larger ones streamed (see BUFFERED_UPLOAD_BYTES).
import busboy from 'busboy';
import { createHash, randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Request } from 'express';
import { ServiceError } from '../../errors.js';
import type { Storage } from '../../storage/storage.js';
import { SNIFF_BYTES, sniffImageType } from './sniff-image.js';

export interface ReceivedUpload {
  uploadId: string;
  stagingKey: string;
  size: number;
  /** SHA-256 (hex) of the file, hashed as it arrived: the worker's checksum and the staging etag. */
  sha256: string;
  filename: string;
  detectedMime: string;
  fields: Record<string, string>;
}

const MAX_FIELD_BYTES = 2048;
/**
 * Uploads up to this size are staged from memory with one request (which the storage client
 * retries as a whole); larger ones are streamed. Bounds memory per upload to this much.
 */
export const BUFFERED_UPLOAD_BYTES = 1024 * 1024;

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

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${Math.round(n / 1024)} kB`;
}

export interface ReceiveOptions {
  maxBytes: number;
  /**
   * Flush the staged bytes to disk before answering. Needed when the answer is "accepted" (202)
   * before the worker has stored the original; a synchronous upload is answered only after the
   * worker's durable write, so a power cut before that loses nothing anyone was told was kept,
   * and a staged file deleted within milliseconds need never reach the disk.
   */
  durable: boolean;
}

export async function receiveUpload(req: Request, storage: Storage, options: ReceiveOptions): Promise<ReceivedUpload> {
  const { maxBytes } = options;
  const putOptions = { contentType: 'application/octet-stream', durable: options.durable };
  const type = req.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('multipart/form-data')) {
    throw new ServiceError('bad_request', 'No file provided: send multipart/form-data with a "file" field');
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024) {
    throw new ServiceError('too_large', `File too large: the maximum upload size is ${formatBytes(maxBytes)}`);
  }
  const uploadId = randomUUID();
  const stagingKey = `_staging/${uploadId}`;
  let parser: busboy.Busboy;
  try {
    // defParamCharset: browsers and fetch send the file name as raw UTF-8 (busboy assumes latin1).
    parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 1, fileSize: maxBytes, fields: 20, fieldSize: MAX_FIELD_BYTES, parts: 25 } });
  } catch {
    throw new ServiceError('bad_request', 'Malformed multipart body');
  }
  const fields: Record<string, string> = {};
  let stored: Promise<void> | null = null;
  /** Set once the file handler has removed (or is removing) the staged object after a failure. */
  let cleanedUp = false;
  let storageFailed = false;
  let filename = '';
  let size = 0;
  const hash = createHash('sha256');
  let sha256 = '';
  let detectedMime = '';
  let failure: ServiceError | null = null;

  const done = new Promise<void>((resolve, reject) => {
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) failure ??= new ServiceError('bad_request', `Form field "${name}" is too long`);
      else fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || stored) {
        stream.resume();
        return;
      }
      filename = info.filename ?? '';
      // Bytes not yet handed to storage. Small uploads (most images) are stored from memory in
      // one request, which the storage client can simply retry; larger ones are streamed.
      let held: Buffer[] = [];
      let heldBytes = 0;
      let sniffed = false;
      let body: PassThrough | null = null;
      let put: Promise<unknown> | null = null;
      const sniff = async () => {
        sniffed = true;
        detectedMime = await sniffImageType(Buffer.concat(held));
      };
      const startStreaming = (): PassThrough => {
        const out = new PassThrough();
        // Storage may not be reading yet when a refusal destroys `out`; its put() reports the
        // error itself, so an 'error' event here must not become an uncaught exception.
        out.on('error', () => undefined);
        put = storage.put(stagingKey, out, putOptions);
        put.catch(() => undefined);
        out.write(Buffer.concat(held));
        held = [];
        return out;
      };
      stored = (async () => {
        try {
          for await (const chunk of stream as AsyncIterable<Buffer>) {
            size += chunk.length;
            hash.update(chunk);
            if (body) {
              const out: PassThrough = body;
              if (!out.write(chunk)) await drainedOrClosed(out);
              if (out.destroyed) {
                // The storage gave up on the stream: its put() rejects with the reason.
                storageFailed = true;
                await put;
                throw new Error('storage stopped reading the staged upload');
              }
              continue;
            }
            held.push(chunk);
            heldBytes += chunk.length;
            if (!sniffed && heldBytes >= SNIFF_BYTES) await sniff();
            if (sniffed && heldBytes > BUFFERED_UPLOAD_BYTES) body = startStreaming();
          }
          if ((stream as { truncated?: boolean }).truncated) {
            throw new ServiceError('too_large', `File too large: the maximum upload size is ${formatBytes(maxBytes)}`);
          }
          if (!sniffed) {
            if (heldBytes === 0) throw new ServiceError('bad_request', 'No file provided: the "file" field is empty');
            await sniff();
          }
          sha256 = hash.digest('hex');
          storageFailed = true; // from here on, a failure is the storage's
          if (body) {
            body.end();
            await put;
          } else {
            await storage.put(stagingKey, Buffer.concat(held), { ...putOptions, sha256 });
          }
          storageFailed = false;
        } catch (err) {
          (body as PassThrough | null)?.destroy(err instanceof Error ? err : new Error(String(err)));
          stream.resume(); // drain the rest without keeping it
          await (put as Promise<unknown> | null)?.catch(() => undefined);
          // A refused upload is removed before the answer. When the storage itself failed, the
          // answer (503) does not also wait for a delete retried against the same failing storage.
          const removal = storage.delete(stagingKey).catch(() => undefined);
          if (!storageFailed) await removal;
          cleanedUp = true;
          throw err;
        }
      })();
      stored.catch(() => undefined);
    });
    parser.on('error', () => reject(new ServiceError('bad_request', 'Malformed multipart body')));
    parser.on('close', () => resolve());
  });
  req.pipe(parser);
  req.on('aborted', () => parser.destroy());
  try {
    await done;
    if (stored) await stored;
  } catch (err) {
    if (stored) await (stored as Promise<void>).catch(() => undefined);
    if (!cleanedUp) await storage.delete(stagingKey).catch(() => undefined);
    throw err;
  }
  if (failure) {
    await storage.delete(stagingKey).catch(() => undefined);
    throw failure;
  }
  if (!stored) throw new ServiceError('bad_request', 'No file provided: send the image in a multipart field named "file"');
  return { uploadId, stagingKey, size, sha256, filename, detectedMime, fields };
}
