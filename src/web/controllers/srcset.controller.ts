// GET /generate/srcset: srcset, sizes and a default URL of signed /transform URLs (spec 4.1).
import type { Request, Response } from 'express';
import type { SrcsetResult } from '../../api/response-types.js';
import { ServiceError } from '../../errors.js';
import { DEFAULT_FORMAT, DEFAULT_QUALITY, MAX_SIDE, type OutputFormat } from '../../imaging/params.js';
import { signedTransformUrl } from '../../imaging/signing.js';
import { SRCSET_WIDTHS } from '../../imaging/srcset.js';
import { AUTO_WIDTH_DEFAULTS, chooseAutoWidths, MAX_AUTO_WIDTH } from '../../imaging/srcset-widths.js';
import { byteCurveOf } from '../../jobs/image-analysis.js';
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
    let widths: number[];
    if (query.w === 'auto') {
      const { bytes_step = AUTO_WIDTH_DEFAULTS.bytes_step, max_images = AUTO_WIDTH_DEFAULTS.max_images } = query;
      const max_w = query.max_w ?? Math.min(image.width, MAX_AUTO_WIDTH);
      // A default max_w below the default min_w (a narrow original) narrows min_w; given ones must agree.
      const min_w = query.min_w ?? Math.min(AUTO_WIDTH_DEFAULTS.min_w, max_w);
      if (min_w > max_w) throw new ServiceError('bad_request', `"min_w" (${min_w}) must not exceed "max_w" (${max_w})`);
      // f=auto answers each browser in its format; the steps are measured in WebP (docs/api.md).
      const format = f === 'auto' ? 'webp' : f === 'jpg' ? 'jpeg' : (f as OutputFormat);
      const curve = await byteCurveOf(deps, image, format, q);
      widths = chooseAutoWidths(curve, { minWidth: min_w, maxWidth: max_w, bytesStep: bytes_step, maxImages: max_images });
    } else {
      // `w=` given but empty is an empty list (400), not "use the default widths".
      const parts = (req.query.w === '' ? '' : (query.w ?? SRCSET_WIDTHS.default.join(','))).split(',').map((s) => s.trim());
      if (parts.length < 1 || parts.length > SRCSET_WIDTHS.maxCount || parts.some((p) => !/^\d{1,4}$/.test(p) || Number(p) < 1 || Number(p) > MAX_SIDE)) {
        throw new ServiceError('bad_request', `"w" must be auto or 1 to ${SRCSET_WIDTHS.maxCount} comma-separated integers between 1 and ${MAX_SIDE}`);
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
    } satisfies SrcsetResult);
  };
}
