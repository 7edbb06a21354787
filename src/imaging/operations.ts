// Image operations, ipx-style: one small handler per registry parameter with an `apply` step.
// Keyed by the registry's names, so a parameter cannot exist here without existing there.
import type { Sharp } from 'sharp';
import { focusWindow } from './focus.js';
import type { CompassGravity, ParamName, TransformPlan } from './params.js';

/** Size of the image the resize sees (after crop, rot, flip), when the pipeline knows it. */
export interface SourceSize {
  width: number;
  height: number;
}

export interface Operation {
  /** Whether the plan asks for this operation at all. */
  applies(plan: TransformPlan): boolean;
  apply(image: Sharp, plan: TransformPlan, source?: SourceSize): Sharp;
}

const never: Operation = { applies: () => false, apply: (image) => image };

/** Output formats that keep transparency. */
const HAS_ALPHA = new Set(['png', 'webp', 'avif']);

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

/** Padding colour: bg when given (opaque), else transparent where the format keeps alpha, else white. */
export function paddingColour(plan: TransformPlan): { r: number; g: number; b: number; alpha: number } {
  if (plan.bg) {
    const n = parseInt(plan.bg, 16);
    return { r: (n >> 16) & 255, g: (n >> 8) & 255, b: n & 255, alpha: 1 };
  }
  return { r: 255, g: 255, b: 255, alpha: HAS_ALPHA.has(plan.format) ? 0 : 1 };
}

function sharpPosition(plan: TransformPlan): string {
  const g = plan.gravity;
  if (g === undefined || g === 'focal' || g === 'face') return 'centre';
  // entropy and attention are sharp's own strategies (libvips smartcrop).
  return g === 'entropy' || g === 'attention' ? g : SHARP_GRAVITY[g];
}

export const OPERATIONS: Record<ParamName, Operation> = {
  // Geometry: w, h, fit, dpr and gravity are one resize (sharp keeps only the last resize of a pipeline).
  w: {
    applies: (plan) => plan.width !== undefined || plan.height !== undefined,
    apply: (image, plan, source) => {
      if (plan.focus && source && plan.width !== undefined && plan.height !== undefined) {
        // Focal point or faces: a cover resize, then the window centred on the focus.
        const win = focusWindow(source.width, source.height, plan.width, plan.height, plan.focus);
        return image
          .resize({ width: win.resizedWidth, height: win.resizedHeight, fit: 'fill' })
          .extract({ left: win.left, top: win.top, width: plan.width, height: plan.height });
      }
      return image.resize({
        width: plan.width,
        height: plan.height,
        fit: plan.fit === 'within' ? 'inside' : plan.fit,
        position: sharpPosition(plan),
        withoutEnlargement: plan.fit === 'within',
        // contain pads: bg, else transparent where the output keeps alpha, else white (flattened later)
        background: paddingColour(plan),
      });
    },
  },
  h: never,
  fit: never,
  dpr: never,
  gravity: never,
  fx: never,
  fy: never,
  // crop, rot, flip and trim run on the original's pixels before everything else (pipeline.ts).
  crop: never,
  rot: never,
  flip: never,
  trim: never,
  pad: {
    applies: (plan) => (plan.pad ?? 0) > 0,
    apply: (image, plan) => {
      const pad = plan.pad ?? 0;
      return image.extend({ top: pad, bottom: pad, left: pad, right: pad, background: paddingColour(plan) });
    },
  },
  bg: never,
  // sigma = blur / 2 (blur 1 → 0.5 px, blur 100 → 50 px); sharp needs sigma ≥ 0.3.
  blur: { applies: (plan) => plan.blur > 0, apply: (image, plan) => image.blur(Math.max(0.3, plan.blur / 2)) },
  // sigma = 0.5 + sharp / 40 (0.5–3 px), stronger on jagged areas as the value grows.
  sharp: {
    applies: (plan) => plan.sharp > 0,
    apply: (image, plan) => image.sharpen({ sigma: 0.5 + plan.sharp / 40, m1: 1, m2: 2 + plan.sharp / 25 }),
  },
  // Brightness, saturation and hue in one modulate (multipliers 1 + v/100; hue in degrees).
  bri: {
    applies: (plan) => plan.bri !== 0 || plan.sat !== 0 || plan.hue !== 0,
    apply: (image, plan) =>
      image.modulate({ brightness: Math.max(0, 1 + plan.bri / 100), saturation: Math.max(0, 1 + plan.sat / 100), hue: plan.hue }),
  },
  sat: never,
  hue: never,
  // Contrast: slope a = 1 + con/100 around mid-grey (128): out = a·in + 128·(1 − a).
  con: {
    applies: (plan) => plan.con !== 0,
    apply: (image, plan) => {
      const a = 1 + plan.con / 100;
      return image.linear(a, 128 * (1 - a));
    },
  },
  // Display gamma relative to 2.2: net exponent 2.2 / gamma on midtones (2.2 = unchanged).
  gamma: { applies: (plan) => plan.gamma !== undefined, apply: (image, plan) => image.gamma(2.2, plan.gamma) },
  grayscale: { applies: (plan) => plan.grayscale === true, apply: (image) => image.grayscale() },
  q: never,
  f: never,
  opt: never,
  // Resolved by the front door: a preset is expanded, the version checked.
  preset: never,
  v: never,
  // The watermark is composited onto the finished pixels (pipeline.ts), once their size is known.
  wm: never,
  wm_gravity: never,
  wm_opacity: never,
  wm_scale: never,
};

/** Order in which operations run (geometry first so effects work on fewer pixels). */
export const OPERATION_ORDER: readonly ParamName[] = ['w', 'pad', 'blur', 'sharp', 'bri', 'con', 'gamma', 'grayscale'];
