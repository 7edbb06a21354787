// params → sharp pipeline → encoded bytes. Runs in worker processes only.
import sharp, { type OutputInfo, type Sharp } from 'sharp';
import { hasSrgbPrimaries } from './colour-profile.js';
import { readJpegHeader } from './jpeg-header.js';
import { FORMAT_MIME, type TransformPlan } from './params.js';
import { OPERATIONS, OPERATION_ORDER, SHARP_GRAVITY, type SourceSize } from './operations.js';

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

/** Bytes a plan needs besides its source (read by the worker from storage). */
export interface RenderInputs {
  /** The watermark's original, when plan.watermark is set. */
  watermark?: Buffer;
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

/** Whether the plan cuts, turns, mirrors or trims the original before resizing. */
function hasGeometryStage(plan: TransformPlan): boolean {
  return plan.crop !== undefined || plan.rot !== undefined || plan.flip !== undefined || plan.trim !== undefined;
}

type Raw = { data: Buffer; info: OutputInfo };

async function materialise(image: Sharp): Promise<Raw> {
  return image.raw().toBuffer({ resolveWithObject: true });
}

function fromRaw(raw: Raw): Sharp {
  return sharp(raw.data, { raw: { width: raw.info.width, height: raw.info.height, channels: raw.info.channels } });
}

/**
 * crop → rot → flip → trim on the auto-oriented original, each step materialised (sharp runs its
 * own operations in a fixed order: mirroring before rotating, trimming before extracting), so
 * the result is exactly these steps in this order. Lossless; the pixels come out as sRGB.
 */
async function geometryStage(input: Buffer, plan: TransformPlan, settings: EncoderSettings, srgb: boolean): Promise<Raw> {
  let first = sharp(input, { limitInputPixels: settings.maxInputPixels, failOn: 'error', ignoreIcc: srgb }).autoOrient();
  if (plan.crop) first = first.extract(plan.crop);
  if (!srgb) first = first.toColourspace('srgb');
  let raw = await materialise(first);
  if (plan.rot !== undefined) raw = await materialise(fromRaw(raw).rotate(plan.rot));
  if (plan.flip === 'v' || plan.flip === 'hv') raw = await materialise(fromRaw(raw).flip());
  if (plan.flip === 'h' || plan.flip === 'hv') raw = await materialise(fromRaw(raw).flop());
  if (plan.trim !== undefined) raw = await materialise(fromRaw(raw).trim({ threshold: plan.trim }));
  return raw;
}

/** The watermark, scaled to its share of the output width, its alpha multiplied by the opacity. */
async function watermarkOverlay(bytes: Buffer, plan: TransformPlan, width: number, height: number, settings: EncoderSettings): Promise<Raw> {
  const wm = plan.watermark!;
  const { data, info } = await sharp(bytes, { limitInputPixels: settings.maxInputPixels })
    .autoOrient()
    .resize({ width: Math.max(1, Math.round(width * wm.scale)), height, fit: 'inside' })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const factor = wm.opacity / 100;
  for (let i = 3; i < data.length; i += 4) data[i] = Math.round(data[i] * factor);
  return { data, info };
}

function encode(image: Sharp, plan: TransformPlan, settings: EncoderSettings): Sharp {
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
}

export async function renderDerivative(input: Buffer, plan: TransformPlan, settings: EncoderSettings, inputs: RenderInputs = {}): Promise<RenderedImage> {
  // Output is sRGB with every piece of metadata stripped, the colour profile included (untagged
  // images are sRGB to browsers, as imgproxy's default). An sRGB source, untagged or tagged, needs
  // no colour transform: its profile is ignored. Any other (CMYK, Display P3, Adobe RGB, 16-bit,
  // grey) is converted to sRGB through its profile.
  let srgb = await isSrgbSource(input);
  let image: Sharp;
  let source: SourceSize | undefined;
  if (hasGeometryStage(plan)) {
    const raw = await geometryStage(input, plan, settings, srgb);
    image = fromRaw(raw);
    source = { width: raw.info.width, height: raw.info.height };
    srgb = true;
  } else {
    // autoOrient applies the EXIF orientation first; an animated WebP keeps its frames (plan.animated).
    image = sharp(input, { limitInputPixels: settings.maxInputPixels, failOn: 'error', ignoreIcc: srgb, animated: plan.animated === true }).autoOrient();
    if (plan.focus) {
      const meta = await image.metadata();
      source = { width: meta.autoOrient?.width ?? meta.width ?? 0, height: meta.autoOrient?.height ?? meta.height ?? 0 };
    }
  }
  for (const name of OPERATION_ORDER) {
    const op = OPERATIONS[name];
    if (op.applies(plan)) image = op.apply(image, plan, source);
  }
  if (!srgb) image = image.toColourspace('srgb');
  if (plan.watermark && inputs.watermark) {
    // Composited onto the finished pixels, whose size only the resize knows.
    const base = await materialise(image);
    const overlay = await watermarkOverlay(inputs.watermark, plan, base.info.width, base.info.height, settings);
    const composited = await materialise(
      fromRaw(base).composite([
        { input: overlay.data, raw: { width: overlay.info.width, height: overlay.info.height, channels: 4 }, gravity: SHARP_GRAVITY[plan.watermark.gravity] },
      ]),
    );
    // The overlay's alpha must not give an opaque picture an alpha channel.
    image = base.info.channels === 3 ? fromRaw(composited).removeAlpha() : fromRaw(composited);
  }
  image = encode(image, plan, settings);
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
  // An animated output reports the height of all frames stacked; its frame height is pageHeight.
  const height = plan.animated && info.pageHeight ? info.pageHeight : info.height;
  return { buffer: data, width: info.width, height, contentType: FORMAT_MIME[plan.format] };
}
