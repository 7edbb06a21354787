// Face privacy: blur_faces, pixelate_faces. Every face box (the upload's faces, or detected at
// render when the image has none stored), padded 15 %, is blurred or pixelated on the
// auto-oriented original, so the boxes follow crop, rot, flip, trim, resize and every crop
// strategy exactly (attention and entropy included, whose windows are only known to libvips).
// The strength is given in output pixels and scaled to the original's.
import type { Sharp } from 'sharp';
import type { FaceBox } from '../focus.js';
import { resizeSource } from '../output-size.js';
import { defineParam, pairIf, type ApplyContext, type PlanContext, type RawPixels, type Size, type TransformPlan } from '../transform-param.js';

declare module '../transform-param.js' {
  interface TransformPlan {
    /** blur_faces: Gaussian sigma in output pixels. */
    blurFaces?: number;
    /** pixelate_faces: block side in output pixels. */
    pixelateFaces?: number;
    /** The faces found at upload (0-1 of the auto-oriented original); absent: detected at render. */
    faces?: FaceBox[];
  }
}

/** Each side of a face box grows by this share of the box (hair, ears, chin). */
export const FACE_PADDING = 0.15;

/** Output pixels per pixel of the auto-oriented original (after crop and rot), as the resize scales. */
function outputScale(original: Size, plan: TransformPlan): number {
  const source = resizeSource(original, plan);
  const sx = plan.width !== undefined ? plan.width / source.width : undefined;
  const sy = plan.height !== undefined ? plan.height / source.height : undefined;
  if (sx === undefined && sy === undefined) return 1;
  if (sx === undefined || sy === undefined) return Math.min(plan.fit === 'within' ? 1 : Infinity, (sx ?? sy)!);
  const scale = plan.fit === 'cover' || plan.fit === 'outside' ? Math.max(sx, sy) : plan.fit === 'fill' ? Math.sqrt(sx * sy) : Math.min(sx, sy);
  return plan.fit === 'within' ? Math.min(1, scale) : scale;
}

async function originalSize(image: Sharp): Promise<Size> {
  const meta = await image.metadata();
  return { width: meta.autoOrient?.width ?? meta.width ?? 0, height: meta.autoOrient?.height ?? meta.height ?? 0 };
}

/** Boxes (0-1 of the original) as 0-1 of the crop when there is one. */
function throughCrop(faces: readonly FaceBox[], plan: TransformPlan, original: Size): FaceBox[] {
  const crop = plan.crop;
  if (!crop) return [...faces];
  return faces.map((f) => ({
    x: (f.x * original.width - crop.left) / crop.width,
    y: (f.y * original.height - crop.top) / crop.height,
    w: (f.w * original.width) / crop.width,
    h: (f.h * original.height) / crop.height,
  }));
}

/** Pixel rectangles of the padded boxes, inside the image. */
export function paddedBoxes(faces: readonly FaceBox[], size: Size): { left: number; top: number; width: number; height: number }[] {
  return faces
    .map((f) => {
      const left = Math.max(0, Math.floor((f.x - f.w * FACE_PADDING) * size.width));
      const top = Math.max(0, Math.floor((f.y - f.h * FACE_PADDING) * size.height));
      const right = Math.min(size.width, Math.ceil((f.x + f.w * (1 + FACE_PADDING)) * size.width));
      const bottom = Math.min(size.height, Math.ceil((f.y + f.h * (1 + FACE_PADDING)) * size.height));
      return { left, top, width: right - left, height: bottom - top };
    })
    .filter((r) => r.width > 0 && r.height > 0);
}

/** The obscured region's raw pixels (same size and channels). */
type Obscure = (region: Sharp, box: { width: number; height: number }, amount: number, ctx: ApplyContext) => Promise<Buffer>;

/** Obscures every padded face box of the materialised original; `amount` is in original pixels. */
async function obscureFaces(image: Sharp, plan: TransformPlan, ctx: ApplyContext, amountOut: number, obscure: Obscure): Promise<Sharp> {
  // sRGB first (a CMYK or P3 original is converted through its profile, as the pipeline would).
  const raw: RawPixels = await ctx.materialise(image.toColourspace('srgb'));
  const size = { width: raw.info.width, height: raw.info.height };
  // crop runs before in this stage: the upload's boxes (of the whole original) move with it.
  const faces = plan.faces ? throughCrop(plan.faces, plan, await originalSize(image)) : await ctx.detectFaces(raw);
  const boxes = paddedBoxes(faces, size);
  if (boxes.length === 0) return ctx.fromRaw(raw);
  const amount = amountOut / outputScale(size, plan);
  const patches = await Promise.all(
    boxes.map(async (box) => ({
      input: await obscure(ctx.fromRaw(raw).extract(box), box, amount, ctx),
      raw: { width: box.width, height: box.height, channels: raw.info.channels },
      left: box.left,
      top: box.top,
    })),
  );
  const done = await ctx.materialise(ctx.fromRaw(raw).composite(patches));
  // sharp's composite adds an alpha channel: an opaque original stays without one.
  return ctx.fromRaw(done.info.channels === raw.info.channels ? done : await ctx.materialise(ctx.fromRaw(done).removeAlpha()));
}

/**
 * The upload's face boxes, when the catalog has them (they belong to the version, which the key
 * names); an image without them has its faces detected at render.
 */
function facesFromUpload(plan: TransformPlan, ctx: PlanContext): void {
  const faces = ctx.source?.faces;
  if (faces) plan.faces = faces.map(({ x, y, w, h }) => ({ x, y, w, h }));
}

export const blur_faces = defineParam(
  { name: 'blur_faces', type: 'number', minimum: 1, maximum: 100, step: 0.5, sets: ['A', 'B'], description: 'Blurs every face (padded 15 %): Gaussian sigma in output pixels.' },
  {
    resolve: (plan, value, _request, ctx) => {
      if (value === undefined) return;
      plan.blurFaces = value;
      facesFromUpload(plan, ctx);
    },
    key: (plan) => pairIf('blur_faces', plan.blurFaces),
    stage: 'decode',
    applies: (plan) => plan.blurFaces !== undefined,
    apply: (image, plan, ctx) => obscureFaces(image, plan, ctx, plan.blurFaces!, (region, _box, sigma) => region.blur(Math.max(0.3, sigma)).raw().toBuffer()),
  },
);

export const pixelate_faces = defineParam(
  { name: 'pixelate_faces', type: 'integer', minimum: 2, maximum: 100, sets: ['A', 'B'], description: 'Pixelates every face (padded 15 %): block side in output pixels.' },
  {
    resolve: (plan, value, _request, ctx) => {
      if (value === undefined) return;
      plan.pixelateFaces = value;
      facesFromUpload(plan, ctx);
    },
    key: (plan) => pairIf('pixelate_faces', plan.pixelateFaces),
    stage: 'decode',
    applies: (plan) => plan.pixelateFaces !== undefined,
    apply: (image, plan, ctx) =>
      obscureFaces(image, plan, ctx, plan.pixelateFaces!, async (region, box, block, c) => {
        const cells = { width: Math.max(1, Math.round(box.width / Math.max(1, block))), height: Math.max(1, Math.round(box.height / Math.max(1, block))) };
        // Averaged down to one value per cell, then back up as square cells (two sharp passes: one resize each).
        const small = await c.materialise(region.resize({ ...cells, fit: 'fill' }));
        return c.fromRaw(small).resize({ width: box.width, height: box.height, fit: 'fill', kernel: 'nearest' }).raw().toBuffer();
      }),
  },
);
