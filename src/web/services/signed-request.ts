// Signed URLs on the request side: the credential named by `kid`, the HMAC over the canonical
// query (src/imaging/signing.ts), and the optional expiry `exp` (Unix seconds, signed with the
// rest, so it cannot be moved without breaking the signature).
import type { AuthenticatedUser } from '../../catalog/api-keys.js';
import { ServiceError } from '../../errors.js';
import { verifyQuery } from '../../imaging/signing.js';
import type { QueryValues } from '../../imaging/signing-core.js';
import type { KeyCache } from '../middleware/auth.js';
import { dependOn, validUntil, type Noted } from './hit-memo.js';

/** Whether the query carries a signature at all (`kid` and `sig`). */
export function isSignedQuery(query: QueryValues): query is QueryValues & { kid: string; sig: string } {
  return typeof query.kid === 'string' && typeof query.sig === 'string';
}

/**
 * The owner of a valid, unexpired signature. 401 when the signature does not match (any
 * parameter changed, exp included), 403 when it matched but its `exp` has passed. With `res`,
 * the answer is noted as relying on the credential and valid until `exp` (see HitMemo).
 */
export async function verifySignedQuery(keys: KeyCache, query: QueryValues & { kid: string; sig: string }, res?: Noted, now = Date.now()): Promise<AuthenticatedUser> {
  const user = await keys.byKeyId(query.kid);
  if (!user || !verifyQuery(query, user.secret, query.sig)) throw new ServiceError('unauthorized', 'Invalid or tampered URL signature');
  if (res) dependOn(res, () => keys.holdsKeyId(query.kid, user));
  if (query.exp !== undefined && query.exp !== '') {
    const exp = /^\d{1,11}$/.test(query.exp) ? Number(query.exp) : NaN;
    if (!Number.isFinite(exp)) throw new ServiceError('bad_request', '"exp" must be a Unix time in seconds');
    if (exp * 1000 <= now) throw new ServiceError('forbidden', `This signed URL expired at ${new Date(exp * 1000).toISOString()}`);
    if (res) validUntil(res, exp * 1000);
  }
  return user;
}
