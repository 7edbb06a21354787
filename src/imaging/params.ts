// The transform parameter registry: the single list of parameters, their types, ranges, defaults
// and canonical order. Pure (no sharp): the front door uses it for validation, derived keys,
// srcset and signing; the worker's operations are typed against the same names.

export type PathSet = 'A' | 'B';
export type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif';
export type FitMode = 'cover' | 'contain' | 'fill' | 'inside' | 'outside';
/** 'within' = inside without enlargement: set A's default box (no w, no h). Internal only. */
export type ResolvedFit = FitMode | 'within';

export interface ParamDefinition {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean';
  minimum?: number;
  maximum?: number;
  enum?: readonly string[];
  /** Default in set A (spec table 4.1); undefined = not applied. */
  defaultA?: number | string;
  /** Default in set B (spec table 4.2); undefined = not applied. */
  defaultB?: number | string | boolean;
  sets: readonly PathSet[];
  description: string;
  /**
   * Continuous parameters are rounded to multiples of `step` before any key is made, so the
   * parameter space (and the derivatives one image can have) stays finite: 1.01 and 1.02 are
   * the same request.
   */
  step?: number;
}

export const FORMAT_VALUES = ['auto', 'webp', 'avif', 'jpeg', 'jpg', 'png'] as const;
export const FIT_VALUES: readonly FitMode[] = ['contain', 'cover', 'fill', 'inside', 'outside'];

/** Canonical order: derived keys and signatures list parameters in exactly this order. */
export const TRANSFORM_PARAMS = [
  { name: 'w', type: 'integer', minimum: 1, maximum: 4200, defaultA: 1280, sets: ['A', 'B'], description: 'Output width in pixels.' },
  { name: 'h', type: 'integer', minimum: 1, maximum: 4200, defaultA: 720, sets: ['A', 'B'], description: 'Output height in pixels.' },
  { name: 'fit', type: 'string', enum: FIT_VALUES, defaultB: 'contain', sets: ['B'], description: 'How the image fits a w×h box (case-insensitive).' },
  { name: 'q', type: 'integer', minimum: 1, maximum: 100, defaultA: 80, defaultB: 80, sets: ['A', 'B'], description: 'Encoder quality.' },
  { name: 'f', type: 'string', enum: FORMAT_VALUES, defaultA: 'auto', defaultB: 'auto', sets: ['A', 'B'], description: 'Output format; auto negotiates from Accept.' },
  { name: 'blur', type: 'number', minimum: 0, maximum: 100, defaultA: 0, defaultB: 0, step: 0.5, sets: ['A', 'B'], description: 'Gaussian blur strength (sigma = blur / 2); rounded to steps of 0.5.' },
  { name: 'sharp', type: 'number', minimum: 0, maximum: 100, defaultA: 0, defaultB: 0, step: 0.5, sets: ['A', 'B'], description: 'Sharpen strength (sigma = 0.5 + sharp / 40); rounded to steps of 0.5.' },
  { name: 'bri', type: 'integer', minimum: -100, maximum: 100, defaultA: 0, defaultB: 0, sets: ['A', 'B'], description: 'Brightness: multiplier 1 + bri / 100.' },
  { name: 'con', type: 'integer', minimum: -100, maximum: 100, defaultA: 0, defaultB: 0, sets: ['A', 'B'], description: 'Contrast: slope 1 + con / 100 around mid-grey.' },
  { name: 'sat', type: 'integer', minimum: -100, maximum: 100, defaultA: 0, defaultB: 0, sets: ['A', 'B'], description: 'Saturation: multiplier 1 + sat / 100.' },
  { name: 'hue', type: 'integer', minimum: 0, maximum: 360, defaultA: 0, defaultB: 0, sets: ['A', 'B'], description: 'Hue rotation in degrees.' },
  { name: 'gamma', type: 'number', minimum: 1, maximum: 3, defaultA: 2.2, step: 0.1, sets: ['A', 'B'], description: 'Display gamma; midtones scale by exponent 2.2 / gamma (2.2 = unchanged). Applied only when given; rounded to steps of 0.1.' },
  { name: 'opt', type: 'boolean', defaultB: false, sets: ['B'], description: 'Smart optimization: best accepted format, per-format perceptual quality, metadata stripped, progressive output.' },
] as const satisfies readonly ParamDefinition[];

export type ParamName = (typeof TRANSFORM_PARAMS)[number]['name'];

/**
 * Rounds a value of a stepped parameter to its nearest step (within its range), as a clean
 * decimal (0.30000000000000004 → 0.3); other parameters' values are returned unchanged.
 */
export function quantize(def: Pick<ParamDefinition, 'step' | 'minimum' | 'maximum'>, value: number): number {
  if (def.step === undefined || !Number.isFinite(value)) return value;
  const decimals = (String(def.step).split('.')[1] ?? '').length;
  let rounded = Number((Math.round(value / def.step) * def.step).toFixed(decimals));
  if (def.minimum !== undefined) rounded = Math.max(def.minimum, rounded);
  if (def.maximum !== undefined) rounded = Math.min(def.maximum, rounded);
  return rounded;
}

const STEPPED_PARAMS: readonly ParamDefinition[] = (TRANSFORM_PARAMS as readonly ParamDefinition[]).filter((p) => p.step !== undefined);

/** The request with every stepped parameter rounded (see quantize); applied before any key is derived. */
export function quantizeRequest<T extends object>(req: T): T {
  const out = { ...req } as Record<string, unknown>;
  for (const p of STEPPED_PARAMS) {
    const v = out[p.name];
    if (typeof v === 'number') out[p.name] = quantize(p, v);
  }
  return out as T;
}

export function paramsFor(set: PathSet): readonly ParamDefinition[] {
  return TRANSFORM_PARAMS.filter((p) => (p.sets as readonly PathSet[]).includes(set));
}

/** Validated, typed request values (after schema coercion). */
export interface TransformRequest {
  w?: number;
  h?: number;
  fit?: string;
  q?: number;
  f?: string;
  blur?: number;
  sharp?: number;
  bri?: number;
  con?: number;
  sat?: number;
  hue?: number;
  gamma?: number;
  opt?: boolean;
}

/** Everything the worker needs to produce one derivative; also the source of its key. */
export interface TransformPlan {
  width?: number;
  height?: number;
  fit: ResolvedFit;
  quality: number;
  format: OutputFormat;
  blur: number;
  sharp: number;
  bri: number;
  con: number;
  sat: number;
  hue: number;
  gamma?: number;
  opt: boolean;
}

/** Upload types accepted (by their bytes): the four formats we can also produce. */
export const ACCEPTED_UPLOAD_MIME = ['image/jpeg', 'image/png', 'image/webp', 'image/avif'] as const;

export const FORMAT_EXTENSION: Record<OutputFormat, string> = { jpeg: 'jpg', png: 'png', webp: 'webp', avif: 'avif' };
export const FORMAT_MIME: Record<OutputFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', avif: 'image/avif' };

export function formatFromExtension(ext: string): OutputFormat | undefined {
  switch (ext.toLowerCase()) {
    case 'jpg':
    case 'jpeg':
      return 'jpeg';
    case 'png':
      return 'png';
    case 'webp':
      return 'webp';
    case 'avif':
      return 'avif';
    default:
      return undefined;
  }
}

/** Per-format quality used by opt=true, chosen for similar perceived quality (see README). */
export const OPT_QUALITY: Record<OutputFormat, number> = { jpeg: 78, webp: 75, avif: 56, png: 100 };

export interface NegotiationContext {
  accept: string;
  /** Format of the stored original. */
  sourceFormat: OutputFormat;
  /** Set A JSON callers default to WebP (the spec's default content_type). */
  preferWebpWhenUnsure: boolean;
  /** Format implied by a vanity path extension (set B /image/{path}). */
  pathFormat?: OutputFormat;
  hasAlpha?: boolean;
}

export function acceptsMime(accept: string, mime: string): boolean {
  return accept
    .toLowerCase()
    .split(',')
    .some((part) => part.trim().split(';')[0] === mime);
}

/** f=auto (and opt): AVIF when accepted, else WebP, else the source format. */
export function negotiateFormat(ctx: NegotiationContext): OutputFormat {
  if (acceptsMime(ctx.accept, 'image/avif')) return 'avif';
  if (acceptsMime(ctx.accept, 'image/webp') || ctx.preferWebpWhenUnsure) return 'webp';
  return ctx.sourceFormat;
}

/** Turns validated request values into the plan; `dependsOnAccept` tells whether to send Vary: Accept. */
export function resolvePlan(
  set: PathSet,
  req: TransformRequest,
  ctx: NegotiationContext,
): { plan: TransformPlan; dependsOnAccept: boolean } {
  req = quantizeRequest(req);
  const opt = set === 'B' && req.opt === true;
  // An explicit f (auto included) wins over a vanity extension; opt negotiates unless f is explicit.
  const requested = req.f !== undefined ? req.f : opt ? undefined : ctx.pathFormat;
  let format: OutputFormat;
  let dependsOnAccept = false;
  if (requested === undefined || requested === 'auto') {
    format = negotiateFormat(ctx);
    dependsOnAccept = true;
  } else {
    format = requested === 'jpg' ? 'jpeg' : (requested as OutputFormat);
  }
  let width = req.w;
  let height = req.h;
  let fit: ResolvedFit;
  if (set === 'A') {
    if (width === undefined && height === undefined) {
      width = 1280;
      height = 720;
      fit = 'within';
    } else {
      fit = 'cover';
    }
  } else {
    fit = (req.fit?.toLowerCase() as FitMode | undefined) ?? 'contain';
  }
  return {
    plan: {
      width,
      height,
      fit,
      quality: opt ? OPT_QUALITY[format] : (req.q ?? 80),
      format,
      blur: req.blur ?? 0,
      sharp: req.sharp ?? 0,
      bri: req.bri ?? 0,
      con: req.con ?? 0,
      sat: req.sat ?? 0,
      hue: req.hue ?? 0,
      gamma: req.gamma,
      opt,
    },
    dependsOnAccept,
  };
}

/** Canonical `&name=value` pairs of the parameters a plan applies, in registry order. */
export function canonicalPairs(plan: TransformPlan): [string, string][] {
  const pairs: [string, string][] = [];
  const bothSides = plan.width !== undefined && plan.height !== undefined;
  if (plan.width !== undefined) pairs.push(['w', String(plan.width)]);
  if (plan.height !== undefined) pairs.push(['h', String(plan.height)]);
  if (bothSides) pairs.push(['fit', plan.fit]);
  pairs.push(['q', String(plan.quality)]);
  pairs.push(['f', plan.format]);
  for (const name of ['blur', 'sharp', 'bri', 'con', 'sat', 'hue'] as const) {
    if (plan[name] !== 0) pairs.push([name, String(plan[name])]);
  }
  if (plan.gamma !== undefined) pairs.push(['gamma', String(plan.gamma)]);
  if (plan.opt) pairs.push(['opt', '1']);
  return pairs;
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
