// Output size and placement: w, h, fit, dpr, gravity, fx, fy, then the padding (pad, bg). w, h, fit,
// dpr and gravity become one resize (sharp keeps only the last resize of a pipeline), applied by w.
import type { Sharp } from 'sharp';
import { facesFocus, focusThroughGeometry, focusWindow, type FocusPoint } from '../focus.js';
import type { OutputFormat } from '../formats.js';
import { defineParam, pairIf, type PlanContext, type RequestValues } from '../transform-param.js';

export type FitMode = 'cover' | 'contain' | 'fill' | 'inside' | 'outside';
/** 'within' = inside without enlargement: set A's default box (no w, no h). Internal only. */
export type ResolvedFit = FitMode | 'within';

export const FIT_VALUES: readonly FitMode[] = ['contain', 'cover', 'fill', 'inside', 'outside'];
/** Fixed anchors: an edge or corner of the image (also the watermark's placement). */
export const COMPASS_GRAVITIES = ['center', 'north', 'south', 'east', 'west', 'northeast', 'northwest', 'southeast', 'southwest'] as const;
/** Content-aware choices: sharp's strategies, the faces found at upload, or a focal point (fx, fy). */
export const GRAVITY_VALUES = [...COMPASS_GRAVITIES, 'entropy', 'attention', 'face', 'focal'] as const;
export type Gravity = (typeof GRAVITY_VALUES)[number];
export type CompassGravity = (typeof COMPASS_GRAVITIES)[number];

declare module '../transform-param.js' {
  interface TransformPlan {
    width?: number;
    height?: number;
    fit: ResolvedFit;
    /** Only when fit crops (cover with both sides); absent = centre. */
    gravity?: Gravity;
    /** gravity=focal or face: where the crop is centred. */
    focus?: FocusPoint;
    /** RRGGBB, lower case. */
    bg?: string;
    pad?: number;
  }
}

/** sharp's names for the compass gravities (also used to place the watermark). */
export const SHARP_GRAVITY: Record<CompassGravity, string> = {
  center: 'centre',
  north: 'north',
  south: 'south',
  east: 'east',
  west: 'west',
  northeast: 'northeast',
  northwest: 'northwest',
  southeast: 'southeast',
  southwest: 'southwest',
};

/** Output formats that keep transparency. */
const HAS_ALPHA = new Set<OutputFormat>(['png', 'webp', 'avif']);

/** Padding colour: bg when given (opaque), else transparent where the format keeps alpha, else white. */
export function paddingColour(plan: { bg?: string; format: OutputFormat }): { r: number; g: number; b: number; alpha: number } {
  if (plan.bg) {
    const n = parseInt(plan.bg, 16);
    return { r: (n >> 16) & 255, g: (n >> 8) & 255, b: n & 255, alpha: 1 };
  }
  return { r: 255, g: 255, b: 255, alpha: HAS_ALPHA.has(plan.format) ? 0 : 1 };
}

function sharpPosition(gravity: Gravity | undefined): string {
  if (gravity === undefined || gravity === 'focal' || gravity === 'face') return 'centre';
  // entropy and attention are sharp's own strategies (libvips smartcrop).
  return gravity === 'entropy' || gravity === 'attention' ? gravity : SHARP_GRAVITY[gravity];
}

/** The factor dpr really applies: on keyless routes capped where the requested sides reach the source's. */
function effectiveDpr(request: RequestValues, ctx: PlanContext): number {
  const { w, h } = request as { w?: number; h?: number };
  const dpr = (request.dpr as number | undefined) ?? 1;
  const source = ctx.dprCapSource;
  if (dpr === 1 || !source) return dpr;
  let room = Infinity;
  if (w !== undefined) room = Math.min(room, source.width / w);
  if (h !== undefined) room = Math.min(room, source.height / h);
  return Math.min(dpr, Math.max(1, room));
}

/** dpr is folded into the sizes: w=200&dpr=2 and w=400 are one derivative. */
const scaled = (value: number | undefined, request: RequestValues, ctx: PlanContext) => (value !== undefined ? Math.round(value * effectiveDpr(request, ctx)) : undefined);

/** The largest output side a request may name. */
const MAX_SIDE = 4200;
/** Set A without w and h: the image fits inside this box, never enlarged. */
const DEFAULT_BOX = { width: 1280, height: 720 };
const DEFAULT_FIT = 'contain';

export const w = defineParam(
  { name: 'w', type: 'integer', minimum: 1, maximum: MAX_SIDE, defaultA: DEFAULT_BOX.width, sets: ['A', 'B'], description: 'Output width in pixels.' },
  {
    resolve: (plan, value, request, ctx) => {
      plan.width = scaled(value, request, ctx);
    },
    key: (plan) => pairIf('w', plan.width),
    stage: 'resize',
    applies: (plan) => plan.width !== undefined || plan.height !== undefined,
    apply: async (image: Sharp, plan, ctx) => {
      if (plan.focus && plan.width !== undefined && plan.height !== undefined) {
        // Focal point or faces: a cover resize, then the window centred on the focus.
        const source = await ctx.sourceSize();
        const win = focusWindow(source.width, source.height, plan.width, plan.height, plan.focus);
        return image
          .resize({ width: win.resizedWidth, height: win.resizedHeight, fit: 'fill' })
          .extract({ left: win.left, top: win.top, width: plan.width, height: plan.height });
      }
      return image.resize({
        width: plan.width,
        height: plan.height,
        fit: plan.fit === 'within' ? 'inside' : plan.fit,
        position: sharpPosition(plan.gravity),
        withoutEnlargement: plan.fit === 'within',
        // contain pads: bg, else transparent where the output keeps alpha, else white (flattened later)
        background: paddingColour(plan),
      });
    },
  },
);

export const h = defineParam(
  { name: 'h', type: 'integer', minimum: 1, maximum: MAX_SIDE, defaultA: DEFAULT_BOX.height, sets: ['A', 'B'], description: 'Output height in pixels.' },
  {
    resolve: (plan, value, request, ctx) => {
      plan.height = scaled(value, request, ctx);
    },
    key: (plan) => pairIf('h', plan.height),
  },
);

export const fit = defineParam(
  { name: 'fit', type: 'string', enum: FIT_VALUES, defaultB: DEFAULT_FIT, sets: ['B'], description: 'How the image fits a w×h box (case-insensitive).' },
  {
    resolve: (plan, value, _request, ctx) => {
      if (ctx.set === 'A') {
        // Set A has no fit: w and h crop to fill; neither fits inside the default box.
        if (plan.width === undefined && plan.height === undefined) {
          plan.width = DEFAULT_BOX.width;
          plan.height = DEFAULT_BOX.height;
          plan.fit = 'within';
        } else {
          plan.fit = 'cover';
        }
        return;
      }
      // fit places the image in a w×h box; with one side sharp's fill would still stretch that
      // side alone, an image the derivative key (which omits fit then) does not name.
      const box = plan.width !== undefined && plan.height !== undefined;
      plan.fit = box ? ((value?.toLowerCase() as FitMode | undefined) ?? DEFAULT_FIT) : DEFAULT_FIT;
    },
    key: (plan) => (plan.width !== undefined && plan.height !== undefined ? [['fit', plan.fit]] : []),
  },
);

// Folded into w and h when they enter the plan (see scaled): no key or step of its own.
export const dpr = defineParam({ name: 'dpr', type: 'number', minimum: 1, maximum: 4, sets: ['A', 'B'], description: 'Device pixel ratio: multiplies w and h (on the keyless /cdn/{id}, never beyond the original).' });

export const gravity = defineParam(
  { name: 'gravity', type: 'string', enum: GRAVITY_VALUES, sets: ['A', 'B'], description: 'Which part a cropping fit (cover) keeps: an edge or corner, entropy, attention, face (faces found at upload) or focal (fx, fy).' },
  {
    resolve: (plan, value, _request, ctx) => {
      // Gravity matters only where the fit crops; elsewhere it would only split the cache.
      const crops = plan.fit === 'cover' && plan.width !== undefined && plan.height !== undefined;
      if (!crops || value === undefined || value === 'center') return;
      plan.gravity = value;
      // A focal point without coordinates is the centre; fx and fy move it.
      if (value === 'focal') plan.focus = { x: 0.5, y: 0.5 };
      if (value === 'face' && ctx.source) {
        // The faces found at upload; none (or an upload from before) → sharp's attention strategy.
        plan.focus = facesFocus(ctx.source.faces);
        if (!plan.focus) plan.gravity = 'attention';
      }
    },
    // The focus is given on the original; crop, rot and flip (resolved after gravity) move it.
    finish: (plan, ctx) => {
      if (plan.focus && ctx.source) plan.focus = focusThroughGeometry(plan.focus, plan, ctx.source.width, ctx.source.height);
    },
    // gravity=face needs no coordinates: its boxes belong to the version, which the key names.
    key: (plan) => pairIf('gravity', plan.gravity),
  },
);

export const fx = defineParam(
  { name: 'fx', type: 'number', minimum: 0, maximum: 1, sets: ['A', 'B'], description: 'Focal point x for gravity=focal, 0 (left) to 1 (right) of the auto-oriented original.' },
  {
    resolve: (plan, value) => {
      if (plan.gravity === 'focal' && plan.focus && value !== undefined) plan.focus.x = value;
    },
    key: (plan) => (plan.gravity === 'focal' && plan.focus ? [['fx', String(plan.focus.x)]] : []),
  },
);

export const fy = defineParam(
  { name: 'fy', type: 'number', minimum: 0, maximum: 1, sets: ['A', 'B'], description: 'Focal point y for gravity=focal, 0 (top) to 1 (bottom) of the auto-oriented original.' },
  {
    resolve: (plan, value) => {
      if (plan.gravity === 'focal' && plan.focus && value !== undefined) plan.focus.y = value;
    },
    key: (plan) => (plan.gravity === 'focal' && plan.focus ? [['fy', String(plan.focus.y)]] : []),
  },
);

export const bg = defineParam(
  { name: 'bg', type: 'string', pattern: '^[0-9A-Fa-f]{6}$', example: 'ff8800', sets: ['A', 'B'], description: 'Background colour RRGGBB of padding (fit=contain, pad) and of transparency flattened into JPEG.' },
  {
    resolve: (plan, value) => {
      if (value !== undefined) plan.bg = value.toLowerCase();
    },
    key: (plan) => pairIf('bg', plan.bg),
    // Read by the resize's and pad's padding (paddingColour) and by the JPEG encoder's flattening.
  },
);

export const pad = defineParam(
  { name: 'pad', type: 'integer', minimum: 0, maximum: 1000, sets: ['A', 'B'], description: 'Padding in output pixels on every side, in the bg colour (transparent without bg where the format has alpha).' },
  {
    resolve: (plan, value) => {
      if (value) plan.pad = value;
    },
    key: (plan) => pairIf('pad', plan.pad),
    stage: 'resize',
    applies: (plan) => (plan.pad ?? 0) > 0,
    apply: (image, plan) => {
      const pad = plan.pad ?? 0;
      return image.extend({ top: pad, bottom: pad, left: pad, right: pad, background: paddingColour(plan) });
    },
  },
);
