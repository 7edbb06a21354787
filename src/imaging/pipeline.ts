// plan → sharp pipeline → encoded bytes: the registry's pixel steps, stage by stage (see Stage in
// transform-param.ts). Runs in worker processes only.
import sharp, { type OutputInfo, type Sharp, type SharpOptions } from 'sharp';
import { hasSrgbPrimaries } from './colour-profile.js';
import { readJpegHeader, type JpegHeader } from './jpeg-header.js';
import { fromDecodedSource } from './decoded-source.js';
import { detectFaces as detectFacesOf } from './preview.js';
import { chooseQuality } from './auto-quality.js';
import { cutOutPeople } from './background-removal.js';
import { FORMAT_MIME, PIXEL_STEPS, jpegBackground, searchesQuality, type TransformPlan } from './params.js';
import type { ApplyContext, EncoderSettings, AnyParamHandler, RawPixels, RenderInputs, RenderNotes, Size, Stage } from './transform-param.js';

export type { EncoderSettings, RenderInputs } from './transform-param.js';

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
  /** The quality q=auto chose (absent when the plan's number was used), and the steps' other notes. */
  notes: RenderNotes;
}

/**
 * Whether the source is 8-bit sRGB already: untagged (browsers read it as sRGB) or tagged with an
 * sRGB profile. Such a source needs no per-pixel colour transform (header read only).
 */
async function isSrgbSource(input: Buffer, jpeg: JpegHeader | null): Promise<boolean> {
  // A JPEG's header says it without libvips: 3 components of 8 bits are sRGB to libvips.
  if (jpeg) return jpeg.precision === 8 && jpeg.components === 3 && (jpeg.icc === undefined || hasSrgbPrimaries(jpeg.icc));
  const meta = await sharp(input, { limitInputPixels: false }).metadata();
  return meta.space === 'srgb' && (meta.depth === undefined || meta.depth === 'uchar') && (meta.icc === undefined || hasSrgbPrimaries(meta.icc));
}

async function materialise(image: Sharp): Promise<RawPixels> {
  return image.raw().toBuffer({ resolveWithObject: true });
}

function fromRaw(raw: RawPixels): Sharp {
  return sharp(raw.data, { raw: { width: raw.info.width, height: raw.info.height, channels: raw.info.channels } });
}

const load = (input: Buffer, options: SharpOptions): Sharp => sharp(input, options);

const detectFaces = (raw: RawPixels) => detectFacesOf(fromRaw(raw));

/** The plan's pixel steps of one stage, in registry order. */
function stepsOf(plan: TransformPlan, stage: Stage): AnyParamHandler[] {
  return PIXEL_STEPS.filter((p) => p.stage === stage && p.applies!(plan));
}

async function run(image: Sharp, steps: AnyParamHandler[], plan: TransformPlan, ctx: ApplyContext): Promise<Sharp> {
  for (const step of steps) image = await step.apply!(image, plan, ctx);
  return image;
}

export async function renderDerivative(input: Buffer, plan: TransformPlan, settings: EncoderSettings, inputs: RenderInputs = {}): Promise<RenderedImage> {
  // Output is sRGB with every piece of metadata stripped, the colour profile included (untagged
  // images are sRGB to browsers, as imgproxy's default). An sRGB source, untagged or tagged, needs
  // no colour transform: its profile is ignored. Any other (CMYK, Display P3, Adobe RGB, 16-bit,
  // grey) is converted to sRGB through its profile.
  const jpeg = readJpegHeader(input);
  let srgb = await isSrgbSource(input, jpeg);
  let image: Sharp;
  let sourceSize: () => Promise<Size>;
  const ctx: ApplyContext = { settings, inputs, sourceSize: () => sourceSize(), load, materialise, fromRaw, detectFaces, cutOutPeople, notes: {} };
  const decode = stepsOf(plan, 'decode');
  const geometry = stepsOf(plan, 'geometry');
  if (decode.length + geometry.length > 0) {
    // On the auto-oriented original, each step materialised (sharp runs its own operations in a
    // fixed order: mirroring before rotating, trimming before extracting), so the result is exactly
    // these steps in registry order. Lossless; the pixels come out as sRGB.
    let first = await run(load(input, { limitInputPixels: settings.maxInputPixels, failOn: 'error', ignoreIcc: srgb }).autoOrient(), decode, plan, ctx);
    if (!srgb) first = first.toColourspace('srgb');
    let raw = await materialise(first);
    for (const step of geometry) raw = await materialise(await step.apply!(fromRaw(raw), plan, ctx));
    image = fromRaw(raw);
    const size = { width: raw.info.width, height: raw.info.height };
    sourceSize = async () => size;
    srgb = true;
  } else {
    // autoOrient applies the EXIF orientation first; an animated WebP keeps its frames (plan.animated).
    const decoded = load(input, { limitInputPixels: settings.maxInputPixels, failOn: 'error', ignoreIcc: srgb, animated: plan.animated === true }).autoOrient();
    image = decoded;
    sourceSize = async () => {
      const meta = await decoded.metadata();
      return { width: meta.autoOrient?.width ?? meta.width ?? 0, height: meta.autoOrient?.height ?? meta.height ?? 0 };
    };
  }
  image = await run(image, [...stepsOf(plan, 'resize'), ...stepsOf(plan, 'effects')], plan, ctx);
  if (!srgb) image = image.toColourspace('srgb');
  image = await run(image, stepsOf(plan, 'composite'), plan, ctx);
  // The decode skipped when the worker kept this original's pixels (same output).
  image = await fromDecodedSource(image, input, jpeg, srgb, inputs.decodedSource);
  if (searchesQuality(plan)) return renderAutoQuality(image, plan, ctx);
  image = await run(image, stepsOf(plan, 'encode'), plan, ctx);
  const { data, info } = await encode(image, settings);
  // An animated output reports the height of all frames stacked; its frame height is pageHeight.
  const height = plan.animated && info.pageHeight ? info.pageHeight : info.height;
  return { buffer: data, width: info.width, height, contentType: FORMAT_MIME[plan.format], notes: ctx.notes };
}

/** Runs the pipeline to bytes within the render deadline. */
async function encode(image: Sharp, settings: EncoderSettings): Promise<{ data: Buffer; info: OutputInfo }> {
  const timeoutSeconds = settings.timeoutSeconds ?? 0;
  if (timeoutSeconds > 0) image = image.timeout({ seconds: timeoutSeconds });
  try {
    return await image.toBuffer({ resolveWithObject: true });
  } catch (err) {
    const timedOut = timeoutSeconds > 0 && err instanceof Error ? /^timeout: (\d+)% complete/.exec(err.message) : null;
    if (timedOut) throw new RenderTimeoutError(timeoutSeconds, Number(timedOut[1]));
    throw err;
  }
}

/**
 * q=auto: the finished pixels are materialised once (flattened first for JPEG, as its encoder
 * does), each candidate quality is encoded from them and decoded again, and the chosen
 * candidate's bytes are the output (no further encode).
 */
async function renderAutoQuality(image: Sharp, plan: TransformPlan, ctx: ApplyContext): Promise<RenderedImage> {
  const finished = await materialise(plan.format === 'jpeg' ? image.flatten({ background: jpegBackground(plan) }) : image);
  const encodeAt = async (quality: number) => {
    const encoded = await encode(await run(fromRaw(finished), stepsOf(plan, 'encode'), { ...plan, quality }, ctx), ctx.settings);
    const decoded = await materialise(sharp(encoded.data));
    return { buffer: encoded.data, decoded };
  };
  const chosen = await chooseQuality(plan.format as Exclude<TransformPlan['format'], 'png'>, plan.autoQuality!, finished, encodeAt);
  ctx.notes.quality = chosen.quality;
  return { buffer: chosen.encoded.buffer, width: finished.info.width, height: finished.info.height, contentType: FORMAT_MIME[plan.format], notes: ctx.notes };
}
