// GET /cdn/{image_id}/info (public, as /cdn/{image_id}) and GET /image/info?src= (keyed, the
// caller's own images): the original's info, computed once per version by an analyze job in a
// worker (the front door loads no sharp) and then read from the catalog.
import type { Request, RequestHandler, Response } from 'express';
import type { ImageInfoResult } from '../../api/response-types.js';
import type { ImageDoc } from '../../catalog/models/image.model.js';
import { imageInfoOf } from '../../jobs/image-analysis.js';
import { currentUser } from '../middleware/auth.js';
import { inputOf } from '../middleware/validate.js';
import { imageInfoInputs } from '../schemas/transform.schemas.js';
import { findImageById, findOwnedImageByRef } from '../services/transform-service.js';
import type { WebDeps } from '../web-deps.js';
import { requireSrcRef } from './transform.controller.js';

/** GET /cdn/{image_id}/info: anyone may ask, as for /cdn/{image_id}; an unknown id counts toward the per-IP limit. */
export function cdnInfoController(deps: WebDeps, limit: RequestHandler) {
  return async (req: Request, res: Response) => {
    let image: ImageDoc;
    try {
      image = await findImageById(deps, String(req.params.image_id));
    } catch (err) {
      await new Promise<void>((resolve, reject) => {
        void limit(req, res, (limited?: unknown) => (limited ? reject(limited instanceof Error ? limited : new Error(String(limited))) : resolve()));
      });
      throw err;
    }
    res.json((await imageInfoOf(deps, image)) satisfies ImageInfoResult);
  };
}

/** GET /image/info?src=: the caller's own image (another user's answers 404, as a missing one). */
export function imageInfoController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const { query } = inputOf(res, imageInfoInputs);
    res.json((await imageInfoOf(deps, await findOwnedImageByRef(deps, user.userId, requireSrcRef(deps, query.src)))) satisfies ImageInfoResult);
  };
}
