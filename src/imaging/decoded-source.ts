// Rendering from a JPEG original's decoded pixels instead of its bytes, with the same output.
// The pipeline is built on the original as usual; just before it runs, when what it asks of the
// source is only "decode, then resize", the decode libvips would do (at the JPEG shrink-on-load
// factor sharp picks for that resize) is swapped for the same pixels kept from an earlier render
// (the worker's decoded-source cache). sharp then starts the same resize from the same pixels.
// Anything else (EXIF rotation, geometry before the resize, gamma, another colour pipeline,
// pixels the steps already materialised, entropy and attention crops, sources not 8-bit 3-band
// sRGB) renders the normal way.
import sharp, { type Sharp } from 'sharp';
import type { JpegHeader } from './jpeg-header.js';
import type { DecodedSourceLookup } from './transform-param.js';

/** The part of sharp's pipeline options the shrink-on-load decision reads (sharp's own names). */
interface PipelineOptions {
  input: { buffer?: Buffer; autoOrient?: boolean };
  width: number;
  height: number;
  canvas: 'crop' | 'embed' | 'max' | 'min' | 'ignore_aspect';
  withoutEnlargement: boolean;
  withoutReduction: boolean;
  fastShrinkOnLoad: boolean;
  topOffsetPre: number;
  trimThreshold: number;
  gamma: number;
  colourspacePipeline: string;
  keepGainMap: boolean;
  withGainMap: boolean;
  rotateBefore: boolean;
  orientBefore: boolean;
  angle: number;
  rotationAngle: number;
  joinChannelIn: unknown[];
  withMetadataDensity: number;
  position: number;
}

/** sharp's entropy and attention crops (sharp.strategy): their analysis differs on raw input. */
const CROP_STRATEGIES = new Set([16, 17]);

const optionsOf = (image: Sharp) => (image as unknown as { options: PipelineOptions }).options;

/** sharp's ResolveShrink (src/common.cc) for the factors both axes share. */
function resolveShrink(width: number, height: number, o: PipelineOptions): number {
  let h = 1;
  let v = 1;
  if (o.width > 0 && o.height > 0) {
    h = width / o.width;
    v = height / o.height;
    if (o.canvas === 'crop' || o.canvas === 'min') h = v = Math.min(h, v);
    else if (o.canvas === 'embed' || o.canvas === 'max') h = v = Math.max(h, v);
  } else if (o.width > 0) {
    h = width / o.width;
    if (o.canvas !== 'ignore_aspect') v = h;
  } else if (o.height > 0) {
    v = height / o.height;
    if (o.canvas !== 'ignore_aspect') h = v;
  }
  if (o.withoutReduction) {
    h = Math.min(1, h);
    v = Math.min(1, v);
  } else if (o.withoutEnlargement) {
    h = Math.max(1, h);
    v = Math.max(1, v);
  }
  return Math.min(Math.min(h, width), Math.min(v, height));
}

/**
 * The JPEG shrink-on-load factor sharp 0.35's pipeline (src/pipeline.cc) picks for this
 * pipeline on an upright source of this size, or undefined when the pipeline is not one the
 * decoded pixels can serve exactly.
 */
export function jpegShrinkOnLoad(image: Sharp, input: Buffer, header: JpegHeader): number | undefined {
  const o = optionsOf(image);
  const plain =
    o.input.buffer === input &&
    o.topOffsetPre === -1 &&
    o.trimThreshold < 0 &&
    o.gamma === 0 &&
    o.colourspacePipeline === 'last' &&
    !o.keepGainMap &&
    !o.withGainMap &&
    !o.rotateBefore &&
    !o.orientBefore &&
    o.angle === 0 &&
    o.rotationAngle === 0 &&
    o.joinChannelIn.length === 0 &&
    !CROP_STRATEGIES.has(o.position);
  if (!plain) return undefined;
  if (!(o.width > 0 || o.height > 0)) return 1;
  const shrink = resolveShrink(header.width, header.height, o);
  const factor = o.fastShrinkOnLoad ? 1 : 2;
  let jpeg = shrink >= 8 * factor ? 8 : shrink >= 4 * factor ? 4 : shrink >= 2 * factor ? 2 : 1;
  // sharp lowers the factor where libjpeg's rounding would be visible.
  if (jpeg > 1 && Math.trunc(shrink) === jpeg) jpeg /= 2;
  return jpeg;
}

/**
 * The pipeline started from the decoded pixels when the lookup has them, else the pipeline as
 * it was. `srgb`: the source needs no colour transform (only such sources are served).
 */
export async function fromDecodedSource(image: Sharp, input: Buffer, header: JpegHeader | null, srgb: boolean, lookup: DecodedSourceLookup | undefined): Promise<Sharp> {
  if (!lookup || !header || !srgb) return image;
  const shrink = jpegShrinkOnLoad(image, input, header);
  if (shrink === undefined) return image;
  const decoded = await lookup(shrink, { width: header.width, height: header.height });
  if (!decoded) return image;
  const fromPixels = sharp(decoded.tiff, { limitInputPixels: false });
  // Every operation the steps set up, on the new input; the original's density, which raw pixels
  // lack and a PNG output records, unless the steps set one.
  const options = optionsOf(image);
  Object.assign(optionsOf(fromPixels), { ...options, input: optionsOf(fromPixels).input, withMetadataDensity: options.withMetadataDensity || decoded.density });
  return fromPixels;
}
