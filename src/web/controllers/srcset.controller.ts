// GET /generate/srcset: srcset, sizes and a default URL of signed /transform URLs (spec 4.1).
import type { Request, Response } from 'express';
import type { SrcsetResult } from '../../api/response-types.js';
import { ServiceError } from '../../errors.js';
import { DEFAULT_FORMAT, DEFAULT_QUALITY, MAX_SIDE } from '../../imaging/params.js';
import { signedTransformUrl } from '../../imaging/signing.js';
import { SRCSET_WIDTHS } from '../../imaging/srcset.js';
import { currentUser } from '../middleware/auth.js';
import { inputOf } from '../middleware/validate.js';
import { srcsetInputs } from '../schemas/transform.schemas.js';
import { imageDescription } from '../services/response-bodies.js';
import { findOwnedImageByRef, parseBaseImageUrl } from '../services/transform-service.js';
import type { WebDeps } from '../web-deps.js';

export function srcsetController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    const user = currentUser(res);
    const { query } = inputOf(res, srcsetInputs);
    const { src, f = DEFAULT_FORMAT, q = DEFAULT_QUALITY, sizes, ttl } = query;
    const cdn = deps.config.cdnUrl;
    const ref = parseBaseImageUrl(src, cdn);
    if (!src.startsWith(cdn + '/') || (cdn.startsWith('https:') && !src.startsWith('https:')) || !ref) {
      throw new ServiceError('invalid_parameter', `"src" must be an image URL on the delivery domain (${cdn}/…)`);
    }
    // The URLs name the original's version: immutable, and changed by a replacement.
    const image = await findOwnedImageByRef(deps, user.userId, ref);
    // `w=` given but empty is an empty list (400), not "use the default widths".
    const parts = (req.query.w === '' ? '' : (query.w ?? SRCSET_WIDTHS.default.join(','))).split(',').map((s) => s.trim());
    if (parts.length < 1 || parts.length > SRCSET_WIDTHS.maxCount || parts.some((p) => !/^\d{1,4}$/.test(p) || Number(p) < 1 || Number(p) > MAX_SIDE)) {
      throw new ServiceError('bad_request', `"w" must be 1 to ${SRCSET_WIDTHS.maxCount} comma-separated integers between 1 and ${MAX_SIDE}`);
    }
    const widths = parts.map(Number);
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
    } satisfies SrcsetResult);
  };
}
