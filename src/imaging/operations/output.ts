// The encoded output: q, f (its step is the encoder), opt.
import { negotiateFormat, type OutputFormat } from '../formats.js';
import { defineParam, type TransformPlan } from '../transform-param.js';

export const FORMAT_VALUES = ['auto', 'webp', 'avif', 'jpeg', 'jpg', 'png'] as const;

const DEFAULT_QUALITY = 80;

/** q=auto's variants: how close to the unencoded pixels the output stays (targets in auto-quality.ts). */
export const AUTO_QUALITY_VARIANTS = ['best', 'good', 'eco'] as const;
export type AutoQualityVariant = (typeof AUTO_QUALITY_VARIANTS)[number];
/** The variant plain `q=auto` (and opt=true) means. */
const DEFAULT_AUTO_VARIANT: AutoQualityVariant = 'good';
const AUTO_KEYWORDS = ['auto', ...AUTO_QUALITY_VARIANTS.map((v) => `auto:${v}` as const)] as const;

/** What a JPEG's transparent pixels become: bg, else white. */
export function jpegBackground(plan: TransformPlan): string {
  return `#${plan.bg ?? 'ffffff'}`;
}

/** Whether q=auto chooses this output's quality (PNG is lossless: its q is the number as before). */
function autoQualityApplies(plan: TransformPlan): boolean {
  return plan.autoQuality !== undefined && plan.format !== 'png';
}

/** Whether the worker searches the quality (an animation is encoded at the default quality). */
export function searchesQuality(plan: TransformPlan): boolean {
  return autoQualityApplies(plan) && plan.animated !== true;
}

declare module '../transform-param.js' {
  interface TransformPlan {
    /** The encoder quality; with autoQuality, the search's starting bounds ignore it. */
    quality: number;
    /** q=auto: the worker picks the lowest quality meeting this variant's perceptual target. */
    autoQuality?: AutoQualityVariant;
    format: OutputFormat;
    opt: boolean;
    /** The source has several frames and the output keeps them (WebP). */
    animated?: boolean;
  }
}

export const q = defineParam(
  { name: 'q', type: 'integer', minimum: 1, maximum: 100, keywords: AUTO_KEYWORDS, defaultA: DEFAULT_QUALITY, defaultB: DEFAULT_QUALITY, sets: ['A', 'B'], description: 'Encoder quality, or auto[:best|good|eco]: the lowest quality that stays within a perceptual target.' },
  {
    resolve: (plan, value) => {
      if (typeof value === 'string') {
        plan.quality = DEFAULT_QUALITY;
        plan.autoQuality = value === 'auto' ? DEFAULT_AUTO_VARIANT : (value.slice('auto:'.length) as AutoQualityVariant);
      } else {
        plan.quality = value ?? DEFAULT_QUALITY;
      }
    },
    // Numeric qualities keep their keys; auto is keyed by its variant (the chosen number depends on the pixels).
    key: (plan) => [['q', autoQualityApplies(plan) ? `auto:${plan.autoQuality}` : String(plan.quality)]],
  },
);

export const f = defineParam(
  { name: 'f', type: 'string', enum: FORMAT_VALUES, defaultA: 'auto', defaultB: 'auto', sets: ['A', 'B'], withPresetsOnly: true, description: 'Output format; auto negotiates from Accept.' },
  {
    resolve: (plan, value, request, ctx) => {
      // An explicit f (auto included) wins over a vanity extension; opt negotiates unless f is explicit.
      const requested = value !== undefined ? value : optimising(request, ctx.set) ? undefined : ctx.negotiation.pathFormat;
      if (requested === undefined || requested === 'auto') {
        plan.format = negotiateFormat(ctx.negotiation);
        ctx.dependsOnAccept = true;
      } else {
        plan.format = requested === 'jpg' ? 'jpeg' : requested;
      }
    },
    // Frames survive into WebP output when nothing needs the pixels of one frame alone.
    finish: (plan, ctx) => {
      const animated = (ctx.source?.frames ?? 1) > 1;
      if (animated && plan.format === 'webp' && !plan.crop && !plan.rot && !plan.flip && !plan.trim && !plan.focus && !plan.watermark && plan.blurFaces === undefined && plan.pixelateFaces === undefined && !plan.removeBg) plan.animated = true;
    },
    key: (plan) => [['f', plan.format]],
    stage: 'encode',
    applies: () => true,
    apply: (image, plan, { settings }) => {
      switch (plan.format) {
        case 'jpeg':
          return image.flatten({ background: jpegBackground(plan) }).jpeg({ quality: plan.quality, mozjpeg: plan.opt, progressive: plan.opt });
        case 'png':
          return image.png({ compressionLevel: plan.opt ? 9 : 6, adaptiveFiltering: plan.opt, progressive: plan.opt });
        case 'webp':
          return image.webp({ quality: plan.quality, effort: plan.opt ? Math.max(4, settings.webpEffort) : settings.webpEffort, smartSubsample: plan.opt });
        case 'avif':
          return image.avif({ quality: plan.quality, effort: settings.avifEffort });
      }
    },
  },
);

function optimising(request: Readonly<Record<string, unknown>>, set: string): boolean {
  return set === 'B' && request.opt === true;
}

export const opt = defineParam(
  { name: 'opt', type: 'boolean', defaultB: false, sets: ['B'], description: 'Smart optimization: best accepted format, q=auto unless q is given, metadata stripped, progressive output.' },
  {
    resolve: (plan, _value, request, ctx) => {
      plan.opt = optimising(request, ctx.set);
      // opt chooses the quality (an explicit auto variant is kept); PNG is lossless at 100.
      if (plan.opt && plan.format === 'png') plan.quality = 100;
      else if (plan.opt) plan.autoQuality ??= DEFAULT_AUTO_VARIANT;
    },
    key: (plan) => (plan.opt ? [['opt', '1']] : []),
    // Read by f's encoder (mozjpeg, progressive, effort).
  },
);

