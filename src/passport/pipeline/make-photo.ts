// The photo's stages: rendered from the source with its edges refined, enhanced, composited on the
// spec background.
import { compositeOnBackground } from '../background.js';
import { renderAndRefineEdges, renderRows } from '../edge-bands.js';
import { finishEnhancement, IDENTITY_LUTS, planEnhancement, type Region } from '../enhance.js';
import type { Composited, Enhanced, Planned, Rendered } from './context.js';

/**
 * Render (one bicubic resampling from the source; beyond it: the background colour) and, when the
 * background is replaced, refine the mask's edges and estimate the foreground colours there: on
 * both cores when the schedule says so.
 */
export async function render(p: Planned): Promise<Rendered> {
  if (p.removeBackground) {
    p.timer.lap('render'); // rendered with its edges: counted under background
    const both = await renderAndRefineEdges(p.job, p.schedule.bothCores());
    p.timer.lap('background');
    return { ...p, image: both.image, inside: both.inside, personProb: both.alpha, alpha: both.alpha, fg: both.fg };
  }
  const whole = renderRows(p.job, 0, p.job.height);
  p.timer.lap('render');
  p.timer.lap('background');
  return { ...p, image: whole.image, inside: whole.inside, personProb: whole.prob, alpha: null, fg: whole.image };
}

/** Enhancement: measured on the rendered photo (the face and the person), applied to the foreground colours. */
export function enhance(r: Rendered): Enhanced {
  const { plan, face } = r;
  const k = plan.scale;
  const faceRegion: Region = {
    x0: Math.round((face.centerA - 0.3 * face.boxWidth - plan.a0) * k),
    x1: Math.round((face.centerA + 0.3 * face.boxWidth - plan.a0) * k),
    y0: Math.round((face.boxTopB + 0.15 * face.boxHeight - plan.b0) * k),
    y1: Math.round((face.boxTopB + 0.85 * face.boxHeight - plan.b0) * k),
  };
  if (!r.enhance) return { ...r, faceRegion, enhancement: null, luts: IDENTITY_LUTS };
  const enhancement = planEnhancement(r.image, r.personProb, faceRegion);
  return { ...r, faceRegion, enhancement, luts: finishEnhancement(r.fg, enhancement, faceRegion) };
}

/** The composite on the spec background (kept: alpha 1 inside the source), the enhancement's tables applied as it is written (one pass). */
export function composite(e: Enhanced): Composited {
  const photo = compositeOnBackground(e.fg, e.alpha ?? Float32Array.from(e.inside), e.background, e.luts);
  e.timer.lap('enhance');
  return { ...e, photo };
}
