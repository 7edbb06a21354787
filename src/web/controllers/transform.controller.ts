// Transforming a stored image: GET /transform (JSON result, or bytes for a signed URL),
// GET /image/{path} (the caller's own image as bytes) and the public demo GET /image/demo/{path}.
import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../../errors.js';
import { formatFromExtension } from '../../imaging/params.js';
import { QUEUE_NAMES } from '../../jobs/job-contract.js';
import { apiKeyOf, currentUser, type KeyCache } from '../middleware/auth.js';
import { inputOf } from '../middleware/validate.js';
import { imageDemoInputs, imagePathInputs, transformInputs } from '../schemas/transform.schemas.js';
import { assertDemoAllowed, demoSourceAllowed } from '../services/demo-gate.js';
import { givenNames, serveDerivative, serveKeyless } from '../services/derivative-responder.js';
import { sendStoredImage, setRenderHeaders } from '../services/image-responder.js';
import { capKeylessPlan } from '../services/keyless-limits.js';
import { priorityOf, wantsAsync } from '../services/request-mode.js';
import { jobAccepted, transformBody } from '../services/response-bodies.js';
import { isSignedQuery, verifySignedQuery } from '../services/signed-request.js';
import { derivativeCacheControl, ensureDerivative, expectDerivativeHit, findOwnedImageByRef, negotiationFor, parseBaseImageUrl, prepareTransform, transformJob } from '../services/transform-service.js';
import type { WebDeps } from '../web-deps.js';

/** GET /transform authenticates by X-API-Key (answered with JSON) or by a signed URL (browsers, answered with bytes). */
export function transformAuthentication(keys: KeyCache) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = apiKeyOf(req);
    const rawQuery = req.query as Record<string, string | undefined>;
    if (key) {
      res.locals.user = await keys.lookup(key);
      if (!res.locals.user) throw new ServiceError('unauthorized', 'Invalid API key');
    } else if (isSignedQuery(rawQuery)) {
      res.locals.user = await verifySignedQuery(keys, rawQuery, res);
      res.locals.signed = true;
    } else {
      throw new ServiceError('unauthorized', 'Missing API key (send X-API-Key) or URL signature');
    }
    next();
  };
}

/** GET /transform: JSON for API callers (X-API-Key); image bytes for signed URLs (browsers). */
export function transformController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    const user = currentUser(res);
    const signed = res.locals.signed === true;
    const { query } = inputOf(res, transformInputs);
    const ref = parseBaseImageUrl(query.src, deps.config.cdnUrl);
    if (!ref) throw new ServiceError('bad_request', `"src" must be the URL of an uploaded image: ${deps.config.cdnUrl}/<user_id>/images/<public_id>.<ext>`);
    const image = await findOwnedImageByRef(deps, user.userId, ref);
    const accept = req.headers.accept ?? '';
    const given = givenNames(req);
    const prepared = await prepareTransform(deps, image, 'A', query, negotiationFor(image, accept, 'A'), { given });
    if (signed) {
      // A browser: negotiate from its Accept header (not the JSON default) and send bytes.
      const forBrowser = await prepareTransform(deps, image, 'A', query, { ...negotiationFor(image, accept, 'A'), preferWebpWhenUnsure: false }, { given });
      expectDerivativeHit(deps, res, forBrowser);
      const outcome = await ensureDerivative(deps, forBrowser, 'api');
      await sendStoredImage(deps, req, res, outcome.key, {
        ownerId: image.userId,
        // Immutable only when the signed URL names the version (srcset URLs do).
        cacheControl: derivativeCacheControl(deps, forBrowser),
        varyAccept: forBrowser.dependsOnAccept,
        object: outcome.object,
      });
      return;
    }
    if (prepared.dependsOnAccept) res.setHeader('Vary', 'Accept');
    if (wantsAsync(req) && !(await deps.derivatives.stat(prepared.key))) {
      await deps.limits.assertMayTransform(image.userId);
      const { jobId, data } = transformJob(prepared, 'api');
      await deps.jobs.enqueue(QUEUE_NAMES.transform, data, { jobId, priority: priorityOf(req) });
      const accepted = jobAccepted(deps.config.baseUrl, jobId);
      res.status(202).setHeader('Location', accepted.status_url);
      res.json(accepted);
      return;
    }
    const outcome = await ensureDerivative(deps, prepared, 'api', priorityOf(req));
    res.setHeader('X-Cache', outcome.cached ? 'HIT' : 'MISS');
    if (outcome.object) setRenderHeaders(res, outcome.object);
    res.json(transformBody(deps.storage, outcome));
  };
}

/** The vanity `{path}` may name the output format by its extension. */
function formatFromVanityPath(req: Request): ReturnType<typeof formatFromExtension> {
  const raw = (req.params as Record<string, string | string[] | undefined>).path;
  const p = Array.isArray(raw) ? raw.join('/') : (raw ?? '');
  const m = /\.([A-Za-z0-9]+)$/.exec(p);
  return m ? formatFromExtension(m[1]) : undefined;
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
    const { query } = inputOf(res, imagePathInputs);
    const image = await findOwnedImageByRef(deps, user.userId, requireSrcRef(deps, query.src));
    const prepared = await prepareTransform(deps, image, 'B', query, negotiationFor(image, req.headers.accept ?? '', 'B', formatFromVanityPath(req)), { given: givenNames(req) });
    await serveDerivative(deps, req, res, prepared, 'api');
  };
}

/** GET /image/demo/{path}: public demo, gated by token or origin, sources limited, keyless limits, own per-image budget. */
export function imageDemoController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    assertDemoAllowed(deps.config, req);
    const { query } = inputOf(res, imageDemoInputs);
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
