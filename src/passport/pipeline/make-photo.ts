// The photo's stages: rendered from the source with its edges refined, enhanced, composited on the
// spec background; the output measure and the JPEG start here and run on while the halo is measured.
import sharp from 'sharp';
import { measureOutputFace, type FaceSeed } from '../../vision/face-detector.js';
import { rollDegrees } from '../../vision/face-frame.js';
import { toRgba } from '../../vision/raw-image.js';
import { compositeOnBackground, fillOutside } from '../background.js';
import { renderAndRefineEdges, renderRows } from '../edge-bands.js';
import { encodeWithinLimit } from '../encode.js';
import { finishEnhancement, IDENTITY_LUTS, planEnhancement, type Region } from '../enhance.js';
import { sourceToOutput } from '../geometry.js';
import type { Composited, Encoded, Enhanced, Planned, Rendered } from './context.js';

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

/**
 * The composite on the spec background, the enhancement's tables applied as it is written (one
 * pass). Then, running on while the halo is measured: the face measured again on the photo (before
 * sharpening and JPEG, which move a pixel by a few levels) by the detector thread, where the plan
 * put it (a bare manual box: detected on the photo first); the JPEG within the kB limit, decoded
 * again for the pixel checks as soon as it exists.
 */
export function composite(e: Enhanced): Composited {
  const photo = e.alpha ? compositeOnBackground(e.fg, e.alpha, e.background, e.luts) : fillOutside(e.fg, e.inside, e.background, e.luts);
  const outSeed = e.chosen.hasKeypoints ? seedOnOutput(e) : undefined;
  const outFace = outSeed ? measureOutputFace(photo, outSeed, e.schedule.outputGrid()) : e.schedule.detectOnOutput(toRgba(photo));
  outFace.catch(() => undefined); // awaited by measure
  e.timer.lap('enhance');
  const encoding: Promise<Encoded> = encodeWithinLimit(photo, e.spec, e.enhance).then(async (jpeg) => {
    const decoded = await sharp(jpeg.buffer).removeAlpha().raw().toBuffer();
    return { ...jpeg, decoded: { data: new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.length), width: photo.width, height: photo.height, channels: 3 } };
  });
  encoding.catch(() => undefined); // awaited by measure; no unhandled rejection meanwhile
  return { ...e, photo, outSeed, outFace, encoding };
}

/** The chosen face (working-copy pixels) where the crop plan puts it on the output: the output measure's seed. */
function seedOnOutput(e: Enhanced): FaceSeed {
  const { plan, chosen } = e;
  const b = chosen.box;
  const right = sourceToOutput(plan, chosen.keypoints.rightEye);
  const left = sourceToOutput(plan, chosen.keypoints.leftEye);
  return {
    centre: sourceToOutput(plan, { x: b.x + b.width / 2, y: b.y + b.height / 2 }),
    size: Math.max(b.width, b.height) * plan.scale,
    rollDeg: rollDegrees({ rightEye: right, leftEye: left }),
  };
}
