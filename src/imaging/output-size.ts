// Output geometry of a plan, without sharp: what size sharp's resize gives (its ResolveShrink, then
// the crop or embed of cover and contain), and what crop, rot and pad do around it. Pure, so the
// front door (keyless caps) and the worker (focus crops) share one copy of sharp's rules;
// test/imaging/output-size.test.ts pins it to real sharp output.
import type { Size, TransformPlan } from './transform-param.js';

export type { Size } from './transform-param.js';

type ResizePlan = Pick<TransformPlan, 'width' | 'height' | 'fit'>;

/** The image the resize sees: the crop rectangle, turned by rot (flip keeps the size; trim is unknown before decoding). */
export function resizeSource(original: Size, plan: Pick<TransformPlan, 'crop' | 'rot'>): Size {
  const { width, height } = plan.crop ?? original;
  return plan.rot === 90 || plan.rot === 270 ? { width: height, height: width } : { width, height };
}

/**
 * Size of a `source` resized to the plan's box, as sharp computes it: the shrink factors per axis
 * (one side given: the other follows, except for fill; both: inside/contain take the larger
 * shrink, outside/cover the smaller, fill each its own; within never enlarges), the result
 * rounded to whole pixels; then cover crops and contain pads to exactly the box.
 * Exact for pixels decoded whole (PNG, WebP, and any source after crop or rot). A JPEG resized
 * straight from the file is decoded with shrink-on-load, which rounds an auto-scaled side its own
 * way: that side may differ by up to 1 + the source's aspect ratio (longer / shorter) pixels.
 */
export function resizedSize(source: Size, plan: ResizePlan): Size {
  const { width: w, height: h, fit } = plan;
  if (w === undefined && h === undefined) return { width: source.width, height: source.height };
  let hshrink = w !== undefined ? source.width / w : 1;
  let vshrink = h !== undefined ? source.height / h : 1;
  if (w !== undefined && h !== undefined) {
    if (fit === 'cover' || fit === 'outside') hshrink = vshrink = Math.min(hshrink, vshrink);
    else if (fit !== 'fill') hshrink = vshrink = Math.max(hshrink, vshrink);
  } else if (fit !== 'fill') {
    if (w !== undefined) vshrink = hshrink;
    else hshrink = vshrink;
  }
  if (fit === 'within') {
    hshrink = Math.max(1, hshrink);
    vshrink = Math.max(1, vshrink);
  }
  // Never below one pixel (sharp caps the shrink at the side's length).
  hshrink = Math.min(hshrink, source.width);
  vshrink = Math.min(vshrink, source.height);
  const resized = { width: Math.round(source.width * (1 / hshrink)), height: Math.round(source.height * (1 / vshrink)) };
  // A missing side of the box is the resized side itself.
  const boxW = w ?? resized.width;
  const boxH = h ?? resized.height;
  if (fit === 'cover') return { width: Math.min(boxW, resized.width), height: Math.min(boxH, resized.height) };
  if (fit === 'contain') return { width: Math.max(boxW, resized.width), height: Math.max(boxH, resized.height) };
  return resized;
}

/** Output size of a plan on a `original`-sized (auto-oriented) image: crop, rot, resize, pad. */
export function outputSize(original: Size, plan: ResizePlan & Pick<TransformPlan, 'crop' | 'rot' | 'pad'>): Size {
  const { width, height } = resizedSize(resizeSource(original, plan), plan);
  const pad = 2 * (plan.pad ?? 0);
  return { width: width + pad, height: height + pad };
}
