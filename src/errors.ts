// One error type for everything a caller can be told about. The front door renders it in the
// shape of the path set that was called (set A: {type,msg,status_code}; set B: {detail}).
export type ErrorKind =
  | 'bad_request' // 400
  | 'unauthorized' // 401
  | 'forbidden' // 403
  | 'not_found' // 404
  | 'conflict' // 409
  | 'too_large' // 413
  | 'unsupported_type' // 415
  | 'invalid_parameter' // 422 (a value out of range / wrong type / unprocessable image)
  | 'rate_limited' // 429
  | 'unavailable' // 503
  | 'timeout' // 504
  | 'internal'; // 500

const STATUS: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_type: 415,
  invalid_parameter: 422,
  rate_limited: 429,
  unavailable: 503,
  timeout: 504,
  internal: 500,
};

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class ServiceError extends Error {
  readonly status: number;
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly extra: { issues?: ValidationIssue[]; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.status = STATUS[kind];
  }

  toJSON(): { kind: ErrorKind; message: string; extra: ServiceError['extra'] } {
    return { kind: this.kind, message: this.message, extra: this.extra };
  }

  static fromJSON(value: unknown): ServiceError | null {
    if (!value || typeof value !== 'object') return null;
    const v = value as { kind?: string; message?: string; extra?: ServiceError['extra'] };
    if (typeof v.kind !== 'string' || !(v.kind in STATUS) || typeof v.message !== 'string') return null;
    return new ServiceError(v.kind as ErrorKind, v.message, v.extra ?? {});
  }
}

export const unavailable = (msg: string, retryAfterSeconds?: number) => new ServiceError('unavailable', msg, { retryAfterSeconds });

/** A write refused for lack of space (ENOSPC, EDQUOT): final, not retried; the caller may try again once space is freed. */
export const storageFull = () => unavailable('Storage is full: nothing was stored; retry once space has been freed', 30);
