// The public demo routes (/image/demo/{path}, /passport-photo/demo/process): who may call them
// (X-Demo-Token or an allowed Origin/Referer) and which sources the image demo may read.
import type { Request } from 'express';
import type { Config } from '../../config.js';
import { ServiceError } from '../../errors.js';
import { sameSecret } from '../monitoring/admin-auth.js';

export function demoAllowed(config: Config, req: Request): boolean {
  const token = req.headers['x-demo-token'];
  if (typeof token === 'string' && sameSecret(token, config.demoToken)) return true;
  const origins = [req.headers.origin, req.headers.referer].filter((v): v is string => typeof v === 'string');
  return origins.some((value) => {
    try {
      return config.demoOrigins.includes(new URL(value).origin);
    } catch {
      return false;
    }
  });
}

export function assertDemoAllowed(config: Config, req: Request): void {
  if (!demoAllowed(config, req)) throw new ServiceError('forbidden', 'Demo access requires a valid X-Demo-Token or an allowed Origin/Referer');
}

/**
 * Whether `src` lies under one of DEMO_SOURCES, judged on the parsed URL: same origin, and the
 * path equal to a source's path or below it at a segment boundary. A path with dot segments
 * (`..`, `.`, also as `%2e`) or encoded separators is refused outright: URL parsing resolves
 * them, so the image found would not be the one the caller's string seems to name.
 */
export function demoSourceAllowed(src: string, sources: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(src);
  } catch {
    return false;
  }
  const rawPath = src.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]*/i, '').split(/[?#]/)[0];
  if (/\\|%2f|%5c/i.test(rawPath)) return false;
  const dotSegment = rawPath.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
  if (dotSegment) return false;
  return sources.some((source) => {
    let prefix: URL;
    try {
      prefix = new URL(source);
    } catch {
      return false;
    }
    const base = prefix.pathname.replace(/\/+$/, '');
    return url.origin === prefix.origin && (url.pathname === base || url.pathname.startsWith(base + '/'));
  });
}
