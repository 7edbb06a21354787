// params → sharp pipeline → encoded bytes. Runs in worker processes only.
import sharp from 'sharp';
import { hasSrgbPrimaries } from './colour-profile.js';
import { readJpegHeader } from './jpeg-header.js';
import { FORMAT_MIME, type TransformPlan } from './params.js';
import { OPERATIONS, OPERATION_ORDER } from './operations.js';

export interface EncoderSettings {
  avifEffort: number;
  webpEffort: number;
  maxInputPixels: number;
  /** libvips stops a render running longer than this (0 = no limit); see RenderTimeoutError. */
  timeoutSeconds?: number;
}

/** A render cancelled by its deadline (libvips reports "timeout: N% complete"). */
export class RenderTimeoutError extends Error {
  constructor(readonly seconds: number, readonly percentDone: number | null) {
    super(`render stopped after ${seconds} s${percentDone !== null ? ` at ${percentDone} %` : ''}`);
  }
}

export interface RenderedImage {
  buffer: Buffer;
  width: number;
  height: number;
  contentType: string;
}

/**
 * Whether the source is 8-bit sRGB already: untagged (browsers read it as sRGB) or tagged with an
 * sRGB profile. Such a source needs no per-pixel colour transform (header read only).
 */
async function isSrgbSource(input: Buffer): Promise<boolean> {
  // A JPEG's header says it without libvips: 3 components of 8 bits are sRGB to libvips.
  const jpeg = readJpegHeader(input);
  if (jpeg) return jpeg.precision === 8 && jpeg.components === 3 && (jpeg.icc === undefined || hasSrgbPrimaries(jpeg.icc));
  const meta = await sharp(input, { limitInputPixels: false }).metadata();
  return meta.space === 'srgb' && (meta.depth === undefined || meta.depth === 'uchar') && (meta.icc === undefined || hasSrgbPrimaries(meta.icc));
}

export async function renderDerivative(input: Buffer, plan: TransformPlan, settings: EncoderSettings): Promise<RenderedImage> {
  // Output is sRGB with every piece of metadata stripped, the colour profile included (untagged
  // images are sRGB to browsers, as imgproxy's default). An sRGB source, untagged or tagged, needs
  // no colour transform: its profile is ignored. Any other (CMYK, Display P3, Adobe RGB, 16-bit,
  // grey) is converted to sRGB through its profile.
  const srgb = await isSrgbSource(input);
  // rotate() without arguments applies EXIF orientation first.
  let image = sharp(input, { limitInputPixels: settings.maxInputPixels, failOn: 'error', ignoreIcc: srgb }).rotate();
  for (const name of OPERATION_ORDER) {
    const op = OPERATIONS[name];
    if (op.applies(plan)) image = op.apply(image, plan);
  }
  if (!srgb) image = image.toColourspace('srgb');
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
  const timeoutSeconds = settings.timeoutSeconds ?? 0;
  if (timeoutSeconds > 0) image = image.timeout({ seconds: timeoutSeconds });
  let output;
  try {
    output = await image.toBuffer({ resolveWithObject: true });
  } catch (err) {
    const timedOut = timeoutSeconds > 0 && err instanceof Error ? /^timeout: (\d+)% complete/.exec(err.message) : null;
    if (timedOut) throw new RenderTimeoutError(timeoutSeconds, Number(timedOut[1]));
    throw err;
  }
  const { data, info } = output;
  return { buffer: data, width: info.width, height: info.height, contentType: FORMAT_MIME[plan.format] };
}
