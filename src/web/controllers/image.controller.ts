// Set B image routes: GET /image/test, GET /image/{path}, GET /image/demo/{path}, GET /cdn/{image_id}.
import type { Request, RequestHandler, Response } from 'express';
import type { ImageDoc } from '../../catalog/models/image.model.js';
import type { Config } from '../../config.js';
import { ServiceError } from '../../errors.js';
import type { AuthenticatedUser } from '../../catalog/api-keys.js';
import type { DerivativeOrigin } from '../../catalog/models/derivative.model.js';
import { formatFromExtension, type TransformRequest } from '../../imaging/params.js';
import { apiKeyOf, currentUser, type KeyCache } from '../middleware/auth.js';
import { sameSecret } from '../monitoring/admin-auth.js';
import { admitKeylessDerivative, capKeylessPlan } from '../services/keyless-limits.js';
import { isSignedQuery, verifySignedQuery } from '../services/signed-request.js';
import { sendStoredImage } from '../services/image-responder.js';
import { dependOn } from '../services/hit-memo.js';
import { applyClientHints, CLIENT_HINTS } from '../services/client-hints.js';
import { derivativeCacheControl, ensureDerivative, expectDerivativeHit, findImageById, findOwnedImageByRef, negotiationFor, parseBaseImageUrl, prepareTransform, type PreparedTransform } from '../services/transform-service.js';
import type { WebDeps } from '../web-deps.js';

type SetBQuery = TransformRequest & { src?: string };

export function imageTestController() {
  return (_req: Request, res: Response) => {
    const user = currentUser(res);
    res.json({ valid: true, user_id: user.userId, plan: user.plan });
  };
}

/** The vanity `{path}` may name the output format by its extension. */
function formatFromVanityPath(req: Request): ReturnType<typeof formatFromExtension> {
  const raw = (req.params as Record<string, string | string[] | undefined>).path;
  const p = Array.isArray(raw) ? raw.join('/') : (raw ?? '');
  const m = /\.([A-Za-z0-9]+)$/.exec(p);
  return m ? formatFromExtension(m[1]) : undefined;
}

async function serveDerivative(deps: WebDeps, req: Request, res: Response, prepared: PreparedTransform, origin: DerivativeOrigin, vary: string[] = []) {
  // The demo route's answer also depends on Origin/Referer/X-Demo-Token, which the hit path does not key on.
  if (origin !== 'demo') expectDerivativeHit(deps, res, prepared);
  const outcome = await ensureDerivative(deps, prepared, origin);
  res.setHeader('X-Cache', outcome.cached ? 'HIT' : 'MISS');
  await sendStoredImage(deps, req, res, outcome.key, {
    ownerId: prepared.image.userId,
    cacheControl: derivativeCacheControl(deps, prepared),
    varyAccept: prepared.dependsOnAccept,
    vary,
    object: outcome.object,
  });
}

/** Names of the query parameters the caller sent (the rest of res.locals.query are schema defaults). */
function givenNames(req: Request): string[] {
  return Object.keys(req.query as Record<string, unknown>);
}

/** The caller's image reference in `src`; 422 (loc query.src) when it names no image of this service. */
export function requireSrcRef(deps: WebDeps, src: string) {
  const ref = parseBaseImageUrl(src, deps.config.cdnUrl);
  if (!ref) {
    throw new ServiceError('invalid_parameter', 'src must be the URL of an uploaded image', {
      issues: [{ loc: ['query', 'src'], msg: `must be an image URL of this service (${deps.config.cdnUrl}/<user_id>/images/<public_id>.<ext>)`, type: 'value_error' }],
    });
  }
  return ref;
}

/** GET /image/{path}: the caller's own base image, transformed, as bytes. */
export function imagePathController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    const user = currentUser(res);
    const query = res.locals.query as SetBQuery & { src: string };
    const image = await findOwnedImageByRef(deps, user.userId, requireSrcRef(deps, query.src));
    const prepared = await prepareTransform(deps, image, 'B', query, negotiationFor(image, req.headers.accept ?? '', 'B', formatFromVanityPath(req)), { given: givenNames(req) });
    await serveDerivative(deps, req, res, prepared, 'api');
  };
}

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

/** GET /image/demo/{path}: public demo, gated by token or origin, sources limited, keyless limits, own per-image budget. */
export function imageDemoController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    if (!demoAllowed(deps.config, req)) throw new ServiceError('forbidden', 'Demo access requires a valid X-Demo-Token or an allowed Origin/Referer');
    const query = res.locals.query as SetBQuery & { src: string };
    if (!demoSourceAllowed(query.src, deps.config.demoSources)) throw new ServiceError('forbidden', 'This source is not allowed on the demo route');
    const ref = requireSrcRef(deps, query.src);
    const image = await deps.images.byRef(ref.userId, ref.publicId);
    if (!image) throw new ServiceError('not_found', 'Image not found');
    const prepared = await prepareTransform(deps, image, 'B', query, negotiationFor(image, req.headers.accept ?? '', 'B', formatFromVanityPath(req)), {
      given: givenNames(req),
      keyless: true,
      adjust: (plan) => capKeylessPlan(plan, image, deps.config.keylessMaxSide),
    });
    await serveKeyless(deps, req, res, prepared, 'demo', deps.config.demoDerivativesPerImage);
  };
}

/** Serves a keyless derivative: existing ones freely; a new one only within the image's budget for `origin`. */
async function serveKeyless(
  deps: WebDeps,
  req: Request,
  res: Response,
  prepared: PreparedTransform,
  origin: 'public' | 'demo',
  budget: number,
  beforeNew?: () => Promise<void>,
  vary: string[] = [],
) {
  let release: (() => Promise<void>) | null = null;
  if (!(await deps.derivatives.stat(prepared.key))) {
    await beforeNew?.();
    release = await admitKeylessDerivative(deps, prepared.image, prepared.key, origin, budget);
  }
  try {
    await serveDerivative(deps, req, res, prepared, origin, vary);
  } catch (err) {
    // Not created after all: give the slot back.
    await release?.();
    throw err;
  }
}

/** With PUBLIC_PRESETS_ONLY, the only parameters the keyless route takes. */
const PRESETS_ONLY_ALLOWED = new Set(['preset', 'f', 'v']);

/**
 * The caller of /cdn/{id} who may skip the keyless limits: the image's owner, by X-API-Key or by
 * a signature of the query (with `src` = the image id). A wrong key or signature is 401; another
 * user's valid key is simply keyless.
 */
async function ownerCredentialOf(req: Request, res: Response, keys: KeyCache, image: ImageDoc): Promise<boolean> {
  const key = apiKeyOf(req);
  const raw = req.query as Record<string, string | undefined>;
  let user: AuthenticatedUser | null = null;
  if (key) {
    const found = await keys.lookup(key);
    if (!found) throw new ServiceError('unauthorized', 'Invalid API key');
    dependOn(res, () => keys.holdsKey(key, found));
    user = found;
  } else if (isSignedQuery(raw)) {
    user = await verifySignedQuery(keys, { ...raw, src: String(image._id) } as typeof raw & { kid: string; sig: string }, res);
  }
  return user !== null && user.userId === image.userId;
}

/**
 * GET /cdn/{image_id}: public by design (the spec declares no key). Existing derivatives are
 * served freely, like files behind a CDN. Without the owner's key or signature, outputs are
 * capped (no side above the original's or KEYLESS_MAX_SIDE) and creating new ones (and asking
 * for unknown images) is rate-limited per IP (`limit`, PUBLIC_RATE_LIMIT_PER_MIN) and capped per image.
 */
export function cdnServeController(deps: WebDeps, keys: KeyCache, limit: RequestHandler) {
  const consume = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) => {
      void limit(req, res, (err?: unknown) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve()));
    });
  return async (req: Request, res: Response) => {
    let image: ImageDoc;
    try {
      image = await findImageById(deps, String(req.params.image_id));
    } catch (err) {
      await consume(req, res);
      throw err;
    }
    let query = res.locals.query as SetBQuery;
    const given = givenNames(req);
    const negotiation = negotiationFor(image, req.headers.accept ?? '', 'B');
    if (await ownerCredentialOf(req, res, keys, image)) {
      await serveDerivative(deps, req, res, await prepareTransform(deps, image, 'B', query, negotiation, { given }), 'api');
      return;
    }
    let vary: string[] = [];
    if (deps.config.publicPresetsOnly) {
      const refused = given.filter((name) => !PRESETS_ONLY_ALLOWED.has(name));
      if (refused.length > 0) throw new ServiceError('forbidden', `This service answers /cdn/{id} with presets only (preset, f, v); not allowed: ${refused.join(', ')}`);
    } else {
      res.setHeader('Accept-CH', CLIENT_HINTS.join(', '));
      const hinted = applyClientHints(req, query, image);
      query = hinted.query;
      vary = hinted.used;
    }
    const prepared = await prepareTransform(deps, image, 'B', query, negotiation, {
      given: [...given, ...(vary.length ? ['w', 'dpr'] : [])],
      keyless: true,
      adjust: (plan) => capKeylessPlan(plan, image, deps.config.keylessMaxSide),
    });
    await serveKeyless(deps, req, res, prepared, 'public', deps.config.publicDerivativesPerImage, () => consume(req, res), vary);
  };
}
