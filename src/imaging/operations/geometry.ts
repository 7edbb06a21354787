// Geometry on the auto-oriented original, before the resize: crop, rot, flip, trim. Each runs on the
// pixels of the step before (the pipeline materialises between them), because sharp alone applies
// its operations in a fixed order (mirroring before rotating, trimming before extracting).
import { defineParam, pairIf } from '../transform-param.js';

export const FLIP_VALUES = ['h', 'v', 'hv'] as const;

export interface CropRect {
  left: number;
  top: number;
  width: number;
  height: number;
}

declare module '../transform-param.js' {
  interface TransformPlan {
    crop?: CropRect;
    rot?: 90 | 180 | 270;
    flip?: (typeof FLIP_VALUES)[number];
    trim?: number;
  }
}

/** `x,y,w,h` (validated by the schema's pattern) as a rectangle. */
export function parseCrop(value: string): CropRect {
  const [left, top, width, height] = value.split(',').map(Number);
  return { left, top, width, height };
}

export const crop = defineParam(
  { name: 'crop', type: 'string', pattern: '^\\d{1,5},\\d{1,5},\\d{1,5},\\d{1,5}$', example: '100,50,800,600', sets: ['A', 'B'], description: 'Rectangle x,y,w,h in pixels of the auto-oriented original, cut before resizing (400 when outside the image).' },
  {
    resolve: (plan, value) => {
      if (value !== undefined) plan.crop = parseCrop(value);
    },
    key: (plan) => (plan.crop ? [['crop', `${plan.crop.left},${plan.crop.top},${plan.crop.width},${plan.crop.height}`]] : []),
    // Cut while the original is decoded.
    stage: 'decode',
    applies: (plan) => plan.crop !== undefined,
    apply: (image, plan) => image.extract(plan.crop!),
  },
);

export const rot = defineParam(
  { name: 'rot', type: 'integer', minimum: 0, maximum: 270, multipleOf: 90, sets: ['A', 'B'], description: 'Clockwise rotation in degrees (0, 90, 180, 270) after EXIF auto-orientation and crop.' },
  {
    resolve: (plan, value) => {
      if (value) plan.rot = value as 90 | 180 | 270;
    },
    key: (plan) => pairIf('rot', plan.rot),
    stage: 'geometry',
    applies: (plan) => plan.rot !== undefined,
    apply: (image, plan) => image.rotate(plan.rot),
  },
);

export const flip = defineParam(
  { name: 'flip', type: 'string', enum: FLIP_VALUES, sets: ['A', 'B'], description: 'Mirror: h (left-right), v (top-bottom) or hv (both), after rot.' },
  {
    resolve: (plan, value) => {
      if (value !== undefined) plan.flip = value;
    },
    key: (plan) => pairIf('flip', plan.flip),
    stage: 'geometry',
    applies: (plan) => plan.flip !== undefined,
    // Two mirrors commute: sharp may apply them in its own order.
    apply: (image, plan) => {
      if (plan.flip === 'v' || plan.flip === 'hv') image = image.flip();
      if (plan.flip === 'h' || plan.flip === 'hv') image = image.flop();
      return image;
    },
  },
);

export const trim = defineParam(
  { name: 'trim', type: 'integer', minimum: 1, maximum: 100, sets: ['A', 'B'], description: "Trims borders of the top-left pixel's colour; the value is the colour-distance threshold." },
  {
    resolve: (plan, value) => {
      if (value !== undefined) plan.trim = value;
    },
    key: (plan) => pairIf('trim', plan.trim),
    stage: 'geometry',
    applies: (plan) => plan.trim !== undefined,
    apply: (image, plan) => image.trim({ threshold: plan.trim }),
  },
);
