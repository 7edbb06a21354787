// Set A: POST /upload, GET /transform, GET /generate/srcset (spec 4.1).
import type { Request, Response } from 'express';
import type { AuthenticatedUser } from '../../catalog/api-keys.js';
import { ServiceError } from '../../errors.js';
import { DEFAULT_FORMAT, DEFAULT_QUALITY, MAX_SIDE, type OutputFormat, type TransformRequest } from '../../imaging/params.js';
import { signedTransformUrl } from '../../imaging/signing.js';
import { apiKeyOf, currentUser, type KeyCache } from '../middleware/auth.js';
import { AUTO_WIDTH_DEFAULTS, chooseAutoWidths, MAX_AUTO_WIDTH } from '../../imaging/srcset-widths.js';
import { byteCurveOf } from '../../jobs/image-analysis.js';
import { setATransformQuery, srcsetQuery } from '../schemas/transform.schemas.js';
import { sendStoredImage, setRenderHeaders } from '../services/image-responder.js';
import { handleUpload } from '../services/upload-service.js';
import { priorityOf, wantsAsync } from '../services/request-mode.js';
import { isSignedQuery, verifySignedQuery } from '../services/signed-request.js';
import { transformBody } from '../services/response-bodies.js';
import { QUEUE_NAMES } from '../../jobs/job-contract.js';
import { imageDescription } from '../services/response-bodies.js';
import { derivativeCacheControl, ensureDerivative, expectDerivativeHit, findOwnedImageByRef, negotiationFor, parseBaseImageUrl, prepareTransform, transformJob } from '../services/transform-service.js';
import { compile, queryObject, validationError } from '../validation.js';
import type { WebDeps } from '../web-deps.js';

const transformQuery = compile<TransformRequest & { src: string; kid?: string; sig?: string }>(setATransformQuery);
const srcsetSchema = compile<{ src: string; w?: string; f?: string; q?: number | string; sizes?: string; ttl?: number; min_w?: number; max_w?: number; bytes_step?: number; max_images?: number }>(srcsetQuery);

export function uploadController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    const user = currentUser(res);
    const publicId = typeof req.query.public_id === 'string' ? req.query.public_id : undefined;
    await handleUpload(deps, req, res, user, { api: 'A', publicId });
  };
}

function validateTransformQuery(req: Request) {
  const raw = queryObject(req.query as Record<string, unknown>);
  const checked = transformQuery.check(raw, 'query');
  if (!checked.ok) {
    const srcIssue = checked.issues.find((i) => i.loc[1] === 'src');
    if (srcIssue) throw new ServiceError('bad_request', `Missing or invalid "src": ${srcIssue.msg}`);
    throw validationError(checked.issues);
  }
  return checked.value;
}

/** GET /transform: JSON for API callers (X-API-Key); image bytes for signed URLs (browsers). */
export function transformController(deps: WebDeps, keys: KeyCache) {
  return async (req: Request, res: Response) => {
    const key = apiKeyOf(req);
    const rawQuery = req.query as Record<string, string | undefined>;
    let user: AuthenticatedUser | null;
    let signed = false;
    if (key) {
      user = await keys.lookup(key);
      if (!user) throw new ServiceError('unauthorized', 'Invalid API key');
    } else if (isSignedQuery(rawQuery)) {
      user = await verifySignedQuery(keys, rawQuery, res);
      signed = true;
    } else {
      throw new ServiceError('unauthorized', 'Missing API key (send X-API-Key) or URL signature');
    }
    const query = validateTransformQuery(req);
    const ref = parseBaseImageUrl(query.src, deps.config.cdnUrl);
    if (!ref) throw new ServiceError('bad_request', `"src" must be the URL of an uploaded image: ${deps.config.cdnUrl}/<user_id>/images/<public_id>.<ext>`);
    const image = await findOwnedImageByRef(deps, user.userId, ref);
    const accept = req.headers.accept ?? '';
    const given = Object.keys(rawQuery);
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
      const statusUrl = `${deps.config.baseUrl}/jobs/${jobId}`;
      res.status(202).setHeader('Location', statusUrl);
      res.json({ job_id: jobId, state: 'queued', status_url: statusUrl });
      return;
    }
    const outcome = await ensureDerivative(deps, prepared, 'api', priorityOf(req));
    res.setHeader('X-Cache', outcome.cached ? 'HIT' : 'MISS');
    if (outcome.object) setRenderHeaders(res, outcome.object);
    res.json(transformBody(deps.storage, outcome));
  };
}

const MAX_SRCSET_WIDTHS = 20;

export function srcsetController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    const user = currentUser(res);
    const checked = srcsetSchema.check(queryObject(req.query as Record<string, unknown>), 'query');
    if (!checked.ok) {
      const issue = checked.issues[0];
      throw new ServiceError('bad_request', `Invalid "${String(issue.loc[1])}": ${issue.msg}`);
    }
    const { src, f = DEFAULT_FORMAT, q = DEFAULT_QUALITY, sizes, ttl } = checked.value;
    const cdn = deps.config.cdnUrl;
    const ref = parseBaseImageUrl(src, cdn);
    if (!src.startsWith(cdn + '/') || (cdn.startsWith('https:') && !src.startsWith('https:')) || !ref) {
      throw new ServiceError('invalid_parameter', `"src" must be an image URL on the delivery domain (${cdn}/…)`);
    }
    // The URLs name the original's version: immutable, and changed by a replacement.
    const image = await findOwnedImageByRef(deps, user.userId, ref);
    let widths: number[];
    if (checked.value.w === 'auto') {
      const { bytes_step = AUTO_WIDTH_DEFAULTS.bytes_step, max_images = AUTO_WIDTH_DEFAULTS.max_images } = checked.value;
      const max_w = checked.value.max_w ?? Math.min(image.width, MAX_AUTO_WIDTH);
      // A default max_w below the default min_w (a narrow original) narrows min_w; given ones must agree.
      const min_w = checked.value.min_w ?? Math.min(AUTO_WIDTH_DEFAULTS.min_w, max_w);
      if (min_w > max_w) throw new ServiceError('bad_request', `"min_w" (${min_w}) must not exceed "max_w" (${max_w})`);
      // f=auto answers each browser in its format; the steps are measured in WebP (docs/api.md).
      const format = f === 'auto' ? 'webp' : f === 'jpg' ? 'jpeg' : (f as OutputFormat);
      const curve = await byteCurveOf(deps, image, format, q);
      widths = chooseAutoWidths(curve, { minWidth: min_w, maxWidth: max_w, bytesStep: bytes_step, maxImages: max_images });
    } else {
      // `w=` given but empty is an empty list (400), not "use the default widths".
      const parts = (req.query.w === '' ? '' : (checked.value.w ?? '400,800,1200')).split(',').map((s) => s.trim());
      if (parts.length < 1 || parts.length > MAX_SRCSET_WIDTHS || parts.some((p) => !/^\d{1,4}$/.test(p) || Number(p) < 1 || Number(p) > MAX_SIDE)) {
        throw new ServiceError('bad_request', `"w" must be auto or 1 to ${MAX_SRCSET_WIDTHS} comma-separated integers between 1 and ${MAX_SIDE}`);
      }
      widths = parts.map(Number);
    }
    const credential = { kid: user.keyId, secret: user.secret };
    // With ttl the URLs carry a signed expiry; without it they stay valid until the key is revoked.
    const exp = ttl !== undefined ? Math.floor(Date.now() / 1000) + ttl : undefined;
    const urls = widths.map((w) => signedTransformUrl(deps.config.baseUrl, { src, w, f, q, v: image.version, exp }, credential));
    const largest = Math.max(...widths);
    res.json({
      srcset: urls.map((u, i) => `${u} ${widths[i]}w`).join(', '),
      sizes: sizes ?? `(max-width: ${largest}px) 100vw, ${largest}px`,
      default: urls[Math.floor((widths.length - 1) / 2)],
      ...imageDescription(image),
    });
  };
}
