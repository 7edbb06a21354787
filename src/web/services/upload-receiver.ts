// Streams a multipart upload straight into staging storage: the type is sniffed from the first
// bytes, the size is counted while streaming, and the excess over the limit is never buffered.
import busboy from 'busboy';
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Request } from 'express';
import { ServiceError } from '../../errors.js';
import type { Storage } from '../../storage/storage.js';
import { SNIFF_BYTES, sniffImageType } from './sniff-image.js';

export interface ReceivedUpload {
  uploadId: string;
  stagingKey: string;
  size: number;
  filename: string;
  detectedMime: string;
  fields: Record<string, string>;
}

const MAX_FIELD_BYTES = 2048;

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${Math.round(n / 1024)} kB`;
}

export async function receiveUpload(req: Request, storage: Storage, maxBytes: number): Promise<ReceivedUpload> {
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
  let filename = '';
  let size = 0;
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
      const body = new PassThrough();
      // Storage may not be reading yet when a refusal destroys `body`; its put() reports the
      // error itself, so an 'error' event here must not become an uncaught exception.
      body.on('error', () => undefined);
      let head: Buffer[] = [];
      let headBytes = 0;
      let sniffed = false;
      const sniff = async () => {
        sniffed = true;
        const first = Buffer.concat(head);
        head = [];
        detectedMime = await sniffImageType(first);
        body.write(first);
      };
      stored = (async () => {
        const put = storage.put(stagingKey, body, { contentType: 'application/octet-stream' });
        put.catch(() => undefined);
        try {
          for await (const chunk of stream as AsyncIterable<Buffer>) {
            size += chunk.length;
            if (sniffed) {
              if (!body.write(chunk)) await new Promise((r) => body.once('drain', r));
            } else {
              head.push(chunk);
              headBytes += chunk.length;
              if (headBytes >= SNIFF_BYTES) await sniff();
            }
          }
          if ((stream as { truncated?: boolean }).truncated) {
            throw new ServiceError('too_large', `File too large: the maximum upload size is ${formatBytes(maxBytes)}`);
          }
          if (!sniffed) {
            if (headBytes === 0) throw new ServiceError('bad_request', 'No file provided: the "file" field is empty');
            await sniff();
          }
          body.end();
          await put;
        } catch (err) {
          body.destroy(err instanceof Error ? err : new Error(String(err)));
          stream.resume(); // drain the rest without keeping it
          await put.catch(() => undefined);
          await storage.delete(stagingKey).catch(() => undefined);
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
    await storage.delete(stagingKey).catch(() => undefined);
    throw err;
  }
  if (failure) {
    await storage.delete(stagingKey).catch(() => undefined);
    throw failure;
  }
  if (!stored) throw new ServiceError('bad_request', 'No file provided: send the image in a multipart field named "file"');
  return { uploadId, stagingKey, size, filename, detectedMime, fields };
}
