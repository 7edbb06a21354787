// Image operations, ipx-style: one small handler per registry parameter with an `apply` step.
// Keyed by the registry's names, so a parameter cannot exist here without existing there.
import type { Sharp } from 'sharp';
import type { ParamName, TransformPlan } from './params.js';

export interface Operation {
  /** Whether the plan asks for this operation at all. */
  applies(plan: TransformPlan): boolean;
  apply(image: Sharp, plan: TransformPlan): Sharp;
}

const never: Operation = { applies: () => false, apply: (image) => image };

export const OPERATIONS: Record<ParamName, Operation> = {
  // Geometry: w, h and fit are one resize (sharp keeps only the last resize of a pipeline).
  w: {
    applies: (plan) => plan.width !== undefined || plan.height !== undefined,
    apply: (image, plan) =>
      image.resize({
        width: plan.width,
        height: plan.height,
        fit: plan.fit === 'within' ? 'inside' : plan.fit,
        position: 'centre',
        withoutEnlargement: plan.fit === 'within',
        // contain pads: transparent where the output keeps alpha, white otherwise (flattened later)
        background: { r: 255, g: 255, b: 255, alpha: plan.format === 'jpeg' ? 1 : 0 },
      }),
  },
  h: never,
  fit: never,
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
  q: never,
  f: never,
  opt: never,
};

/** Order in which operations run (geometry first so effects work on fewer pixels). */
export const OPERATION_ORDER: readonly ParamName[] = ['w', 'blur', 'sharp', 'bri', 'con', 'gamma'];
