// Answers a prepared transform with the derivative's bytes, for the image routes (/image/…,
// /transform with a signed URL) and the keyless /cdn/{id}: the hit path is told what the answer
// depends on, and keyless callers create new derivatives only within the image's budget.
import type { Request, Response } from 'express';
import type { DerivativeOrigin } from '../../catalog/models/derivative.model.js';
import type { WebDeps } from '../web-deps.js';
import { sendStoredImage } from './image-responder.js';
import { admitKeylessDerivative } from './keyless-limits.js';
import { derivativeCacheControl, ensureDerivative, expectDerivativeHit, type PreparedTransform } from './transform-service.js';

export async function serveDerivative(deps: WebDeps, req: Request, res: Response, prepared: PreparedTransform, origin: DerivativeOrigin, vary: string[] = []): Promise<void> {
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

/** Serves a keyless derivative: existing ones freely; a new one only within the image's budget for `origin`. */
export async function serveKeyless(
  deps: WebDeps,
  req: Request,
  res: Response,
  prepared: PreparedTransform,
  origin: 'public' | 'demo',
  budget: number,
  beforeNew?: () => Promise<void>,
  vary: string[] = [],
): Promise<void> {
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

/** Names of the query parameters the caller sent (the rest of the validated query are schema defaults). */
export function givenNames(req: Request): string[] {
  return Object.keys(req.query as Record<string, unknown>);
}
