// GET /cdn/{image_id}: an image by its id, public by design (the spec declares no key).
import type { Request, RequestHandler, Response } from 'express';
import type { AuthenticatedUser } from '../../catalog/api-keys.js';
import type { ImageDoc } from '../../catalog/models/image.model.js';
import { ServiceError } from '../../errors.js';
import { PRESETS_ONLY_PARAMS } from '../../imaging/params.js';
import { apiKeyOf, type KeyCache } from '../middleware/auth.js';
import { inputOf } from '../middleware/validate.js';
import { cdnServeInputs } from '../schemas/transform.schemas.js';
import { applyClientHints, CLIENT_HINTS } from '../services/client-hints.js';
import { givenNames, serveDerivative, serveKeyless } from '../services/derivative-responder.js';
import { dependOn } from '../services/hit-memo.js';
import { capKeylessPlan } from '../services/keyless-limits.js';
import { isSignedQuery, verifySignedQuery } from '../services/signed-request.js';
import { findImageById, negotiationFor, prepareTransform } from '../services/transform-service.js';
import type { WebDeps } from '../web-deps.js';

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
 * Existing derivatives are served freely, like files behind a CDN. Without the owner's key or
 * signature, outputs are capped (no side above the original's or KEYLESS_MAX_SIDE) and creating
 * new ones (and asking for unknown images) is rate-limited per IP (`limit`,
 * PUBLIC_RATE_LIMIT_PER_MIN) and capped per image.
 */
export function cdnServeController(deps: WebDeps, keys: KeyCache, limit: RequestHandler) {
  const consume = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) => {
      void limit(req, res, (err?: unknown) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve()));
    });
  return async (req: Request, res: Response) => {
    const { params, query: checked } = inputOf(res, cdnServeInputs);
    let image: ImageDoc;
    try {
      image = await findImageById(deps, params.image_id);
    } catch (err) {
      await consume(req, res);
      throw err;
    }
    let query = checked;
    const given = givenNames(req);
    const negotiation = negotiationFor(image, req.headers.accept ?? '', 'B');
    if (await ownerCredentialOf(req, res, keys, image)) {
      await serveDerivative(deps, req, res, await prepareTransform(deps, image, 'B', query, negotiation, { given }), 'api');
      return;
    }
    let vary: string[] = [];
    if (deps.config.publicPresetsOnly) {
      // With PUBLIC_PRESETS_ONLY, the keyless route takes only the registry's presets-only parameters.
      const refused = given.filter((name) => !PRESETS_ONLY_PARAMS.includes(name));
      if (refused.length > 0) throw new ServiceError('forbidden', `This service answers /cdn/{id} with presets only (${PRESETS_ONLY_PARAMS.join(', ')}); not allowed: ${refused.join(', ')}`);
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
