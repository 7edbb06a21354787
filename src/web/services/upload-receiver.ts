// Receives a multipart upload through multer into staging (see staging-engine.ts). Every refusal
// becomes a ServiceError the error handler renders in the route's shape, and is answered as soon
// as it is decided: the rest of the body is drained behind the answer, or the connection closed
// when the client keeps sending far past the limit.
import type { Request, Response } from 'express';
import multer from 'multer';
import { ServiceError } from '../../errors.js';
import type { Storage } from '../../storage/storage.js';
import { StagingEngine, tooLarge, type StagedFile } from './staging-engine.js';

export { BUFFERED_UPLOAD_BYTES } from './staging-engine.js';

export interface ReceivedUpload extends StagedFile {
  filename: string;
  fields: Record<string, string>;
}

export interface ReceiveOptions {
  maxBytes: number;
  /**
   * Flush the staged bytes to disk before answering. Needed when the answer is "accepted" (202)
   * before the worker has stored the original; a synchronous upload is answered only after the
   * worker's durable write, so a staged file deleted within milliseconds need never reach the disk.
   */
  durable: boolean;
}

const MAX_FIELD_BYTES = 2048;
/** Multipart framing and the form fields around the file, over the file's own limit. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
/** Behind a refusal, the body is read (and dropped) this long at most, then the connection closed. */
const DRAIN_MS = 5000;

/** The missing `file`: 400 in set A; set B renders the issue as FastAPI's 422 `detail[]`. */
export const missingFile = (why: string) =>
  new ServiceError('bad_request', `No file provided: ${why}`, { issues: [{ loc: ['body', 'file'], msg: 'Field required', type: 'missing' }] });

function refusalOf(err: unknown, maxBytes: number): ServiceError | unknown {
  if (!(err instanceof multer.MulterError)) return err;
  switch (err.code) {
    case 'LIMIT_FILE_SIZE':
      return tooLarge(maxBytes);
    case 'LIMIT_UNEXPECTED_FILE':
      return err.field === 'file' ? new ServiceError('bad_request', 'Only one file per upload: send one "file" part') : missingFile(`send the image in a multipart field named "file", not "${err.field}"`);
    case 'LIMIT_FILE_COUNT':
      return new ServiceError('bad_request', 'Only one file per upload: send one "file" part');
    case 'LIMIT_FIELD_VALUE':
      return new ServiceError('bad_request', `Form field "${err.field}" is too long (at most ${MAX_FIELD_BYTES} bytes)`);
    default:
      return new ServiceError('bad_request', `Malformed multipart body: ${err.message}`);
  }
}

/** busboy's own complaints (no boundary, unexpected end, bad headers) are the client's. */
function isMalformedBody(err: unknown): boolean {
  const message = (err as Error | undefined)?.message ?? '';
  return /boundary|Unexpected end of form|Malformed|Part terminated|header/i.test(message);
}

export async function receiveUpload(req: Request, res: Response, storage: Storage, options: ReceiveOptions): Promise<ReceivedUpload> {
  const { maxBytes } = options;
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(type)) throw missingFile('send multipart/form-data with a "file" field');
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes + FORM_OVERHEAD_BYTES) {
    closeAfterAnswer(req, res);
    throw tooLarge(maxBytes);
  }
  let refuse: (err: ServiceError) => void = () => undefined;
  const refused = new Promise<never>((_resolve, reject) => (refuse = reject));
  const engine = new StagingEngine(storage, { maxBytes, durable: options.durable, onRefusal: (err) => refuse(err) });
  const receive = multer({
    storage: engine,
    // Browsers and fetch send the file name as raw UTF-8 (busboy assumes latin1).
    defParamCharset: 'utf8',
    limits: { files: 1, fileSize: maxBytes, fields: 20, fieldSize: MAX_FIELD_BYTES, parts: 25 },
  }).single('file');
  const received = new Promise<void>((resolve, reject) => receive(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
  try {
    // The engine's refusal is answered at once; multer keeps draining the body behind the answer.
    await Promise.race([received, refused]);
  } catch (err) {
    received.catch(() => undefined);
    if (!req.complete && (req.readableAborted || req.socket?.destroyed)) throw new ServiceError('bad_request', 'The client closed the upload before it was complete');
    closeAfterAnswer(req, res);
    const refusal = refusalOf(err, maxBytes);
    if (refusal instanceof ServiceError) throw refusal;
    if (isMalformedBody(err)) throw new ServiceError('bad_request', `Malformed multipart body: ${(err as Error).message}`);
    throw err;
  }
  const file = req.file as (Express.Multer.File & StagedFile) | undefined;
  if (!file) throw missingFile('send the image in a multipart field named "file"');
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries((req.body ?? {}) as Record<string, unknown>)) if (typeof value === 'string') fields[name] = value;
  const { uploadId, stagingKey, size, sha256, detectedMime } = file;
  return { uploadId, stagingKey, size, sha256, detectedMime, filename: file.originalname ?? '', fields };
}

/**
 * A refusal is answered before the body has arrived. The rest is read and dropped (so the client,
 * still sending, gets to read the answer and may reuse the connection); a client still sending
 * DRAIN_MS after the answer is cut off.
 */
function closeAfterAnswer(req: Request, res: Response): void {
  if (req.complete) return;
  res.once('finish', () => {
    if (req.complete) return;
    req.resume();
    const timer = setTimeout(() => req.socket.destroy(), DRAIN_MS);
    timer.unref();
    req.once('end', () => clearTimeout(timer));
  });
}
