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
  /** Integers only: allowed values are multiples of this (rot: 0, 90, 180, 270). */
  multipleOf?: number;
  enum?: readonly string[];
  /** Strings without an enum: the shape of a value (JSON Schema pattern). */
  pattern?: string;
  /** Shown in the OpenAPI document and the playground for free-form strings. */
  example?: string;
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
/** Fixed anchors: an edge or corner of the image (also the watermark's placement). */
export const COMPASS_GRAVITIES = ['center', 'north', 'south', 'east', 'west', 'northeast', 'northwest', 'southeast', 'southwest'] as const;
/** Content-aware choices: sharp's strategies, the faces found at upload, or a focal point (fx, fy). */
export const GRAVITY_VALUES = [...COMPASS_GRAVITIES, 'entropy', 'attention', 'face', 'focal'] as const;
export const FLIP_VALUES = ['h', 'v', 'hv'] as const;
export type Gravity = (typeof GRAVITY_VALUES)[number];
export type CompassGravity = (typeof COMPASS_GRAVITIES)[number];

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
  // Geometry, colour, presets, watermark and the version (docs/transformations.md).
  { name: 'dpr', type: 'number', minimum: 1, maximum: 4, sets: ['A', 'B'], description: 'Device pixel ratio: multiplies w and h (on the keyless /cdn/{id}, never beyond the original).' },
  { name: 'gravity', type: 'string', enum: GRAVITY_VALUES, sets: ['A', 'B'], description: 'Which part a cropping fit (cover) keeps: an edge or corner, entropy, attention, face (faces found at upload) or focal (fx, fy).' },
  { name: 'fx', type: 'number', minimum: 0, maximum: 1, sets: ['A', 'B'], description: 'Focal point x for gravity=focal, 0 (left) to 1 (right) of the auto-oriented original.' },
  { name: 'fy', type: 'number', minimum: 0, maximum: 1, sets: ['A', 'B'], description: 'Focal point y for gravity=focal, 0 (top) to 1 (bottom) of the auto-oriented original.' },
  { name: 'crop', type: 'string', pattern: '^\\d{1,5},\\d{1,5},\\d{1,5},\\d{1,5}$', example: '100,50,800,600', sets: ['A', 'B'], description: 'Rectangle x,y,w,h in pixels of the auto-oriented original, cut before resizing (400 when outside the image).' },
  { name: 'rot', type: 'integer', minimum: 0, maximum: 270, multipleOf: 90, sets: ['A', 'B'], description: 'Clockwise rotation in degrees (0, 90, 180, 270) after EXIF auto-orientation and crop.' },
  { name: 'flip', type: 'string', enum: FLIP_VALUES, sets: ['A', 'B'], description: 'Mirror: h (left-right), v (top-bottom) or hv (both), after rot.' },
  { name: 'trim', type: 'integer', minimum: 1, maximum: 100, sets: ['A', 'B'], description: 'Trims borders of the top-left pixel\'s colour; the value is the colour-distance threshold.' },
  { name: 'bg', type: 'string', pattern: '^[0-9A-Fa-f]{6}$', example: 'ff8800', sets: ['A', 'B'], description: 'Background colour RRGGBB of padding (fit=contain, pad) and of transparency flattened into JPEG.' },
  { name: 'pad', type: 'integer', minimum: 0, maximum: 1000, sets: ['A', 'B'], description: 'Padding in output pixels on every side, in the bg colour (transparent without bg where the format has alpha).' },
  { name: 'grayscale', type: 'boolean', sets: ['A', 'B'], description: 'Greyscale output.' },
  { name: 'preset', type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', example: 'thumb', sets: ['A', 'B'], description: 'A named parameter set from the PRESETS configuration; parameters given explicitly win.' },
  { name: 'wm', type: 'string', pattern: '^[0-9a-f]{24}$', sets: ['A', 'B'], description: 'Watermark: the imageId of another image of the same owner, overlaid on the output.' },
  { name: 'wm_gravity', type: 'string', enum: COMPASS_GRAVITIES, sets: ['A', 'B'], description: 'Where the watermark goes (default southeast).' },
  { name: 'wm_opacity', type: 'integer', minimum: 0, maximum: 100, sets: ['A', 'B'], description: 'Watermark opacity in percent (default 50).' },
  { name: 'wm_scale', type: 'number', minimum: 0.05, maximum: 1, sets: ['A', 'B'], description: 'Watermark width as a share of the output width (default 0.25).' },
  { name: 'v', type: 'string', pattern: '^[A-Za-z0-9]{1,32}$', sets: ['A', 'B'], description: 'The original\'s version (as handed out in URLs): versioned URLs are immutable; a replaced version answers 404.' },
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

type ParamEntry = (typeof TRANSFORM_PARAMS)[number];
/** The value type of one registry entry: its enum's members, a number, a boolean or a string. */
export type ParamValue<P extends ParamDefinition> = P extends { enum: readonly (infer E)[] }
  ? E
  : P['type'] extends 'integer' | 'number'
    ? number
    : P['type'] extends 'boolean'
      ? boolean
      : string;
/** Request values of the parameters a path set accepts, generated from the registry (the SDK's types too). */
export type ParamValues<S extends PathSet> = { [P in ParamEntry as S extends P['sets'][number] ? P['name'] : never]?: ParamValue<P> };

/** Validated, typed request values (after schema coercion). */
export type TransformRequest = ParamValues<'A'> & ParamValues<'B'>;

/** A focus point, 0-1 of the auto-oriented original (gravity=focal's fx/fy, or the centre of the faces). */
export interface FocusPoint {
  x: number;
  y: number;
}

export interface CropRect {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface WatermarkPlan {
  imageId: string;
  /** Storage key and version of the watermark's original (its version is part of the derivative key). */
  sourceKey: string;
  version: string;
  gravity: CompassGravity;
  opacity: number;
  scale: number;
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
  /** Only when fit crops (cover with both sides); absent = centre. */
  gravity?: Gravity;
  /** gravity=focal or face: where the crop is centred. */
  focus?: FocusPoint;
  crop?: CropRect;
  rot?: 90 | 180 | 270;
  flip?: 'h' | 'v' | 'hv';
  trim?: number;
  /** RRGGBB, lower case. */
  bg?: string;
  pad?: number;
  grayscale?: boolean;
  watermark?: WatermarkPlan;
  /** The source has several frames and the output keeps them (WebP). */
  animated?: boolean;
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

/** Route-specific inputs of resolvePlan beyond the request. */
export interface PlanOptions {
  /** Keyless routes: dpr never makes an output larger than this source (auto-oriented pixels). */
  dprCapSource?: { width: number; height: number };
}

/** `x,y,w,h` (validated by the schema's pattern) as a rectangle. */
export function parseCrop(value: string): CropRect {
  const [left, top, width, height] = value.split(',').map(Number);
  return { left, top, width, height };
}

/** The factor dpr really applies: on keyless routes capped where the requested sides reach the source's. */
function effectiveDpr(req: TransformRequest, options: PlanOptions): number {
  const dpr = req.dpr ?? 1;
  const source = options.dprCapSource;
  if (dpr === 1 || !source) return dpr;
  let room = Infinity;
  if (req.w !== undefined) room = Math.min(room, source.width / req.w);
  if (req.h !== undefined) room = Math.min(room, source.height / req.h);
  return Math.min(dpr, Math.max(1, room));
}

/** Turns validated request values into the plan; `dependsOnAccept` tells whether to send Vary: Accept. */
export function resolvePlan(
  set: PathSet,
  req: TransformRequest,
  ctx: NegotiationContext,
  options: PlanOptions = {},
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
  // dpr is folded into the sizes: w=200&dpr=2 and w=400 are one derivative.
  const dpr = effectiveDpr(req, options);
  let width = req.w !== undefined ? Math.round(req.w * dpr) : undefined;
  let height = req.h !== undefined ? Math.round(req.h * dpr) : undefined;
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
    // fit places the image in a w×h box; with one side sharp's fill would still stretch that
    // side alone, an image the derivative key (which omits fit then) does not name.
    const box = width !== undefined && height !== undefined;
    fit = box ? ((req.fit?.toLowerCase() as FitMode | undefined) ?? 'contain') : 'contain';
  }
  const plan: TransformPlan = {
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
  };
  // Gravity matters only where the fit crops; elsewhere it would only split the cache.
  const crops = fit === 'cover' && width !== undefined && height !== undefined;
  if (crops && req.gravity !== undefined && req.gravity !== 'center') {
    plan.gravity = req.gravity;
    if (req.gravity === 'focal') plan.focus = { x: req.fx ?? 0.5, y: req.fy ?? 0.5 };
  }
  if (req.crop !== undefined) plan.crop = parseCrop(req.crop);
  if (req.rot) plan.rot = req.rot as 90 | 180 | 270;
  if (req.flip !== undefined) plan.flip = req.flip;
  if (req.trim !== undefined) plan.trim = req.trim;
  if (req.bg !== undefined) plan.bg = req.bg.toLowerCase();
  if (req.pad) plan.pad = req.pad;
  if (req.grayscale) plan.grayscale = true;
  return { plan, dependsOnAccept };
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
  // gravity=face needs no coordinates: its boxes belong to the version, which the key names.
  if (plan.gravity !== undefined) pairs.push(['gravity', plan.gravity]);
  if (plan.gravity === 'focal' && plan.focus) pairs.push(['fx', String(plan.focus.x)], ['fy', String(plan.focus.y)]);
  if (plan.crop) pairs.push(['crop', `${plan.crop.left},${plan.crop.top},${plan.crop.width},${plan.crop.height}`]);
  if (plan.rot !== undefined) pairs.push(['rot', String(plan.rot)]);
  if (plan.flip !== undefined) pairs.push(['flip', plan.flip]);
  if (plan.trim !== undefined) pairs.push(['trim', String(plan.trim)]);
  if (plan.bg !== undefined) pairs.push(['bg', plan.bg]);
  if (plan.pad !== undefined) pairs.push(['pad', String(plan.pad)]);
  if (plan.grayscale) pairs.push(['grayscale', '1']);
  const wm = plan.watermark;
  if (wm) pairs.push(['wm', `${wm.imageId}.${wm.version}`], ['wm_gravity', wm.gravity], ['wm_opacity', String(wm.opacity)], ['wm_scale', String(wm.scale)]);
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
