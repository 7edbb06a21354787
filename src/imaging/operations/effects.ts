// Effects on the resized pixels: blur, sharp, bri, con, sat, hue, gamma, grayscale. sharp runs them
// in its own fixed order whatever the call order; each step only sets its option.
import type { Sharp } from 'sharp';
import { defineParam, pairIf, type ParamDefinition } from '../transform-param.js';

declare module '../transform-param.js' {
  interface TransformPlan {
    blur: number;
    sharp: number;
    bri: number;
    con: number;
    sat: number;
    hue: number;
    gamma?: number;
    grayscale?: boolean;
  }
}

type EffectName = 'blur' | 'sharp' | 'bri' | 'con' | 'sat' | 'hue';

/** An effect that is off at 0, the default in both sets: always in the plan, in the key only when on. */
function effect<const D extends ParamDefinition & { name: EffectName }>(definition: D, apply: (image: Sharp, amount: number) => Sharp) {
  const name: EffectName = definition.name;
  return defineParam(
    { ...definition, defaultA: 0, defaultB: 0 },
    {
      resolve: (plan, value) => {
        plan[name] = (value as number | undefined) ?? 0;
      },
      key: (plan) => (plan[name] !== 0 ? [[name, String(plan[name])]] : []),
      stage: 'effects',
      applies: (plan) => plan[name] !== 0,
      apply: (image, plan) => apply(image, plan[name]),
    },
  );
}

export const blur = effect(
  { name: 'blur', type: 'number', minimum: 0, maximum: 100, step: 0.5, sets: ['A', 'B'], description: 'Gaussian blur strength (sigma = blur / 2); rounded to steps of 0.5.' },
  // sigma = blur / 2 (blur 1 → 0.5 px, blur 100 → 50 px); sharp needs sigma ≥ 0.3.
  (image, amount) => image.blur(Math.max(0.3, amount / 2)),
);

export const sharp = effect(
  { name: 'sharp', type: 'number', minimum: 0, maximum: 100, step: 0.5, sets: ['A', 'B'], description: 'Sharpen strength (sigma = 0.5 + sharp / 40); rounded to steps of 0.5.' },
  // sigma = 0.5 + sharp / 40 (0.5–3 px), stronger on jagged areas as the value grows.
  (image, amount) => image.sharpen({ sigma: 0.5 + amount / 40, m1: 1, m2: 2 + amount / 25 }),
);

export const bri = effect(
  { name: 'bri', type: 'integer', minimum: -100, maximum: 100, sets: ['A', 'B'], description: 'Brightness: multiplier 1 + bri / 100.' },
  (image, amount) => image.modulate({ brightness: Math.max(0, 1 + amount / 100) }),
);

export const con = effect(
  { name: 'con', type: 'integer', minimum: -100, maximum: 100, sets: ['A', 'B'], description: 'Contrast: slope 1 + con / 100 around mid-grey.' },
  // Slope a = 1 + con/100 around mid-grey (128): out = a·in + 128·(1 − a).
  (image, amount) => {
    const a = 1 + amount / 100;
    return image.linear(a, 128 * (1 - a));
  },
);

export const sat = effect(
  { name: 'sat', type: 'integer', minimum: -100, maximum: 100, sets: ['A', 'B'], description: 'Saturation: multiplier 1 + sat / 100.' },
  (image, amount) => image.modulate({ saturation: Math.max(0, 1 + amount / 100) }),
);

export const hue = effect(
  { name: 'hue', type: 'integer', minimum: 0, maximum: 360, sets: ['A', 'B'], description: 'Hue rotation in degrees.' },
  (image, amount) => image.modulate({ hue: amount }),
);

export const gamma = defineParam(
  { name: 'gamma', type: 'number', minimum: 1, maximum: 3, defaultA: 2.2, step: 0.1, sets: ['A', 'B'], description: 'Display gamma; midtones scale by exponent 2.2 / gamma (2.2 = unchanged). Applied only when given; rounded to steps of 0.1.' },
  {
    resolve: (plan, value) => {
      plan.gamma = value;
    },
    key: (plan) => pairIf('gamma', plan.gamma),
    stage: 'effects',
    applies: (plan) => plan.gamma !== undefined,
    // Display gamma relative to 2.2: net exponent 2.2 / gamma on midtones (2.2 = unchanged).
    apply: (image, plan) => image.gamma(2.2, plan.gamma),
  },
);

export const grayscale = defineParam(
  { name: 'grayscale', type: 'boolean', sets: ['A', 'B'], description: 'Greyscale output.' },
  {
    resolve: (plan, value) => {
      if (value) plan.grayscale = true;
    },
    key: (plan) => (plan.grayscale ? [['grayscale', '1']] : []),
    stage: 'effects',
    applies: (plan) => plan.grayscale === true,
    apply: (image) => image.grayscale(),
  },
);
