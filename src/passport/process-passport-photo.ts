// The passport-photo pipeline: decode -> detect -> refine (level) -> segment (crown) -> plan the
// spec-exact crop -> render -> enhance -> composite on the spec background -> measure (output face,
// halo, JPEG within the kB limits) -> check (-> optional print sheet). Pure library: no HTTP, no
// queue. Models load once per process. Each stage is a function over a typed context
// (pipeline/context.ts); where the work runs (threads, shares, prefetch) is the scheduler's.
import { checkRequest, decode, detect, refine } from './pipeline/find-face.js';
import { plan, segment } from './pipeline/frame-photo.js';
import { composite, enhance, render } from './pipeline/make-photo.js';
import { check, measure } from './pipeline/report.js';
import { PassportScheduler, type PhotoSchedule } from './pipeline/scheduler.js';
import type { PassportOptions, PassportResult } from './passport-result.js';

export { SIGNIFICANT_FACE_RATIO } from '../vision/face-detector.js';
export { faceBoxFromFields, type NormalizedBox } from './face-box.js';
export { MAX_UPSCALE } from './pipeline/find-face.js';
export type { PassportMeasurements, PassportOptions, PassportResult } from './passport-result.js';

/** The photos in progress in this process share its threads through one scheduler. */
const scheduler = new PassportScheduler();

export function processPassportPhoto(input: Buffer, options: PassportOptions): Promise<PassportResult> {
  return scheduler.run((schedule) => runPipeline(input, options, schedule));
}

/** The stages in order; `schedule` says where their work runs. */
export async function runPipeline(input: Buffer, options: PassportOptions, schedule: PhotoSchedule): Promise<PassportResult> {
  const request = checkRequest(input, options, schedule);
  const decoded = await decode(request);
  const detected = await detect(decoded);
  const refined = await refine(detected);
  const segmented = await segment(refined);
  const planned = await plan(segmented);
  const rendered = await render(planned);
  const enhanced = enhance(rendered);
  const composited = composite(enhanced);
  const measured = await measure(composited);
  return check(measured);
}
