// X-API-Key (and signed-URL key id) authentication with a short in-process cache (API_KEY_CACHE_MS)
// so a hot path does not hit the catalog per request; revocation takes effect within that window.
import type { NextFunction, Request, Response } from 'express';
import { authenticateKey, credentialById, hashKey, type AuthenticatedUser } from '../../catalog/api-keys.js';
import type { Catalog } from '../../catalog/catalog.js';
import { ServiceError } from '../../errors.js';
import { ExpiringMap } from '../../expiring-map.js';
import { currentSet } from './path-set.js';

export class KeyCache {
  private readonly entries: ExpiringMap<AuthenticatedUser | null>;
  constructor(private readonly catalog: Catalog, ttlMs: number) {
    this.entries = new ExpiringMap(ttlMs, 10_000);
  }

  /** The user of an API key (X-API-Key). */
  lookup(key: string): Promise<AuthenticatedUser | null> {
    return this.cached(hashKey(key), () => authenticateKey(this.catalog, key));
  }

  /** The user of a key id (`kid` of a signed URL), with the secret that verifies it. */
  byKeyId(keyId: string): Promise<AuthenticatedUser | null> {
    return this.cached(`kid:${keyId}`, () => credentialById(this.catalog, keyId));
  }

  private async cached(id: string, load: () => Promise<AuthenticatedUser | null>): Promise<AuthenticatedUser | null> {
    const hit = this.entries.get(id);
    if (hit !== undefined) return hit;
    const user = await load();
    this.entries.set(id, user);
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
      if (currentSet(res) === 'B') {
        throw new ServiceError('invalid_parameter', 'Missing X-API-Key header', {
          issues: [{ loc: ['header', 'x-api-key'], msg: 'Field required', type: 'missing' }],
        });
      }
      throw new ServiceError('unauthorized', 'Missing API key (send it in the X-API-Key header)');
    }
    const user = await keys.lookup(key);
    if (!user) throw new ServiceError('unauthorized', 'Invalid API key');
    res.locals.user = user;
    next();
  };
}

export function currentUser(res: Response): AuthenticatedUser {
  const user = res.locals.user as AuthenticatedUser | undefined;
  if (!user) throw new ServiceError('unauthorized', 'Not authenticated');
  return user;
}
