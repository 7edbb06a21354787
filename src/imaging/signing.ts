// Signed transform URLs on the server: HMAC-SHA256 with the credential's secret over the canonical
// query. The canonical form and URL layout live in signing-core.ts, shared with the client SDK
// and the dashboard (which sign with WebCrypto); here the HMAC is node:crypto's, synchronous, and
// verification is constant-time.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { assembleSignedUrl, canonicalQuery, signingQuery, type HmacSha256, type QueryValues, type SignableParams } from './signing-core.js';

export { canonicalQuery } from './signing-core.js';

export const nodeHmacSha256 = ((secret: string, message: string): string => createHmac('sha256', secret).update(message).digest('base64url')) satisfies HmacSha256;

export function signQuery(query: QueryValues, secret: string): string {
  return nodeHmacSha256(secret, canonicalQuery(query));
}

export function verifyQuery(query: QueryValues, secret: string, signature: string): boolean {
  const expected = Buffer.from(signQuery(query, secret));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Builds `{baseUrl}/transform?src=…&w=…&f=…&q=…&kid=…&sig=…`, parameters in the order given. */
export function signedTransformUrl(baseUrl: string, params: SignableParams, credential: { kid: string; secret: string }): string {
  const query = signingQuery(params, credential.kid);
  return assembleSignedUrl(baseUrl, query, signQuery(query, credential.secret));
}
