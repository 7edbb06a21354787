// Signed transform URLs: HMAC-SHA256 with the credential's secret over the canonical query.
// Shared by the server (verification), the srcset endpoint and the client SDK (signing).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { TRANSFORM_PARAMS } from './params.js';

const SIGNED_NAMES = ['src', ...TRANSFORM_PARAMS.map((p) => p.name), 'kid'];

/** `src=…&w=…&…&kid=…` in registry order, values exactly as they appear in the URL query. */
export function canonicalQuery(query: Record<string, string | undefined>): string {
  return SIGNED_NAMES.filter((n) => query[n] !== undefined && query[n] !== '')
    .map((n) => `${n}=${encodeURIComponent(query[n] as string)}`)
    .join('&');
}

export function signQuery(query: Record<string, string | undefined>, secret: string): string {
  return createHmac('sha256', secret).update(canonicalQuery(query)).digest('base64url');
}

export function verifyQuery(query: Record<string, string | undefined>, secret: string, signature: string): boolean {
  const expected = Buffer.from(signQuery(query, secret));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Builds `{baseUrl}/transform?src=…&w=…&f=…&q=…&kid=…&sig=…`, parameters in the order given. */
export function signedTransformUrl(baseUrl: string, params: Record<string, string | number>, credential: { kid: string; secret: string }): string {
  const query: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) query[k] = String(v);
  query.kid = credential.kid;
  const sig = signQuery(query, credential.secret);
  const ordered = Object.entries(query).map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
  return `${baseUrl}/transform?${ordered.join('&')}&sig=${sig}`;
}
