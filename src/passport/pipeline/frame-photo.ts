// The middle stages: the person segmented around the face (crown, headwear), the spec-exact crop
// planned, and the pixels it is rendered from fetched.
import { affineFromFrame } from '../../vision/face-frame.js';
import { segmentPerson } from '../../vision/segmenter.js';
import { renderWarp, warpFloatBilinearRows, warpRgbaBilinear, warpSource } from '../../vision/warp.js';
import { boxMean } from '../background.js';
import { crownFromMask, planCrop, type FrameMask } from '../geometry.js';
import { HEAD_EXTENT, headInFrame, measureHeadwear } from '../head-extent.js';
import { withNoiseReduced } from '../noise.js';
import type { Planned, Refined, Segmented } from './context.js';
import { faceTooSmall, MAX_UPSCALE } from './find-face.js';

/** Long side of the region rendered for the segmenter (the model itself runs at 256 px). */
export const SEGMENTATION_MAX_SIDE = 384;
/** Segmentation region around the face, in face-box heights. */
const SEG_REGION = { side: 1.6, above: 1.4, belowChin: 1.2 };
/**
 * The head segmented again, closer (withCloserHead): a square `side` face-box heights wide from `above`
 * over the crown (its outline gets ~1.8x the model's pixels). Its mask decides within `nearOutline`
 * region-mask pixels (a fifth of the face box's height) of the region mask's outline, where the closer
 * view sees sharper (old background beside an ear, a dark gap between a cap and the hair); elsewhere the
 * region mask does (a part the close view misses stays). Above the face box it only adds person (in a
 * noisy photo it drops parts of a light cap's crown the region view keeps). Faded out over `margin` of
 * the side to its border and the chin (below it, dark clothes on dark lost edge pixels).
 */
const HEAD_REGION = { side: 2.0, above: 0.1, nearOutline: 24, margin: 0.1 };

/**
 * Segment the region around the face (levelled), then the crown from the person mask within the
 * face's column band. With headwear, the plan and the measures use the head estimated under it
 * (for a detected face, not a bare box).
 */
export async function segment(r: Refined): Promise<Segmented> {
  const { face, frame } = r;
  const src = r.decoded.image;
  const bh = face.boxHeight;
  const a0 = face.centerA - SEG_REGION.side * bh;
  const b0 = face.boxTopB - SEG_REGION.above * bh;
  const regionW = 2 * SEG_REGION.side * bh;
  const regionH = face.chinB + SEG_REGION.belowChin * bh - b0;
  const step = Math.max(regionW, regionH) / SEGMENTATION_MAX_SIDE;
  const rw = Math.max(16, Math.round(regionW / step));
  const rh = Math.max(16, Math.round(regionH / step));
  // Beyond the photo's sides and bottom the segmenter sees its edge pixels continue (beside a band of fill, backdrop
  // at the edge by a shoulder reads as person); above, the fill (a cap at the top, continued upward, would raise the crown).
  const region = await renderWarp(src, affineFromFrame(frame, a0, b0, step), rw, rh, (img, m) => warpRgbaBilinear(img, m, rw, rh, r.background, true));
  r.timer.lap('geometry');
  const wide: FrameMask = { data: await segmentPerson(region), width: rw, height: rh, a0, b0, step };
  const crown = crownFromMask(face, wide);
  const mask = r.removeBackground ? await withCloserHead(r, wide, crown.crownB) : wide;
  r.timer.lap('segment');
  const headwear = crown.source === 'mask' ? measureHeadwear(region, wide, face, crown.crownB) : null;
  const underHeadwear = headwear?.detected ? r.chosen.hasKeypoints : null;
  const crownB = underHeadwear ? face.boxTopB - HEAD_EXTENT.CROWN_UNDER_HEADWEAR_RATIO * bh : crown.crownB;
  return {
    ...r,
    mask,
    crownB,
    crownSource: underHeadwear ? 'under_headwear' : crown.source,
    maskCrownSource: crown.source,
    headwear,
    underHeadwear,
    inFrame: headInFrame(frame, face, crownB, src.width, src.height),
  };
}

/** The region mask, the close mask near its outline (HEAD_REGION). */
async function withCloserHead(r: Refined, wide: FrameMask, crownB: number): Promise<FrameMask> {
  const n = SEGMENTATION_MAX_SIDE;
  const step = (HEAD_REGION.side * r.face.boxHeight) / n;
  const [ha0, hb0] = [r.face.centerA - (n * step) / 2, crownB - HEAD_REGION.above * r.face.boxHeight];
  const square = await renderWarp(r.decoded.image, affineFromFrame(r.frame, ha0, hb0, step), n, n, (img, m) => warpRgbaBilinear(img, m, n, n, r.background, true));
  const close = await segmentPerson(square);
  const { width: gw, height: gh } = wide;
  const out = wide.data.slice();
  const near = boxMean(out.map((p) => (p > 0.5 ? 1 : 0)), gw, gh, HEAD_REGION.nearOutline);
  const k = wide.step / step;
  const [ox, oy] = [(wide.a0 - ha0) / step, (wide.b0 - hb0) / step];
  const closeOnGrid = warpFloatBilinearRows(close, n, n, { ox, oy, dux: k, duy: 0, dvx: 0, dvy: k }, gw, 0, gh);
  const [faceTopY, chinY] = [(r.face.boxTopB - hb0) / step, Math.min(n, (r.face.chinB - hb0) / step)];
  for (let i = 0; i < out.length; i++) {
    const cx = ((i % gw) + 0.5) * k + ox;
    const cy = (Math.floor(i / gw) + 0.5) * k + oy;
    const inSquare = Math.min(cx, cy, n - cx, chinY - cy) / (HEAD_REGION.margin * n);
    const w = Math.min(1, inSquare, (1 - Math.abs(2 * near[i] - 1)) / 0.2);
    if (w > 0 && (closeOnGrid[i] > out[i] || cy >= faceTopY)) out[i] += w * (closeOnGrid[i] - out[i]);
  }
  return { ...wide, data: out };
}

/**
 * Plan the spec-exact crop, refuse a head that would need too much enlargement, and fetch the
 * full-size pixels it samples (prefetched or decoded now), reduced to about the output's sampling.
 */
export async function plan(s: Segmented): Promise<Planned> {
  const cropPlan = planCrop(s.spec, s.frame, s.face, s.crownB);
  const headSrc = s.face.chinB - s.crownB;
  if (cropPlan.scale / s.fullPerWork > MAX_UPSCALE) throw faceTooSmall(s.spec, headSrc * s.fullPerWork, s.targetHeadPx);
  s.timer.lap('geometry');
  const { width: W, height: H } = s.spec.digital;
  const full = await s.schedule.fullSizeRegion(s.decoded, affineFromFrame(s.frame, cropPlan.a0, cropPlan.b0, 1 / cropPlan.scale), W, H);
  s.timer.lap('decode');
  const warped = await warpSource(full.image, full.map, W, H);
  // A large JPEG's photo is rendered from pixels decoded apart from the working copy: their own noise.
  const source = s.decoded.shrink > 1 ? { ...warped, image: withNoiseReduced(warped.image).image } : warped;
  const { mask } = s;
  const maskStep = 1 / (cropPlan.scale * mask.step);
  return {
    ...s,
    plan: cropPlan,
    job: {
      source: source.image,
      map: source.map,
      width: W,
      height: H,
      fill: s.background,
      mask: { data: mask.data, width: mask.width, height: mask.height, map: { ox: (cropPlan.a0 - mask.a0) / mask.step, oy: (cropPlan.b0 - mask.b0) / mask.step, dux: maskStep, duy: 0, dvx: 0, dvy: maskStep } },
      faceTopRow: Math.round((s.face.boxTopB - cropPlan.b0) * cropPlan.scale),
    },
  };
}
