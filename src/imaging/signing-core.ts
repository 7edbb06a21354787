// Signed transform URLs, the part every side shares: the canonical form that is signed, the URL
// layout, and an HMAC-SHA256 over WebCrypto. No `node:` imports, so the client SDK and the
// dashboard load this very file in browsers; the server (signing.ts) adds a synchronous
// node:crypto HMAC and the constant-time verification.
import { TRANSFORM_PARAMS } from './params.js';

/**
 * Names covered by a signature, in canonical order: `src`, the registry's parameters, `exp` (an
 * optional expiry, Unix seconds), `kid`. A URL without `exp` signs exactly as before it existed.
 */
export const SIGNED_NAMES: readonly string[] = ['src', ...TRANSFORM_PARAMS.map((p) => p.name), 'exp', 'kid'];

export type QueryValues = Record<string, string | undefined>;
export type SignableParams = Record<string, string | number | boolean | undefined | null>;

/** HMAC-SHA256 of `message` keyed with `secret`, base64url without padding; sync or async. */
export type HmacSha256 = (secret: string, message: string) => string | Promise<string>;

/** `src=…&w=…&…&kid=…` in registry order, values exactly as they appear in the URL query. */
export function canonicalQuery(query: QueryValues): string {
  return SIGNED_NAMES.filter((n) => query[n] !== undefined && query[n] !== '')
    .map((n) => `${n}=${encodeURIComponent(query[n] as string)}`)
    .join('&');
}

/** The query of a signed URL before its signature: values as strings, order as given, `kid` last. */
export function signingQuery(params: SignableParams, kid: string): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) query[k] = String(v);
  query.kid = kid;
  return query;
}

/** `{baseUrl}/transform?<query in its order>&sig=<sig>`. */
export function assembleSignedUrl(baseUrl: string, query: Record<string, string>, sig: string): string {
  const ordered = Object.entries(query).map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
  return `${baseUrl.replace(/\/+$/, '')}/transform?${ordered.join('&')}&sig=${sig}`;
}

export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * HMAC-SHA256 over WebCrypto (`crypto.subtle`): browsers (secure contexts: https, localhost,
 * 127.0.0.1), Node ≥ 20, Deno, Bun, workers.
 */
export const webCryptoHmacSha256: HmacSha256 = async (secret, message) => {
  const subtle = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
  if (!subtle) throw new Error('WebCrypto (crypto.subtle) is not available here (browsers expose it only on https or localhost): pass an hmac function');
  const encoder = new TextEncoder();
  const key = await subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await subtle.sign('HMAC', key, encoder.encode(message));
  return base64url(new Uint8Array(mac));
};

/** Signature of a query with any HMAC implementation (WebCrypto by default). */
export async function signQueryWith(query: QueryValues, secret: string, hmac: HmacSha256 = webCryptoHmacSha256): Promise<string> {
  return hmac(secret, canonicalQuery(query));
}

/** Builds `{baseUrl}/transform?src=…&w=…&…&kid=…&sig=…` with any HMAC implementation (WebCrypto by default). */
export async function signedTransformUrlWith(
  baseUrl: string,
  params: SignableParams,
  credential: { kid: string; secret: string },
  hmac: HmacSha256 = webCryptoHmacSha256,
): Promise<string> {
  const query = signingQuery(params, credential.kid);
  return assembleSignedUrl(baseUrl, query, await signQueryWith(query, credential.secret, hmac));
}
