// The transform parameter registry: every parameter's handler (operations/, one object each with
// its schema, plan step, key step, stage and apply), listed here once in canonical order. The
// request schemas, OpenAPI, the SDK's types, the playground, the plan, the derivative key and the
// pipeline are all read from this list; adding a parameter is adding its handler to it (at the end,
// so existing keys and signatures stay as they are). See docs/maintainers.md.
import type { NegotiationContext } from './formats.js';
import * as output from './operations/output.js';
import * as size from './operations/size.js';
import * as effects from './operations/effects.js';
import * as geometry from './operations/geometry.js';
import * as watermark from './operations/watermark.js';
import * as request from './operations/request.js';
import * as privacy from './operations/privacy.js';
import * as background from './operations/background.js';
import { FORMAT_EXTENSION } from './formats.js';
import { quantize, type ParamDefinition, type AnyParamHandler, type ParamValue, type PathSet, type PlanContext, type TransformPlan } from './transform-param.js';

export * from './formats.js';
export type { ParamDefinition, ParamValue, PathSet, RenderNotes, Size, SourceFacts, TransformPlan, WatermarkSource } from './transform-param.js';
export { FIT_VALUES, GRAVITY_VALUES, COMPASS_GRAVITIES, type FitMode, type ResolvedFit, type Gravity, type CompassGravity } from './operations/size.js';
export { FLIP_VALUES, parseCrop, type CropRect } from './operations/geometry.js';
export { FORMAT_VALUES, AUTO_QUALITY_VARIANTS, searchesQuality, jpegBackground, type AutoQualityVariant } from './operations/output.js';
export type { WatermarkPlan } from './operations/watermark.js';
export type { FocusPoint } from './focus.js';

/** Canonical order: derived keys and signatures list parameters in exactly this order. */
export const TRANSFORM_PARAMS = [
  size.w,
  size.h,
  size.fit,
  output.q,
  output.f,
  effects.blur,
  effects.sharp,
  effects.bri,
  effects.con,
  effects.sat,
  effects.hue,
  effects.gamma,
  output.opt,
  size.dpr,
  size.gravity,
  size.fx,
  size.fy,
  geometry.crop,
  geometry.rot,
  geometry.flip,
  geometry.trim,
  size.bg,
  size.pad,
  effects.grayscale,
  request.preset,
  watermark.wm,
  watermark.wm_gravity,
  watermark.wm_opacity,
  watermark.wm_scale,
  request.v,
  privacy.blur_faces,
  privacy.pixelate_faces,
  background.remove_bg,
] as const;

type ParamEntry = (typeof TRANSFORM_PARAMS)[number];

/** The registry as handlers of any value type (each reads its own value). */
const HANDLERS: readonly AnyParamHandler[] = TRANSFORM_PARAMS as readonly AnyParamHandler[];

/** The largest output side a request may name (w's and h's maximum). */
export const MAX_SIDE: number = Math.min(size.w.maximum, size.h.maximum);
/** Set A's box when neither w nor h is given (their set A defaults). */
export const DEFAULT_BOX = { width: size.w.defaultA, height: size.h.defaultA };
/** The device pixel ratios dpr accepts (client hints are clamped to them). */
export const DPR_RANGE = { minimum: size.dpr.minimum, maximum: size.dpr.maximum };
/** Set A's q and f when not given (also the srcset's). */
export const DEFAULT_QUALITY = output.q.defaultA;
export const DEFAULT_FORMAT = output.f.defaultA;

/** The parameters a preset may set. */
export const PRESETTABLE_PARAMS: readonly string[] = HANDLERS.filter((p) => !p.notInPresets).map((p) => p.name);
/** The parameters the public route takes when it serves presets only (PUBLIC_PRESETS_ONLY). */
export const PRESETS_ONLY_PARAMS: readonly string[] = HANDLERS.filter((p) => p.withPresetsOnly).map((p) => p.name);

/** Request values of the parameters a path set accepts, generated from the registry (the SDK's types too). */
export type ParamValues<S extends PathSet> = { [P in ParamEntry as S extends P['sets'][number] ? P['name'] : never]?: ParamValue<P> };

/** Validated, typed request values (after schema coercion). */
export type TransformRequest = ParamValues<'A'> & ParamValues<'B'>;

export function paramsFor(set: PathSet): readonly ParamDefinition[] {
  return HANDLERS.filter((p) => p.sets.includes(set));
}

/** The request with every stepped parameter rounded (see quantize); applied before any key is derived. */
export function quantizeRequest<T extends object>(req: T): T {
  const out = { ...req } as Record<string, unknown>;
  for (const p of HANDLERS) {
    const v = out[p.name];
    if (p.step !== undefined && typeof v === 'number') out[p.name] = quantize(p, v);
  }
  return out as T;
}

/** Route-specific inputs of resolvePlan beyond the request. */
export type PlanOptions = Pick<PlanContext, 'dprCapSource' | 'watermark' | 'source'>;

/** Turns validated request values into the plan (each parameter's resolve step, in registry order); `dependsOnAccept` tells whether to send Vary: Accept. */
export function resolvePlan(set: PathSet, req: TransformRequest, negotiation: NegotiationContext, options: PlanOptions = {}): { plan: TransformPlan; dependsOnAccept: boolean } {
  const values = quantizeRequest(req) as Record<string, unknown>;
  const ctx: PlanContext = { set, negotiation, ...options, dependsOnAccept: false };
  const plan = {} as TransformPlan;
  for (const p of HANDLERS) p.resolve?.(plan, values[p.name], values, ctx);
  for (const p of HANDLERS) p.finish?.(plan, ctx);
  return { plan, dependsOnAccept: ctx.dependsOnAccept };
}

/** Canonical `&name=value` pairs of the parameters a plan applies, in registry order. */
export function canonicalPairs(plan: TransformPlan): [string, string][] {
  return HANDLERS.flatMap((p) => p.key?.(plan) ?? []);
}

/** Whether a storage key is a derivative's (an original's key has no `&v=`). */
export function isDerivativeKey(key: string): boolean {
  return key.includes('&v=');
}

/**
 * Storage key of a derivative (spec 2.4): the base key, `&v=<version>` (so a replaced original
 * never maps to an old derivative), the applied parameters, then the output extension.
 */
export function derivativeKey(baseKey: string, version: string, plan: TransformPlan): string {
  const query = canonicalPairs(plan)
    .map(([k, v]) => `&${k}=${v}`)
    .join('');
  return `${baseKey}&v=${version}${query}.${FORMAT_EXTENSION[plan.format]}`;
}

/** The handlers with a pixel step, in registry order, for the worker's pipeline. */
export const PIXEL_STEPS: readonly AnyParamHandler[] = HANDLERS.filter((p) => p.apply !== undefined);
