// The admin credential (ADMIN_TOKEN) for operator routes: GET /metrics (when the token is set) and
// the queue dashboard. Accepted as `Authorization: Bearer <token>` (Prometheus' `authorization`
// scrape setting), `X-Admin-Token: <token>`, or HTTP Basic with the token as the password, which is
// what a browser prompts for on the 401's `WWW-Authenticate: Basic` (any user name).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../../errors.js';

export function adminCredentialOf(req: Request): string | undefined {
  const header = req.headers['x-admin-token'];
  if (typeof header === 'string' && header !== '') return header;
  const authorization = req.headers.authorization ?? '';
  const [scheme, value = ''] = authorization.trim().split(/\s+/, 2);
  if (/^bearer$/i.test(scheme ?? '') && value) return value;
  if (/^basic$/i.test(scheme ?? '') && value) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon >= 0 ? decoded.slice(colon + 1) : decoded;
  }
  return undefined;
}

/** Constant-time comparison of a given credential with the configured one (hashing first makes the lengths equal); an empty configured one matches nothing. */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (!expected || given === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export const isAdminToken = sameSecret;

/** 401 (set B shape) without the credential; `token` must be non-empty (callers decide what empty means). */
export function requireAdmin(token: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (isAdminToken(adminCredentialOf(req), token)) return next();
    res.setHeader('WWW-Authenticate', 'Basic realm="Pictor admin", charset="UTF-8"');
    throw new ServiceError('unauthorized', 'Admin credential required: Authorization: Bearer <ADMIN_TOKEN>, X-Admin-Token, or Basic with the token as password');
  };
}
