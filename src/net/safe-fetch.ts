/**
 * safeFetch: fetch a user-supplied URL (e.g. "import image from URL") without opening an SSRF hole.
 *
 * Guarantees:
 *  - only http: and https: URLs, no credentials in the URL;
 *  - the host is resolved once per hop (all addresses) and the hop is refused if ANY address is not
 *    a public unicast address (loopback, private, link-local/cloud metadata, CGNAT, unspecified,
 *    multicast, reserved/documentation, IPv6 ULA/link-local/site-local, IPv4-mapped/-compatible and
 *    NAT64/6to4/Teredo forms that embed IPv4, ...);
 *  - the connection goes to the very addresses that were checked: the socket's DNS lookup is replaced
 *    by a function that returns the checked addresses, so a second (rebinding) resolution never
 *    happens, while Host header, SNI and certificate verification still use the original hostname;
 *  - redirects are followed manually (at most maxRedirects), every hop is checked again;
 *  - body size is capped (Content-Length checked up front, the stream is aborted past the cap);
 *  - connect timeout per hop and a total timeout over DNS + all hops + body;
 *  - no connection pooling (agent: false), so no socket is reused across checks.
 *
 * Error -> HTTP status our API should answer (SafeFetchError.status):
 *  400  the request itself is unacceptable: malformed URL, scheme other than http/https, credentials
 *       in the URL, or the host resolves to a non-public address ("refused: resolves to a private
 *       address"). The same applies when a redirect points to such a target.
 *  413  the body is larger than maxBytes (by Content-Length or while streaming).
 *  415  the upstream Content-Type is missing or not in allowedContentTypes.
 *  502  the upstream failed: non-2xx status (see `upstreamStatus`), DNS failure, connection
 *       refused/reset, TLS error, malformed response, redirect without Location, too many redirects.
 *  504  connect timeout or total timeout.
 */
import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
// ipaddr.js does the range classification.
import ipaddr from 'ipaddr.js';

export type SafeFetchErrorCode =
  | 'INVALID_URL'
  | 'UNSUPPORTED_SCHEME'
  | 'CREDENTIALS_IN_URL'
  | 'BLOCKED_ADDRESS'
  | 'DNS_FAILURE'
  | 'TOO_LARGE'
  | 'UNSUPPORTED_CONTENT_TYPE'
  | 'UPSTREAM_STATUS'
  | 'UPSTREAM_UNREACHABLE'
  | 'BAD_REDIRECT'
  | 'TOO_MANY_REDIRECTS'
  | 'CONNECT_TIMEOUT'
  | 'TIMEOUT';

export class SafeFetchError extends Error {
  /** HTTP status our API should answer with (see the table at the top of this file). */
  readonly status: 400 | 413 | 415 | 502 | 504;
  readonly code: SafeFetchErrorCode;
  /** Upstream HTTP status, for code UPSTREAM_STATUS. */
  readonly upstreamStatus?: number;
  /** The refused address, for code BLOCKED_ADDRESS (for logs; not part of the message). */
  readonly address?: string;

  constructor(
    status: SafeFetchError['status'],
    code: SafeFetchErrorCode,
    message: string,
    extra: { upstreamStatus?: number; address?: string; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'SafeFetchError';
    this.status = status;
    this.code = code;
    if (extra.upstreamStatus !== undefined) this.upstreamStatus = extra.upstreamStatus;
    if (extra.address !== undefined) this.address = extra.address;
  }
}

/** Promise-based resolver returning every address of a hostname (like dns.promises.lookup with all: true). */
export type SafeFetchLookup = (hostname: string) => Promise<readonly LookupAddress[]>;

export interface SafeFetchOptions {
  /** Maximum body size in bytes. */
  maxBytes: number;
  /** TCP connect (+ TLS handshake) timeout per hop. Default 5000. */
  connectTimeoutMs?: number;
  /** Timeout over the whole operation: DNS, every hop, body. Default 15000. */
  totalTimeoutMs?: number;
  /** Maximum number of redirects followed. Default 3. */
  maxRedirects?: number;
  /** Accepted Content-Type prefixes, case-insensitive (e.g. ['image/']). Unset = anything. */
  allowedContentTypes?: string[];
  /** Custom resolver (tests). Default: dns.promises.lookup(host, { all: true }). */
  lookup?: SafeFetchLookup;
  /**
   * TEST ONLY: return true to let a non-public address through (e.g. 127.0.0.1 for a test's own
   * local server). Never set this in production code.
   */
  allowPrivateForTests?: (address: string) => boolean;
}

export interface SafeFetchResult {
  buffer: Buffer;
  /** The upstream Content-Type header ('' if absent and no allowedContentTypes were given). */
  contentType: string;
  /** URL of the response actually returned, after redirects. */
  finalUrl: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

// Special-purpose ranges ipaddr.js (1.x) reports as 'unicast' but that are not publicly routable.
const EXTRA_BLOCKED_V4 = ['198.18.0.0/15' /* benchmarking, RFC 2544 */].map((c) => ipaddr.IPv4.parseCIDR(c));
const EXTRA_BLOCKED_V6 = [
  '::/96', // IPv4-compatible (deprecated), e.g. ::127.0.0.1
  '64:ff9b:1::/48', // local-use NAT64, RFC 8215
  '100::/64', // discard-only, RFC 6666
  '2001::/23', // IETF protocol assignments (Teredo, ORCHID, benchmarking, ...)
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation, RFC 9637
  '5f00::/16', // SRv6 SIDs, RFC 9602
].map((c) => ipaddr.IPv6.parseCIDR(c));
// Only the IPv6 global unicast block is reachable on the public internet today; everything outside
// it (ULA fc00::/7, link-local fe80::/10, site-local fec0::/10, multicast, ...) is refused.
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * True if `address` (an IP literal) is a public unicast address we may connect to.
 * Anything that does not parse is treated as not public.
 */
export function isPublicAddress(address: string): boolean {
  if (net.isIP(address) === 0 || !ipaddr.isValid(address)) return false;
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return false;
  }
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) {
    ip = (ip as ipaddr.IPv6).toIPv4Address(); // ::ffff:10.0.0.1 is judged as 10.0.0.1
  }
  if (ip.kind() === 'ipv4') {
    const v4 = ip as ipaddr.IPv4;
    return v4.range() === 'unicast' && !EXTRA_BLOCKED_V4.some((range) => v4.match(range));
  }
  const v6 = ip as ipaddr.IPv6;
  return (
    v6.range() === 'unicast' &&
    v6.match(GLOBAL_UNICAST_V6) &&
    !EXTRA_BLOCKED_V6.some((range) => v6.match(range))
  );
}

interface ResolvedOptions {
  maxBytes: number;
  connectTimeoutMs: number;
  maxRedirects: number;
  allowedContentTypes: string[] | undefined;
  lookup: SafeFetchLookup;
  allowPrivateForTests: ((address: string) => boolean) | undefined;
}

const defaultLookup: SafeFetchLookup = (hostname) => dns.promises.lookup(hostname, { all: true });

function assertNonNegativeInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`safeFetch: ${name} must be a non-negative integer, got ${value}`);
  }
}

/**
 * Fetch `url` with SSRF protection, size cap, timeouts and manual redirects.
 * Rejects with SafeFetchError (see the status table at the top of this file).
 */
export async function safeFetch(url: string, options: SafeFetchOptions): Promise<SafeFetchResult> {
  const totalTimeoutMs = options.totalTimeoutMs ?? 15_000;
  const opts: ResolvedOptions = {
    maxBytes: options.maxBytes,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    maxRedirects: options.maxRedirects ?? 3,
    allowedContentTypes: options.allowedContentTypes?.map((t) => t.trim().toLowerCase()),
    lookup: options.lookup ?? defaultLookup,
    allowPrivateForTests: options.allowPrivateForTests,
  };
  assertNonNegativeInteger('maxBytes', opts.maxBytes);
  assertNonNegativeInteger('connectTimeoutMs', opts.connectTimeoutMs);
  assertNonNegativeInteger('totalTimeoutMs', totalTimeoutMs);
  assertNonNegativeInteger('maxRedirects', opts.maxRedirects);

  const deadline = Date.now() + totalTimeoutMs;
  let current = parseTarget(url);
  for (let redirects = 0; ; redirects++) {
    const addresses = await resolveAndCheck(current, opts, deadline);
    const hop = await fetchOnce(current, addresses, opts, deadline);
    if (hop.kind === 'response') {
      return { buffer: hop.buffer, contentType: hop.contentType, finalUrl: current.href };
    }
    if (redirects >= opts.maxRedirects) {
      throw new SafeFetchError(502, 'TOO_MANY_REDIRECTS', `too many redirects (more than ${opts.maxRedirects})`);
    }
    current = parseTarget(hop.location, current);
  }
}

/** Parse and validate a URL (absolute, or relative to `base` for redirects). */
function parseTarget(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw base
      ? new SafeFetchError(502, 'BAD_REDIRECT', 'upstream redirected to an invalid URL')
      : new SafeFetchError(400, 'INVALID_URL', 'invalid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SafeFetchError(
      400,
      'UNSUPPORTED_SCHEME',
      `${base ? 'redirect refused' : 'refused'}: unsupported URL scheme "${url.protocol}" (only http and https)`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new SafeFetchError(400, 'CREDENTIALS_IN_URL', 'refused: credentials in URL are not allowed');
  }
  if (url.hostname === '') {
    throw new SafeFetchError(400, 'INVALID_URL', 'invalid URL: missing host');
  }
  return url;
}

/** URL.hostname keeps the brackets of IPv6 literals; sockets and lookups want them stripped. */
function bareHostname(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function timeoutError(): SafeFetchError {
  return new SafeFetchError(504, 'TIMEOUT', 'timed out fetching the URL');
}

async function withDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) throw timeoutError();
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(timeoutError()), remaining);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolve every address of the URL's host; refuse if any of them is not public. */
async function resolveAndCheck(url: URL, opts: ResolvedOptions, deadline: number): Promise<LookupAddress[]> {
  const host = bareHostname(url);
  let addresses: LookupAddress[];
  const literalFamily = net.isIP(host);
  if (literalFamily !== 0) {
    addresses = [{ address: host, family: literalFamily }];
  } else {
    try {
      addresses = [...(await withDeadline(opts.lookup(host), deadline))];
    } catch (err) {
      if (err instanceof SafeFetchError) throw err;
      const code = (err as NodeJS.ErrnoException | undefined)?.code;
      throw new SafeFetchError(502, 'DNS_FAILURE', `could not resolve host ${host}${code ? ` (${code})` : ''}`, {
        cause: err,
      });
    }
  }
  if (addresses.length === 0) {
    throw new SafeFetchError(502, 'DNS_FAILURE', `could not resolve host ${host} (no addresses)`);
  }
  for (const { address } of addresses) {
    if (!isPublicAddress(address) && !(opts.allowPrivateForTests?.(address) ?? false)) {
      throw new SafeFetchError(400, 'BLOCKED_ADDRESS', `refused: resolves to a private address (host ${host})`, {
        address,
      });
    }
  }
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/**
 * A socket lookup that ignores the hostname and answers with the already-checked addresses,
 * so the connection goes exactly where the check said (no DNS rebinding window).
 */
function pinnedLookup(addresses: LookupAddress[]): net.LookupFunction {
  return (_hostname: string, options: LookupOptions, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const candidates = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
    if (candidates.length === 0) {
      const err: NodeJS.ErrnoException = new Error(`no checked address of family ${String(family)}`);
      err.code = 'ENOTFOUND';
      process.nextTick(callback, err, '', 0);
      return;
    }
    if (options.all) process.nextTick(callback, null, candidates);
    else process.nextTick(callback, null, candidates[0].address, candidates[0].family);
  };
}

type HopResult =
  | { kind: 'redirect'; location: string }
  | { kind: 'response'; buffer: Buffer; contentType: string };

function networkError(err: unknown): SafeFetchError {
  if (err instanceof SafeFetchError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ETIMEDOUT') {
    return new SafeFetchError(504, 'CONNECT_TIMEOUT', 'timed out connecting to upstream', { cause: err });
  }
  const reason = code ?? (err instanceof Error ? err.message : String(err));
  return new SafeFetchError(502, 'UPSTREAM_UNREACHABLE', `upstream unreachable (${reason})`, { cause: err });
}

function contentTypeAllowed(contentType: string, allowed: string[]): boolean {
  const ct = contentType.trim().toLowerCase();
  return ct !== '' && allowed.some((prefix) => ct.startsWith(prefix));
}

/** One request/response exchange against pinned addresses. */
function fetchOnce(url: URL, addresses: LookupAddress[], opts: ResolvedOptions, deadline: number): Promise<HopResult> {
  return new Promise<HopResult>((resolve, reject) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      reject(timeoutError());
      return;
    }
    const isHttps = url.protocol === 'https:';
    const requestOptions: https.RequestOptions = {
      protocol: url.protocol,
      hostname: bareHostname(url), // Host header and SNI use the original name...
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { accept: '*/*', 'accept-encoding': 'identity', 'user-agent': 'Pictor-SafeFetch/1' },
      agent: false, // fresh socket per hop, never a pooled one
      lookup: pinnedLookup(addresses), // ...but the socket connects to the checked addresses only
    };
    const req = isHttps ? https.request(requestOptions) : http.request(requestOptions);

    let settled = false;
    const totalTimer = setTimeout(() => fail(timeoutError()), remaining);
    const connectTimer = setTimeout(
      () => fail(new SafeFetchError(504, 'CONNECT_TIMEOUT', 'timed out connecting to upstream')),
      Math.min(opts.connectTimeoutMs, remaining),
    );
    const cleanup = (): void => {
      settled = true;
      clearTimeout(totalTimer);
      clearTimeout(connectTimer);
    };
    function fail(err: SafeFetchError): void {
      if (settled) return;
      cleanup();
      req.destroy();
      reject(err);
    }
    const succeed = (result: HopResult): void => {
      if (settled) return;
      cleanup();
      if (result.kind === 'redirect') req.destroy(); // don't read the redirect body
      resolve(result);
    };

    req.on('socket', (socket) => {
      socket.once(isHttps ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });
    req.on('error', (err) => fail(networkError(err)));
    req.on('response', (res) => {
      res.on('error', (err) => fail(networkError(err)));
      const status = res.statusCode ?? 0;

      if (REDIRECT_STATUSES.has(status)) {
        const location = res.headers.location;
        if (location === undefined || location === '') {
          fail(new SafeFetchError(502, 'BAD_REDIRECT', `upstream answered ${status} without a Location header`));
        } else {
          succeed({ kind: 'redirect', location });
        }
        return;
      }
      if (status < 200 || status > 299) {
        fail(
          new SafeFetchError(502, 'UPSTREAM_STATUS', `upstream answered HTTP ${status}`, { upstreamStatus: status }),
        );
        return;
      }

      const contentType = (res.headers['content-type'] ?? '').trim();
      if (opts.allowedContentTypes && !contentTypeAllowed(contentType, opts.allowedContentTypes)) {
        fail(
          new SafeFetchError(
            415,
            'UNSUPPORTED_CONTENT_TYPE',
            `unsupported content type "${contentType || '(none)'}" (allowed: ${opts.allowedContentTypes.join(', ')})`,
          ),
        );
        return;
      }

      const lengthHeader = res.headers['content-length'];
      if (lengthHeader !== undefined && /^\d+$/.test(lengthHeader.trim()) && Number(lengthHeader) > opts.maxBytes) {
        fail(
          new SafeFetchError(
            413,
            'TOO_LARGE',
            `response too large: Content-Length ${lengthHeader.trim()} exceeds the limit of ${opts.maxBytes} bytes`,
          ),
        );
        return;
      }

      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > opts.maxBytes) {
          fail(new SafeFetchError(413, 'TOO_LARGE', `response too large: exceeds the limit of ${opts.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => succeed({ kind: 'response', buffer: Buffer.concat(chunks, received), contentType }));
      res.on('close', () => {
        if (!res.complete) {
          fail(new SafeFetchError(502, 'UPSTREAM_UNREACHABLE', 'upstream closed the connection before the body was complete'));
        }
      });
    });
    req.end();
  });
}
