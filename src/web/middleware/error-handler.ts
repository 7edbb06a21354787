// The one place errors become responses. Never leaks stack traces; 5xx are logged with the request id.
import type { NextFunction, Request, Response } from 'express';
import { ServiceError, storageFull } from '../../errors.js';
import { InvalidStorageKeyError, StorageFullError, StorageNotFoundError, StorageUnavailableError } from '../../storage/storage.js';
import { currentErrorShape } from './error-shape.js';

const SET_A_TYPES: Record<number, string> = { 401: 'unauthorized_error', 422: 'image_processing_error' };

export function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  const e = err as { type?: string; status?: number; code?: string; name?: string; message?: string };
  // body-parser errors (invalid JSON, too large)
  if (e?.type === 'entity.too.large') return new ServiceError('too_large', 'Request body too large');
  if (e?.type === 'entity.parse.failed') return new ServiceError('bad_request', 'Request body is not valid JSON');
  const clientError = bodyReadError(err);
  if (clientError) return clientError;
  // A key the store refuses or does not have is, to a caller, simply not there.
  if (err instanceof StorageNotFoundError || err instanceof InvalidStorageKeyError) return new ServiceError('not_found', 'Not found');
  if (err instanceof StorageFullError) return storageFull();
  if (err instanceof StorageUnavailableError) return new ServiceError('unavailable', 'Storage is unavailable; retry shortly', { retryAfterSeconds: 5 });
  if (isInfrastructureError(e)) return new ServiceError('unavailable', 'A backing service is unavailable; retry shortly', { retryAfterSeconds: 5 });
  return new ServiceError('internal', 'Internal server error');
}

/**
 * The body parser's refusals of what the client sent (an unsupported charset or Content-Encoding,
 * a body that does not decode, a length that does not match, a client that went away) carry a 4xx
 * status: they are the client's mistake, answered in the route's shape, never a 500.
 */
function bodyReadError(err: unknown): ServiceError | null {
  const e = err as { status?: unknown; expose?: unknown; type?: unknown; code?: unknown; message?: string };
  if (e?.type === 'charset.unsupported') return new ServiceError('unsupported_type', 'Unsupported charset: send the JSON body as UTF-8');
  if (e?.type === 'encoding.unsupported') return new ServiceError('unsupported_type', 'Unsupported Content-Encoding: send the body uncompressed, gzip, deflate or br');
  if (e?.type === 'request.aborted') return new ServiceError('bad_request', 'The client closed the request before the body was complete');
  if (e?.type === 'request.size.invalid') return new ServiceError('bad_request', 'Request body length does not match Content-Length');
  // zlib's errors surface when a body declared as compressed does not decode.
  if (typeof e?.code === 'string' && e.code.startsWith('Z_')) return new ServiceError('bad_request', 'Request body does not match its Content-Encoding');
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && e.expose === true) {
    return new ServiceError(e.status === 413 ? 'too_large' : e.status === 415 ? 'unsupported_type' : 'bad_request', 'Request body could not be read: ' + (e.message ?? 'bad request'));
  }
  return null;
}

function isInfrastructureError(e: { name?: string; message?: string; code?: string } | undefined): boolean {
  if (!e) return false;
  const name = e.name ?? '';
  const message = e.message ?? '';
  return (
    // The driver's network errors include names without the prefix (PoolClearedOnNetworkError).
    name.startsWith('Mongo') ||
    name.startsWith('PoolCleared') ||
    name === 'MaxRetriesPerRequestError' ||
    /Stream isn't writeable|Connection is closed|Command timed out|ECONNREFUSED|ECONNRESET|ETIMEDOUT|enableOfflineQueue/.test(message)
  );
}

export function renderError(err: ServiceError, res: Response): void {
  if (err.extra.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.extra.retryAfterSeconds));
  if (currentErrorShape(res) === 'A') {
    const type = SET_A_TYPES[err.status] ?? (err.status >= 500 ? 'server_error' : 'request_error');
    res.status(err.status).json({ type, msg: err.message, status_code: err.status });
    return;
  }
  if (err.extra.issues) {
    res.status(422).json({ detail: err.extra.issues });
    return;
  }
  res.status(err.status).json({ detail: err.message });
}

export function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  // Already answered in full (the answer deadline's 503): the late handler's error or answer is dropped.
  if (res.writableEnded) return;
  const serviceError = toServiceError(err);
  if (serviceError.status >= 500) {
    req.log?.error({ err, reqId: req.id }, 'request failed');
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  renderError(serviceError, res);
}

export function notFoundHandler(req: Request, res: Response): void {
  renderError(new ServiceError('not_found', `No route for ${req.method} ${req.path}`), res);
}
