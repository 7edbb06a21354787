// The encoded output: q, f (its step is the encoder), opt.
import { negotiateFormat, type OutputFormat } from '../formats.js';
import { defineParam } from '../transform-param.js';

export const FORMAT_VALUES = ['auto', 'webp', 'avif', 'jpeg', 'jpg', 'png'] as const;

/** Per-format quality used by opt=true, chosen for similar perceived quality (see README). */
export const OPT_QUALITY: Record<OutputFormat, number> = { jpeg: 78, webp: 75, avif: 56, png: 100 };

const DEFAULT_QUALITY = 80;

declare module '../transform-param.js' {
  interface TransformPlan {
    quality: number;
    format: OutputFormat;
    opt: boolean;
    /** The source has several frames and the output keeps them (WebP); decided by the front door. */
    animated?: boolean;
  }
}

export const q = defineParam(
  { name: 'q', type: 'integer', minimum: 1, maximum: 100, defaultA: DEFAULT_QUALITY, defaultB: DEFAULT_QUALITY, sets: ['A', 'B'], description: 'Encoder quality.' },
  {
    resolve: (plan, value) => {
      plan.quality = value ?? DEFAULT_QUALITY;
    },
    key: (plan) => [['q', String(plan.quality)]],
  },
);

export const f = defineParam(
  { name: 'f', type: 'string', enum: FORMAT_VALUES, defaultA: 'auto', defaultB: 'auto', sets: ['A', 'B'], description: 'Output format; auto negotiates from Accept.' },
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
    key: (plan) => [['f', plan.format]],
    stage: 'encode',
    applies: () => true,
    apply: (image, plan, { settings }) => {
      switch (plan.format) {
        case 'jpeg':
          return image.flatten({ background: `#${plan.bg ?? 'ffffff'}` }).jpeg({ quality: plan.quality, mozjpeg: plan.opt, progressive: plan.opt });
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
  { name: 'opt', type: 'boolean', defaultB: false, sets: ['B'], description: 'Smart optimization: best accepted format, per-format perceptual quality, metadata stripped, progressive output.' },
  {
    resolve: (plan, _value, request, ctx) => {
      plan.opt = optimising(request, ctx.set);
      if (plan.opt) plan.quality = OPT_QUALITY[plan.format];
    },
    key: (plan) => (plan.opt ? [['opt', '1']] : []),
    // Read by f's encoder (mozjpeg, progressive, effort).
  },
);

