// The last stages: the photo measured on its own (the faces found on it from scratch, the head's
// geometry, the halo, the JPEG read back) and checked against the document; the result assembled.
import { measureOutputFace, type DetectedFace } from '../../vision/face-detector.js';
import type { Box, FaceKeypoints } from '../../vision/face-frame.js';
import { toRgba } from '../../vision/raw-image.js';
import { buildWarnings, isCompliant, runComplianceChecks } from '../compliance.js';
import { encodeAndReadBack } from '../encode.js';
import type { NormalizedBox } from '../face-box.js';
import { measureFace } from '../face-checks.js';
import { crownFromMask, faceInFrame, headRollDegrees, makeFaceFrame, outsideShare, type PhotoGeometry } from '../geometry.js';
import { measureHalo } from '../halo.js';
import { HEAD_EXTENT } from '../head-extent.js';
import { makePrintSheet } from '../print-sheet.js';
import type { PassportResult } from '../passport-result.js';
import type { Composited, Measured } from './context.js';

/**
 * The faces on the photo (detector thread) and the JPEG (libvips) start, and the halo is measured
 * here meanwhile: on the composite (the JPEG's pixels before sharpening and compression, which
 * move a pixel by a few levels where the measure tolerates 20), against the old
 * background as it would look after the same corrections. The face is found with no knowledge of
 * where the plan put it; the pixel checks read the JPEG as decoded.
 */
export async function measure(c: Composited): Promise<Measured> {
  const rgba = toRgba(c.photo);
  const faces = c.schedule.measureOutput(rgba);
  faces.catch(() => undefined); // awaited below
  const encoding = encodeAndReadBack(c.photo, c.spec, c.enhance);
  encoding.catch(() => undefined); // awaited below
  const halo = c.alpha ? measureHalo(c.image, c.photo, c.alpha, c.inside, c.background, c.luts) : null;
  const found = await faces.catch(() => measureOutputFace(rgba));
  const geometry = found.face ? photoGeometry(c, found.face) : null;
  c.timer.lap('compliance');
  const encoded = await encoding;
  c.timer.lap('encode');
  return { ...c, halo, faceCount: found.count, geometry, encoded, faceMeasures: geometry ? measureFace(encoded.decoded, geometry.keypoints) : null };
}

/**
 * The head on the photo from the face found there: eye line and chin from its keypoints and box
 * (faceInFrame), the crown from the photo's person mask in the face's column band (crownFromMask on
 * the photo's pixel grid), or, under headwear, estimated from the box as on the input.
 */
function photoGeometry(c: Composited, face: DetectedFace): PhotoGeometry {
  const frame = makeFaceFrame(face.keypoints, false);
  const inFrame = faceInFrame(frame, face);
  const { x, y } = frame.origin;
  const crown = c.underHeadwear
    ? { crownB: inFrame.boxTopB - HEAD_EXTENT.CROWN_UNDER_HEADWEAR_RATIO * face.box.height, reason: undefined }
    : crownFromMask(inFrame, { data: c.personProb, width: c.photo.width, height: c.photo.height, a0: -x, b0: -y, step: 1 });
  return {
    crownY: crown.reason ? null : y + crown.crownB,
    crownProblem: crown.reason ?? null,
    eyeY: y,
    chinY: y + inFrame.chinB,
    faceCenterX: face.box.x + face.box.width / 2,
    roll: headRollDegrees(face),
    box: face.box,
    keypoints: face.keypoints,
  };
}

/** The document's checks on the photo, the warnings, the optional print sheet, and the result. */
export async function check(m: Measured): Promise<PassportResult> {
  const { spec, plan, geometry: g, encoded, decoded, chosen } = m;
  const { width: W, height: H } = spec.digital;
  // Input pixels (full size, not the working copy) per output pixel.
  const sourcePxPerOutputPx = m.fullPerWork / plan.scale;
  const checks = runComplianceChecks({
    spec,
    photo: encoded.decoded,
    bytes: encoded.buffer.length,
    density: encoded.density,
    personProb: m.personProb,
    faceCount: m.faceCount,
    geometry: g,
    sourcePxPerOutputPx,
    face: m.faceMeasures,
    headInFrame: m.inFrame,
    headwear: m.headwear,
    headHeightUnderHeadwear: m.underHeadwear,
    halo: m.halo,
    faceLumaBeforeEnhance: m.enhancement ? m.enhancement.faceLumaBefore : null,
    inputNoise: decoded.noise.sigma,
  });
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
  const headPx = g?.crownY != null ? g.chinY - g.crownY : null;
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
      head_height_ratio: headPx === null ? null : r3(headPx / H),
      eye_line_ratio: g ? r3(1 - g.eyeY / H) : null,
      head_height_px: headPx === null ? null : r1(headPx),
      eye_line_px: g ? r1(H - g.eyeY) : null,
      crown_y: g?.crownY != null ? r1(g.crownY) : null,
      chin_y: g ? r1(g.chinY) : null,
      eye_y: g ? r1(g.eyeY) : null,
      face_center_x: g ? r1(g.faceCenterX) : null,
      horizontal_offset_ratio: g ? r3(g.faceCenterX / W - 0.5) : null,
      input_roll_degrees: r2(m.inputRoll),
      rotation_applied_degrees: r2(m.frame.angleDeg),
      output_roll_degrees: g ? r2(g.roll) : null,
      output_faces: m.faceCount,
      scale: r3(1 / sourcePxPerOutputPx),
      source_px_per_output_px: r3(sourcePxPerOutputPx),
      crown_source: m.crownSource,
      headwear_detected: m.headwear?.detected ?? false,
      crown_cut: m.inFrame.crownCut,
      chin_cut: m.inFrame.chinCut,
      halo_share: m.halo ? r3(m.halo.share) : null,
      halo_widest_run_px: m.halo ? m.halo.widestRun : null,
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
