// remove_bg: people cut out of the finished pixels. The person segmenter (vision/segmenter.ts, the
// selfie model the passport pipeline uses) runs on a reduced copy; its probability, enlarged to the
// image, is refined at the image's resolution exactly as a passport photo's (passport/edge-bands.ts:
// guided filter, tightening, feather, and the old background's colour removed from the soft edge).
// Runs in workers only.
import sharp from 'sharp';
import { refineEdgesWhole } from '../passport/edge-bands.js';
import { segmentPerson } from '../vision/segmenter.js';
import { warpFloatBilinearRows } from '../vision/warp.js';
import type { RawPixels } from './transform-param.js';

/** Long side of the copy the segmenter sees (the model runs at 256 px; as the passport pipeline's region). */
const SEGMENTATION_SIDE = 384;
/** A person is found when at least this share of the segmenter's pixels is person (probability ≥ 0.5). */
const MIN_PERSON_SHARE = 0.01;

/**
 * The image (sRGB, 1-4 channels) as RGBA with everything but its people transparent, or undefined
 * when no person is found. An alpha the image already has is kept (multiplied).
 */
export async function cutOutPeople(raw: RawPixels): Promise<RawPixels | undefined> {
  const { width, height } = raw.info;
  const image = sharp(raw.data, { raw: { width, height, channels: raw.info.channels } }).toColourspace('srgb');
  const small = await image.clone().resize(SEGMENTATION_SIDE, SEGMENTATION_SIDE, { fit: 'inside' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const sw = small.info.width;
  const sh = small.info.height;
  const prob = await segmentPerson({ data: small.data, width: sw, height: sh, channels: 4 });
  const person = prob.reduce((n, p) => n + (p >= 0.5 ? 1 : 0), 0);
  if (person < MIN_PERSON_SHARE * prob.length) return undefined;
  const rgba = await image.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) rgb.set(rgba.data.subarray(i, i + 3), j);
  const enlarged = warpFloatBilinearRows(prob, sw, sh, { ox: 0, oy: 0, dux: sw / width, duy: 0, dvx: 0, dvy: sh / height }, width, 0, height);
  const { alpha, fg } = refineEdgesWhole({ data: rgb, width, height, channels: 3 }, enlarged, new Uint8Array(width * height).fill(1));
  const out = rgba.data;
  for (let i = 0, j = 0; i < alpha.length; i++, j += 3) {
    out[4 * i] = fg.data[j];
    out[4 * i + 1] = fg.data[j + 1];
    out[4 * i + 2] = fg.data[j + 2];
    out[4 * i + 3] = Math.round(alpha[i] * out[4 * i + 3]);
  }
  return { data: out, info: { ...rgba.info, channels: 4 } };
}
