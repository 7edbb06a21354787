// Bounds on the work a request without a key or signature can cause (public /cdn/{id}, the demo
// route): the output is never larger than the original in either side nor above a maximum side,
// and each image has a budget of new derivatives per route (origin). Existing derivatives are
// served freely, like files behind a CDN.
import { derivativeIdsOfOrigin } from '../../catalog/images.js';
import type { ImageDoc } from '../../catalog/models/image.model.js';
import type { DerivativeOrigin } from '../../catalog/models/derivative.model.js';
import { ServiceError } from '../../errors.js';
import { resizeSource, resizedSize } from '../../imaging/output-size.js';
import type { TransformPlan } from '../../imaging/params.js';
import type { WebDeps } from '../web-deps.js';

/**
 * Shrinks a keyless plan so that its picture is no wider or taller than the original (turned as
 * `rot` asks) and its output, padding included, has no side above `maxSide`. The requested box keeps its aspect ratio (a crop or letterbox looks the
 * same, only smaller), so every oversized request maps onto one of few derivatives. Returns
 * whether the plan was changed.
 */
export function capKeylessPlan(plan: TransformPlan, original: Pick<ImageDoc, 'width' | 'height'>, maxSide: number): boolean {
  // What the resize works on: the crop rectangle, turned by rot (flip and trim never enlarge).
  const source = resizeSource(original, plan);
  // The picture may not exceed the original (turned as asked); the whole output, padding
  // included, may not exceed maxSide, and padding never fills that on its own.
  const { width: originalW, height: originalH } = resizeSource(original, { rot: plan.rot });
  let changed = false;
  if (plan.pad && plan.pad * 2 >= maxSide) {
    plan.pad = Math.max(0, Math.floor((maxSide - 1) / 4));
    changed = true;
  }
  const pad = plan.pad ?? 0;
  const limitW = Math.min(originalW, maxSide - 2 * pad);
  const limitH = Math.min(originalH, maxSide - 2 * pad);
  if (plan.width === undefined && plan.height === undefined) {
    if (source.width <= limitW && source.height <= limitH) return changed;
    plan.width = limitW;
    plan.height = limitH;
    plan.fit = 'within';
    return true;
  }
  // Rounding of the derived side can leave it one pixel over: shrink again (at most a few times).
  for (let i = 0; i < 4; i++) {
    const { width: w, height: h } = resizedSize(source, plan);
    const factor = Math.min(1, limitW / w, limitH / h);
    if (factor >= 1) break;
    // The epsilon keeps 3000 × (2000 / 3000) at 2000, not 1999.
    const shrink = (v: number | undefined) => (v === undefined ? undefined : Math.max(1, Math.min(v - 1, Math.floor(v * factor + 1e-9))));
    plan.width = shrink(plan.width);
    plan.height = shrink(plan.height);
    changed = true;
  }
  return changed;
}

// Admits a new derivative of one origin atomically (a count-then-create lets concurrent requests
// for different sizes all pass). KEYS[1]: recent admissions of the image; ARGV: the derivative
// key, the cap, its TTL, then the keys of the image's derivatives of that origin already in the
// catalog. The union of both is what counts: a derivative finished after the catalog read is
// still in the set.
const ADMIT_DERIVATIVE = `
local known, n = {}, 0
for i = 4, #ARGV do if not known[ARGV[i]] then known[ARGV[i]] = true; n = n + 1 end end
if known[ARGV[1]] or redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
for _, k in ipairs(redis.call('SMEMBERS', KEYS[1])) do if not known[k] then known[k] = true; n = n + 1 end end
if n >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1`;

const ROUTE_OF: Record<Exclude<DerivativeOrigin, 'api'>, string> = { public: '/cdn/{image_id}', demo: 'the demo route' };

/**
 * Takes one of the image's `max` new-derivative slots of `origin`; returns a release function
 * (the derivative was not created after all), or throws 403 when the image is at its cap.
 */
export async function admitKeylessDerivative(
  deps: WebDeps,
  image: ImageDoc,
  key: string,
  origin: Exclude<DerivativeOrigin, 'api'>,
  max: number,
): Promise<() => Promise<void>> {
  const refuse = (count: number) =>
    new ServiceError('forbidden', `This image already has ${count} derivatives made through ${ROUTE_OF[origin]} (limit ${max}); use an existing size or an API key`);
  const existing = await derivativeIdsOfOrigin(deps.catalog, image._id, origin, max);
  if (existing.length >= max) throw refuse(existing.length);
  const setKey = `pictor:${origin}deriv:${String(image._id)}:${image.version}`;
  // Kept well past a job's time limit, so every admitted derivative is in the catalog by then.
  const ttlSeconds = Math.max(600, Math.ceil((2 * deps.config.jobTimeoutMs) / 1000));
  const ok = await deps.redis.eval(ADMIT_DERIVATIVE, 1, setKey, key, String(max), String(ttlSeconds), ...existing);
  if (ok !== 1) throw refuse(max);
  return async () => {
    await deps.redis.srem(setKey, key).catch(() => undefined);
  };
}
