// The watermark: wm names another image of the same owner (found by the front door), composited
// onto the finished pixels, whose size only the resize knows; wm_gravity, wm_opacity and wm_scale
// place it.
import { COMPASS_GRAVITIES, SHARP_GRAVITY, type CompassGravity } from './size.js';
import { defineParam, type ApplyContext, type RawPixels, type WatermarkSource } from '../transform-param.js';

export interface WatermarkPlan extends WatermarkSource {
  gravity: CompassGravity;
  opacity: number;
  scale: number;
}

declare module '../transform-param.js' {
  interface TransformPlan {
    watermark?: WatermarkPlan;
  }
}

const DEFAULT_GRAVITY = 'southeast';
const DEFAULT_OPACITY = 50;
const DEFAULT_SCALE = 0.25;

/** The watermark, scaled to its share of the output width, its alpha multiplied by the opacity. */
async function overlay(bytes: Buffer, mark: WatermarkPlan, width: number, height: number, ctx: ApplyContext): Promise<RawPixels> {
  const { data, info } = await ctx
    .load(bytes, { limitInputPixels: ctx.settings.maxInputPixels })
    .autoOrient()
    .resize({ width: Math.max(1, Math.round(width * mark.scale)), height, fit: 'inside' })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const factor = mark.opacity / 100;
  for (let i = 3; i < data.length; i += 4) data[i] = Math.round(data[i] * factor);
  return { data, info };
}

export const wm = defineParam(
  { name: 'wm', type: 'string', pattern: '^[0-9a-f]{24}$', sets: ['A', 'B'], description: 'Watermark: the imageId of another image of the same owner, overlaid on the output.' },
  {
    resolve: (plan, value, _request, ctx) => {
      if (value === undefined || !ctx.watermark) return;
      const { imageId, sourceKey, version } = ctx.watermark;
      plan.watermark = { imageId, sourceKey, version, gravity: DEFAULT_GRAVITY, opacity: DEFAULT_OPACITY, scale: DEFAULT_SCALE };
    },
    key: (plan) => (plan.watermark ? [['wm', `${plan.watermark.imageId}.${plan.watermark.version}`]] : []),
    stage: 'composite',
    applies: (plan) => plan.watermark !== undefined,
    apply: async (image, plan, ctx) => {
      const bytes = ctx.inputs.watermark;
      if (!bytes) return image;
      const mark = plan.watermark!;
      const base = await ctx.materialise(image);
      const over = await overlay(bytes, mark, base.info.width, base.info.height, ctx);
      const composited = await ctx.materialise(
        ctx.fromRaw(base).composite([{ input: over.data, raw: { width: over.info.width, height: over.info.height, channels: 4 }, gravity: SHARP_GRAVITY[mark.gravity] }]),
      );
      // The overlay's alpha must not give an opaque picture an alpha channel.
      return base.info.channels === 3 ? ctx.fromRaw(composited).removeAlpha() : ctx.fromRaw(composited);
    },
  },
);

export const wm_gravity = defineParam(
  { name: 'wm_gravity', type: 'string', enum: COMPASS_GRAVITIES, sets: ['A', 'B'], description: `Where the watermark goes (default ${DEFAULT_GRAVITY}).` },
  {
    resolve: (plan, value) => {
      if (plan.watermark && value !== undefined) plan.watermark.gravity = value;
    },
    key: (plan) => (plan.watermark ? [['wm_gravity', plan.watermark.gravity]] : []),
  },
);

export const wm_opacity = defineParam(
  { name: 'wm_opacity', type: 'integer', minimum: 0, maximum: 100, sets: ['A', 'B'], description: `Watermark opacity in percent (default ${DEFAULT_OPACITY}).` },
  {
    resolve: (plan, value) => {
      if (plan.watermark && value !== undefined) plan.watermark.opacity = value;
    },
    key: (plan) => (plan.watermark ? [['wm_opacity', String(plan.watermark.opacity)]] : []),
  },
);

export const wm_scale = defineParam(
  { name: 'wm_scale', type: 'number', minimum: 0.05, maximum: 1, sets: ['A', 'B'], description: `Watermark width as a share of the output width (default ${DEFAULT_SCALE}).` },
  {
    resolve: (plan, value) => {
      if (plan.watermark && value !== undefined) plan.watermark.scale = value;
    },
    key: (plan) => (plan.watermark ? [['wm_scale', String(plan.watermark.scale)]] : []),
  },
);
