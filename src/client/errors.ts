// Typed exceptions of the SDK. Every non-2xx answer becomes a PictorApiError carrying the status
// and the server's error body as sent: set A `{type, msg, status_code}`, set B `{detail}` (a string,
// or for 422 the list of `{loc, msg, type}` issues). The shapes are the server's own schemas
// (src/api/responses.schemas.ts, types inferred in src/api/response-types.ts).
import type { SetAErrorBody, SetBErrorBody as SetBMessageBody, SetBValidationErrorBody } from '../api/response-types.js';

/** Error body of set A routes (`/upload`, `/transform`, `/generate/srcset`). */
export type { SetAErrorBody };

/** One problem of a 422: where (`['query', 'w']`), what, and its kind. */
export type ValidationIssue = SetBValidationErrorBody['detail'][number];

/** Error body of set B routes: a message, or the validation issues of a 422. */
export type SetBErrorBody = SetBMessageBody | SetBValidationErrorBody;

export type ApiErrorBody = SetAErrorBody | SetBErrorBody | string | null;

/** Base class of everything the SDK throws on purpose. */
export class PictorError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The client is missing something it needs (an API key, the key id and secret for signing). */
export class PictorConfigError extends PictorError {}

/** The request did not get an HTTP answer (network failure, timeout, abort). */
export class PictorNetworkError extends PictorError {}

/** The service answered with an error status. */
export class PictorApiError extends PictorError {
  /** HTTP status (400, 401, 403, 404, 409, 413, 415, 422, 429, 503, 504, …). */
  readonly status: number;
  /** The error body as the server sent it (parsed JSON, or the text when it was not JSON). */
  readonly body: ApiErrorBody;
  /** Set A error type (`request_error`, `unauthorized_error`, `image_processing_error`, `server_error`). */
  readonly type: string | undefined;
  /** Set B validation issues (422), empty otherwise. */
  readonly issues: ValidationIssue[];
  /** `X-Request-Id` of the failed request, for the service's logs. */
  readonly requestId: string | undefined;
  /** Seconds from `Retry-After` (429, 503). */
  readonly retryAfterSeconds: number | undefined;
  readonly method: string;
  /** The request URL (never carries the API key, which travels in a header). */
  readonly url: string;

  constructor(args: { status: number; body: ApiErrorBody; method: string; url: string; requestId?: string; retryAfterSeconds?: number }) {
    super(`${args.method} ${pathOf(args.url)} failed with ${args.status}: ${messageOf(args.body, args.status)}`);
    this.status = args.status;
    this.body = args.body;
    this.method = args.method;
    this.url = args.url;
    this.requestId = args.requestId;
    this.retryAfterSeconds = args.retryAfterSeconds;
    const b = args.body;
    this.type = b && typeof b === 'object' && 'status_code' in b ? (b as SetAErrorBody).type : undefined;
    this.issues = b && typeof b === 'object' && 'detail' in b && Array.isArray(b.detail) ? (b.detail as ValidationIssue[]) : [];
  }

  /** The server's own message (set A `msg`, set B `detail`, or the issues joined). */
  get detail(): string {
    return messageOf(this.body, this.status);
  }

  /** Builds the error from a raw answer (used by the SDK and by XHR callers such as the dashboard). */
  static fromText(args: { status: number; text: string; method: string; url: string; header: (name: string) => string | null }): PictorApiError {
    let body: ApiErrorBody = args.text;
    try {
      body = JSON.parse(args.text) as ApiErrorBody;
    } catch {
      /* not JSON: keep the text */
    }
    const retry = Number(args.header('retry-after'));
    return new PictorApiError({
      status: args.status,
      body,
      method: args.method,
      url: args.url,
      requestId: args.header('x-request-id') ?? undefined,
      retryAfterSeconds: Number.isFinite(retry) && retry > 0 ? retry : undefined,
    });
  }
}

function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname;
  } catch {
    return url;
  }
}

function messageOf(body: ApiErrorBody, status: number): string {
  if (body && typeof body === 'object') {
    if ('msg' in body && typeof body.msg === 'string') return body.msg;
    if ('detail' in body) {
      if (typeof body.detail === 'string') return body.detail;
      if (Array.isArray(body.detail)) return body.detail.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ');
    }
  }
  if (typeof body === 'string' && body.trim()) return body.trim().slice(0, 300);
  return `HTTP ${status}`;
}
