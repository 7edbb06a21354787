// params → sharp pipeline → encoded bytes. Runs in worker processes only.
import sharp from 'sharp';
import { FORMAT_MIME, type TransformPlan } from './params.js';
import { OPERATIONS, OPERATION_ORDER } from './operations.js';

export interface EncoderSettings {
  avifEffort: number;
  webpEffort: number;
  maxInputPixels: number;
}

export interface RenderedImage {
  buffer: Buffer;
  width: number;
  height: number;
  contentType: string;
}

export async function renderDerivative(input: Buffer, plan: TransformPlan, settings: EncoderSettings): Promise<RenderedImage> {
  // rotate() without arguments applies EXIF orientation first; colour ends up sRGB.
  let image = sharp(input, { limitInputPixels: settings.maxInputPixels, failOn: 'error' }).rotate();
  for (const name of OPERATION_ORDER) {
    const op = OPERATIONS[name];
    if (op.applies(plan)) image = op.apply(image, plan);
  }
  image = image.toColourspace('srgb');
  // Keep only the colour profile (as sRGB); opt strips every piece of metadata.
  if (!plan.opt) image = image.withIccProfile('srgb');
  switch (plan.format) {
    case 'jpeg':
      image = image.flatten({ background: '#ffffff' }).jpeg({ quality: plan.quality, mozjpeg: plan.opt, progressive: plan.opt });
      break;
    case 'png':
      image = image.png({ compressionLevel: plan.opt ? 9 : 6, adaptiveFiltering: plan.opt, progressive: plan.opt });
      break;
    case 'webp':
      image = image.webp({ quality: plan.quality, effort: plan.opt ? Math.max(4, settings.webpEffort) : settings.webpEffort, smartSubsample: plan.opt });
      break;
    case 'avif':
      image = image.avif({ quality: plan.quality, effort: settings.avifEffort });
      break;
  }
  const { data, info } = await image.toBuffer({ resolveWithObject: true });
  return { buffer: data, width: info.width, height: info.height, contentType: FORMAT_MIME[plan.format] };
}
