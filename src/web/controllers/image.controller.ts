// Set B image routes: GET /image/test, GET /image/{path}, GET /image/demo/{path}, GET /cdn/{image_id}.
import type { Request, RequestHandler, Response } from 'express';
import type { ImageDoc } from '../../catalog/models/image.model.js';
import type { Config } from '../../config.js';
import { ServiceError } from '../../errors.js';
import { formatFromExtension, type TransformPlan, type TransformRequest } from '../../imaging/params.js';
import { currentUser } from '../middleware/auth.js';
import { sendStoredImage } from '../services/image-responder.js';
import { applyClientHints, CLIENT_HINTS } from '../services/client-hints.js';
import { derivativeCacheControl, ensureDerivative, findImageById, findOwnedImageByRef, negotiationFor, parseBaseImageUrl, prepareTransform, type PreparedTransform } from '../services/transform-service.js';
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

async function serveDerivative(deps: WebDeps, req: Request, res: Response, prepared: PreparedTransform, origin: 'api' | 'public', vary: string[] = []) {
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

function requireSrcRef(deps: WebDeps, src: string) {
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

export const DEMO_MAX_SIDE = 2000;

export function demoAllowed(config: Config, req: Request): boolean {
  const token = req.headers['x-demo-token'];
  if (config.demoToken && typeof token === 'string' && token === config.demoToken) return true;
  const origins = [req.headers.origin, req.headers.referer].filter((v): v is string => typeof v === 'string');
  return origins.some((value) => {
    try {
      return config.demoOrigins.includes(new URL(value).origin);
    } catch {
      return false;
    }
  });
}

/** Output size of a resize plan on a width×height source (sharp's rules for one side or a box). */
function resizedSize(width: number, height: number, plan: TransformPlan): [number, number] {
  if (plan.width !== undefined && plan.height === undefined) return [plan.width, Math.round((height * plan.width) / width)];
  if (plan.height !== undefined && plan.width === undefined) return [Math.round((width * plan.height) / height), plan.height];
  if (plan.width === undefined || plan.height === undefined) return [width, height];
  if (plan.fit !== 'inside' && plan.fit !== 'outside') return [plan.width, plan.height];
  const pick = plan.fit === 'inside' ? Math.min : Math.max;
  const scale = pick(plan.width / width, plan.height / height);
  return [Math.round(width * scale), Math.round(height * scale)];
}

/** GET /image/demo/{path}: public demo, gated by token or origin, sources limited, output ≤ 2000 px. */
export function imageDemoController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    if (!demoAllowed(deps.config, req)) throw new ServiceError('forbidden', 'Demo access requires a valid X-Demo-Token or an allowed Origin/Referer');
    const query = res.locals.query as SetBQuery & { src: string };
    if (!deps.config.demoSources.some((prefix) => query.src.startsWith(prefix.endsWith('/') ? prefix : prefix + '/'))) {
      throw new ServiceError('forbidden', 'This source is not allowed on the demo route');
    }
    const ref = requireSrcRef(deps, query.src);
    const image = await deps.images.byRef(ref.userId, ref.publicId);
    if (!image) throw new ServiceError('not_found', 'Image not found');
    const capped = (plan: TransformPlan) => {
      if (plan.width === undefined && plan.height === undefined) {
        plan.width = DEMO_MAX_SIDE;
        plan.height = DEMO_MAX_SIDE;
        plan.fit = 'within';
        return;
      }
      if (plan.width !== undefined) plan.width = Math.min(plan.width, DEMO_MAX_SIDE);
      if (plan.height !== undefined) plan.height = Math.min(plan.height, DEMO_MAX_SIDE);
      // One side alone keeps the aspect ratio and `outside` covers the box, so the other side can
      // still pass the cap: then the largest image of the same aspect ratio within the cap.
      const [w, h] = resizedSize(image.width, image.height, plan);
      if (Math.max(w, h) > DEMO_MAX_SIDE) {
        plan.width = DEMO_MAX_SIDE;
        plan.height = DEMO_MAX_SIDE;
        plan.fit = 'inside';
      }
    };
    const prepared = await prepareTransform(deps, image, 'B', query, negotiationFor(image, req.headers.accept ?? '', 'B', formatFromVanityPath(req)), {
      given: givenNames(req),
      keyless: true,
      adjust: capped,
    });
    await serveDerivative(deps, req, res, prepared, 'public');
  };
}

/** With PUBLIC_PRESETS_ONLY, the only parameters the keyless route takes. */
const PRESETS_ONLY_ALLOWED = new Set(['preset', 'f', 'v']);

/**
 * GET /cdn/{image_id}: public by design (the spec declares no key). Existing derivatives are
 * served freely, like files behind a CDN; creating new ones (and asking for unknown images) is
 * rate-limited per IP (`limit`, PUBLIC_RATE_LIMIT_PER_MIN) and capped per image.
 */
export function cdnServeController(deps: WebDeps, maxPublicDerivatives: number, limit: RequestHandler) {
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
    const prepared = await prepareTransform(deps, image, 'B', query, negotiationFor(image, req.headers.accept ?? '', 'B'), { given: [...given, ...(vary.length ? ['w', 'dpr'] : [])], keyless: true });
    let admitted: string | null = null;
    if (!(await deps.derivatives.stat(prepared.key))) {
      await consume(req, res);
      admitted = await admitPublicDerivative(deps, image, prepared.key, maxPublicDerivatives);
    }
    try {
      await serveDerivative(deps, req, res, prepared, 'public', vary);
    } catch (err) {
      // Not created after all: give the slot back.
      if (admitted) await deps.redis.srem(admitted, prepared.key).catch(() => undefined);
      throw err;
    }
  };
}

// Admits a new public derivative atomically (a count-then-create lets concurrent requests for
// different sizes all pass). KEYS[1]: recent admissions of the image; ARGV: the derivative key,
// the cap, its TTL, then the keys of the image's public derivatives already in the catalog. The
// union of both is what counts: a derivative finished after the catalog read is still in the set.
const ADMIT_PUBLIC_DERIVATIVE = `
local known, n = {}, 0
for i = 4, #ARGV do if not known[ARGV[i]] then known[ARGV[i]] = true; n = n + 1 end end
if known[ARGV[1]] or redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
for _, k in ipairs(redis.call('SMEMBERS', KEYS[1])) do if not known[k] then known[k] = true; n = n + 1 end end
if n >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1`;

/** Returns the Redis set the key was admitted to, or throws 403 when the image is at its cap. */
async function admitPublicDerivative(deps: WebDeps, image: ImageDoc, key: string, max: number): Promise<string> {
  const refuse = (count: number) =>
    new ServiceError('forbidden', `This image already has ${count} public derivatives (limit ${max}); use an existing size or an API key`);
  const existing = await deps.catalog.derivatives.find({ imageId: image._id, origin: 'public' }, { _id: 1 }).limit(max).lean();
  if (existing.length >= max) throw refuse(existing.length);
  const setKey = `pictor:pubderiv:${String(image._id)}:${image.version}`;
  // Kept well past a job's time limit, so every admitted derivative is in the catalog by then.
  const ttlSeconds = Math.max(600, Math.ceil((2 * deps.config.jobTimeoutMs) / 1000));
  const ok = await deps.redis.eval(ADMIT_PUBLIC_DERIVATIVE, 1, setKey, key, String(max), String(ttlSeconds), ...existing.map((d) => d._id));
  if (ok !== 1) throw refuse(max);
  return setKey;
}
