// X-API-Key (and signed-URL key id) authentication with a short in-process cache (API_KEY_CACHE_MS)
// so a hot path does not hit the catalog per request; revocation takes effect within that window.
import type { NextFunction, Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import { authenticateKey, credentialById, hashKey, type AuthenticatedUser } from '../../catalog/api-keys.js';
import type { Catalog } from '../../catalog/catalog.js';
import { ServiceError } from '../../errors.js';
import { dependOn } from '../services/hit-memo.js';
import { currentErrorShape } from './error-shape.js';

/** Most credentials kept; past it the least recently used goes first. */
const MAX_KEYS = 10_000;
/**
 * Unknown keys are remembered apart, in a small cache of their own, so that a client repeating a
 * bad key costs one catalog lookup per window while random bad keys only churn this cache and
 * can never evict a good key.
 */
const MAX_UNKNOWN_KEYS = 1_000;

export class KeyCache {
  private readonly known: LRUCache<string, AuthenticatedUser> | null;
  private readonly unknown: LRUCache<string, true> | null;
  /** API_KEY_CACHE_MS=0 turns the cache off (every request asks the catalog). */
  constructor(private readonly catalog: Catalog, ttlMs: number) {
    this.known = ttlMs > 0 ? new LRUCache({ max: MAX_KEYS, ttl: ttlMs }) : null;
    this.unknown = ttlMs > 0 ? new LRUCache({ max: MAX_UNKNOWN_KEYS, ttl: ttlMs }) : null;
  }

  /** The user of an API key (X-API-Key). */
  lookup(key: string): Promise<AuthenticatedUser | null> {
    return this.cached(hashKey(key), () => authenticateKey(this.catalog, key));
  }

  /** The user of a key id (`kid` of a signed URL), with the secret that verifies it. */
  byKeyId(keyId: string): Promise<AuthenticatedUser | null> {
    return this.cached(`kid:${keyId}`, () => credentialById(this.catalog, keyId));
  }

  /** A check that an API key still maps to this user in the cache (null when the cache is off). */
  holdsKey(key: string, user: AuthenticatedUser): (() => boolean) | null {
    return this.holds(hashKey(key), user);
  }

  /** A check that a key id still maps to this user (and secret) in the cache. */
  holdsKeyId(keyId: string, user: AuthenticatedUser): (() => boolean) | null {
    return this.holds(`kid:${keyId}`, user);
  }

  private holds(id: string, user: AuthenticatedUser): (() => boolean) | null {
    const known = this.known;
    return known ? () => known.get(id) === user : null;
  }

  private async cached(id: string, load: () => Promise<AuthenticatedUser | null>): Promise<AuthenticatedUser | null> {
    const hit = this.known?.get(id);
    if (hit) return hit;
    if (this.unknown?.get(id)) return null;
    const user = await load();
    if (user) this.known?.set(id, user);
    else this.unknown?.set(id, true);
    return user;
  }
}

export function apiKeyOf(req: Request): string | undefined {
  const v = req.headers['x-api-key'];
  return Array.isArray(v) ? v[0] : v;
}

export function requireApiKey(keys: KeyCache) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = apiKeyOf(req);
    if (!key) {
      if (currentErrorShape(res) === 'B') {
        throw new ServiceError('invalid_parameter', 'Missing X-API-Key header', {
          issues: [{ loc: ['header', 'x-api-key'], msg: 'Field required', type: 'missing' }],
        });
      }
      throw new ServiceError('unauthorized', 'Missing API key (send it in the X-API-Key header)');
    }
    const user = await keys.lookup(key);
    if (!user) throw new ServiceError('unauthorized', 'Invalid API key');
    dependOn(res, () => keys.holdsKey(key, user));
    res.locals.user = user;
    next();
  };
}

export function currentUser(res: Response): AuthenticatedUser {
  const user = res.locals.user as AuthenticatedUser | undefined;
  if (!user) throw new ServiceError('unauthorized', 'Not authenticated');
  return user;
}
