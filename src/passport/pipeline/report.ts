// The last stages: the photo measured (halo, the face found on it, the JPEG's pixels) and checked
// against the document; the result assembled.
import { measureOutputFace } from '../../vision/face-detector.js';
import { rollDegrees, type Box, type FaceKeypoints } from '../../vision/face-frame.js';
import { toRgba } from '../../vision/raw-image.js';
import { buildWarnings, isCompliant, runComplianceChecks } from '../compliance.js';
import type { NormalizedBox } from '../face-box.js';
import { measureFace } from '../face-checks.js';
import { faceInFrame, makeFaceFrame, outsideShare, sourceToOutput } from '../geometry.js';
import { measureHalo } from '../halo.js';
import { grainAndFocusChecks } from '../noise.js';
import { makePrintSheet } from '../print-sheet.js';
import type { PassportResult } from '../passport-result.js';
import type { Composited, Measured, OutputFace } from './context.js';

/**
 * The halo first, while the JPEG is encoded and the detector thread finishes: on the composite
 * (the JPEG's pixels before sharpening and compression, which move a pixel by a few levels where
 * the measure's distances are 28 and 40), against the old background as it would look after the
 * same corrections. Then the face on the photo (measured here if the detector thread failed;
 * where the plan put it when it is not found exactly once) and the JPEG's pixels.
 */
export async function measure(c: Composited): Promise<Measured> {
  const halo = c.alpha ? measureHalo(c.image, c.photo, c.alpha, c.inside, c.background, c.luts) : null;
  const found = await c.outFace.catch(() => measureOutputFace(c.outSeed ? c.photo : toRgba(c.photo), c.outSeed));
  const { plan } = c;
  const output: OutputFace = {
    measuredOn: 'plan',
    eyeY: plan.eyeY,
    chinY: plan.chinY,
    faceCenterX: plan.faceCenterX,
    roll: c.inputRoll - c.frame.angleDeg,
    region: c.faceRegion,
    keypoints: null,
  };
  if (found) {
    const frame = makeFaceFrame(found.keypoints, false);
    const b = found.box;
    Object.assign(output, {
      measuredOn: 'output',
      eyeY: frame.origin.y,
      chinY: frame.origin.y + faceInFrame(frame, found).chinB,
      faceCenterX: b.x + b.width / 2,
      roll: rollDegrees(found.keypoints),
      region: { x0: Math.round(b.x + 0.2 * b.width), x1: Math.round(b.x + 0.8 * b.width), y0: Math.round(b.y + 0.15 * b.height), y1: Math.round(b.y + 0.85 * b.height) },
      keypoints: found.keypoints,
    });
  } else if (c.chosen.hasKeypoints) {
    const k = c.chosen.keypoints;
    const names = Object.keys(k) as Array<keyof FaceKeypoints>;
    output.keypoints = Object.fromEntries(names.map((name) => [name, sourceToOutput(plan, k[name])])) as unknown as FaceKeypoints;
  }
  c.timer.lap('compliance');
  const encoded = await c.encoding;
  c.timer.lap('encode');
  return { ...c, halo, output, encoded, faceMeasures: output.keypoints ? measureFace(encoded.decoded, output.keypoints) : null };
}

/** The document's checks on the photo, the warnings, the optional print sheet, and the result. */
export async function check(m: Measured): Promise<PassportResult> {
  const { spec, plan, output, encoded, decoded, chosen } = m;
  const { width: W, height: H } = spec.digital;
  const headHeightRatio = (output.chinY - plan.crownY) / H;
  const eyeLineRatio = 1 - output.eyeY / H;
  // Input pixels (full size, not the working copy) per output pixel.
  const sourcePxPerOutputPx = m.fullPerWork / plan.scale;
  const checks = runComplianceChecks({
    spec,
    photo: encoded.decoded,
    bytes: encoded.buffer.length,
    personProb: m.personProb,
    backgroundReplaced: m.removeBackground,
    enhanced: m.enhance,
    inputFaceCount: chosen.inputFaceCount,
    headHeightRatio,
    eyeLineRatio,
    faceCenterX: output.faceCenterX,
    rollDeg: output.roll,
    faceRegion: output.region,
    sourcePxPerOutputPx,
    face: m.faceMeasures,
    headInFrame: m.inFrame,
    headwear: m.headwear,
    headHeightUnderHeadwear: m.underHeadwear,
    crownY: plan.crownY,
    halo: m.halo,
    faceLumaBeforeEnhance: m.enhancement ? m.enhancement.faceLumaBefore : null,
  });
  const { x0, y0, x1, y1 } = output.region;
  checks.push(...grainAndFocusChecks(encoded.decoded, { left: x0, top: y0, right: x1, bottom: y1 }, decoded.noise.sigma));
  const src = decoded.image;
  const outside = outsideShare(plan, src.width, src.height);
  const warnings = buildWarnings({
    spec,
    backgroundReplaced: m.removeBackground,
    enhanced: m.enhance,
    ignoredSmallFaces: chosen.ignoredSmallFaces,
    detector: chosen.detector,
    manualWithoutKeypoints: chosen.detector === 'manual' && !chosen.hasKeypoints,
    crownSource: m.maskCrownSource,
    outsideShare: outside,
    checks,
  });
  m.timer.lap('compliance');
  let printSheet: PassportResult['printSheet'] = null;
  if (m.includePrintSheet) {
    const sheet = await makePrintSheet(encoded.pixels, spec);
    printSheet = { buffer: sheet.buffer, width: sheet.width, height: sheet.height, copies: sheet.copies, dpi: sheet.dpi };
    m.timer.lap('print_sheet');
  }
  m.timer.total();

  const r3 = (v: number): number => Math.round(v * 1000) / 1000;
  const r1 = (v: number): number => Math.round(v * 10) / 10;
  const r2 = (v: number): number => Math.round(v * 100) / 100;
  const normalized = (b: Box): NormalizedBox => ({ x: b.x / src.width, y: b.y / src.height, width: b.width / src.width, height: b.height / src.height });
  const keypointNames = Object.keys(chosen.keypoints) as Array<keyof FaceKeypoints>;
  return {
    country: spec.country,
    spec,
    photo: { buffer: encoded.buffer, width: W, height: H, bytes: encoded.buffer.length, dpi: spec.dpi, format: 'jpeg', quality: encoded.quality },
    printSheet,
    face: {
      box: normalized(chosen.manualBox ?? chosen.box),
      confidence: chosen.confidence,
      keypoints: Object.fromEntries(keypointNames.map((k) => [k, { x: chosen.keypoints[k].x / src.width, y: chosen.keypoints[k].y / src.height }])) as PassportResult['face']['keypoints'],
      detector: chosen.detector,
    },
    measurements: {
      head_height_ratio: r3(headHeightRatio),
      eye_line_ratio: r3(eyeLineRatio),
      head_height_px: r1(output.chinY - plan.crownY),
      eye_line_px: r1(H - output.eyeY),
      crown_y: r1(plan.crownY),
      chin_y: r1(output.chinY),
      eye_y: r1(output.eyeY),
      face_center_x: r1(output.faceCenterX),
      horizontal_offset_ratio: r3(output.faceCenterX / W - 0.5),
      input_roll_degrees: r2(m.inputRoll),
      rotation_applied_degrees: r2(m.frame.angleDeg),
      output_roll_degrees: r2(output.roll),
      scale: r3(1 / sourcePxPerOutputPx),
      source_px_per_output_px: r3(sourcePxPerOutputPx),
      crown_source: m.crownSource,
      headwear_detected: m.headwear?.detected ?? false,
      crown_cut: m.inFrame.crownCut,
      chin_cut: m.inFrame.chinCut,
      halo_share: m.halo ? r3(m.halo.share) : null,
      halo_widest_run_px: m.halo ? m.halo.widestRun : null,
      measured_on: output.measuredOn,
      planned_head_height_ratio: r3(plan.headHeightRatio),
      planned_eye_line_ratio: r3(plan.eyeLineRatio),
      outside_fill_share: r3(outside),
      input_width: decoded.originalWidth,
      input_height: decoded.originalHeight,
      decode_shrink: decoded.shrink,
      input_noise: r2(decoded.noise.sigma),
      noise_reduced: decoded.noise.reduced,
      enhancement: m.enhancement,
    },
    checks,
    compliant: isCompliant(checks),
    warnings,
    timings: m.timer.timings,
  };
}
