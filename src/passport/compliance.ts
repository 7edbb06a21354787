// Compliance report: checks[] of {name, passed, value, expected} measured on the produced photo,
// plus advisories (warnings[]). Geometry is re-measured by running the face detector on the output
// (independent of the crop plan) whenever it finds exactly one face there; the crown comes from the
// person mask (there is no landmark for the top of the hair).
import { luma, type RawImage } from './image.js';
import type { Region } from './enhance.js';
import type { PassportSpec } from './specs.js';

export interface ComplianceCheck {
  name: string;
  passed: boolean;
  value: number | string | null;
  expected: string;
}

/** Thresholds of the checks that are not spec numbers. */
export const COMPLIANCE = {
  /** Face box centre within this share of the width from the centre line. */
  CENTERING_TOLERANCE: 0.05,
  /** Eye-line tilt on the output, degrees (the refined BlazeFace roll is accurate to about +-1.5 degrees). */
  MAX_ROLL_DEG: 3,
  /** Standard deviation of background luma (0..255). */
  BACKGROUND_MAX_STD: 10,
  /** Mean background colour within this RGB distance of the spec colour (off-white passes). */
  BACKGROUND_MAX_DISTANCE: 30,
  /** Background pixels: person probability below this. */
  BACKGROUND_PROB: 0.05,
  /** Minimum share of the photo that must be background to judge it. */
  BACKGROUND_MIN_SHARE: 0.05,
  /** Mean face luma range (0..255) and maximum share of clipped face pixels (luma >= 250 or <= 5). */
  FACE_LUMA_RANGE: [90, 215] as const,
  MAX_CLIPPED_SHARE: 0.03,
  /**
   * Variance of the 4-neighbour Laplacian of the face's luma at 600 px (scaled by (height/600)^2).
   * Corpus outputs: 69-1100, the cameraman (upscaled 3x) 13-17; the astronaut with a Gaussian blur
   * of sigma 1.5 source px (3.4 px at the output): 5-7, sigma 2: 4-5.
   */
  MIN_SHARPNESS: 8,
  /** Source pixels per output pixel at the face: below 0.8 means upscaling by more than 1.25x. */
  MIN_SOURCE_PX_PER_OUTPUT_PX: 0.8,
} as const;

export interface ComplianceInput {
  spec: PassportSpec;
  photo: RawImage;
  bytes: number;
  /** Person probability (0..1) per output pixel, and whether the background was replaced. */
  personProb: Float32Array;
  backgroundReplaced: boolean;
  enhanced: boolean;
  /** Faces considered in the input (significant ones), or 'manual'. */
  inputFaceCount: number | 'manual';
  /** Geometry measured on the output (detector on the output, crown from the mask). */
  headHeightRatio: number;
  eyeLineRatio: number;
  faceCenterX: number;
  rollDeg: number;
  faceRegion: Region;
  sourcePxPerOutputPx: number;
}

function fmtRange(r: readonly [number, number], digits = 3): string {
  return `${r[0].toFixed(digits)}-${r[1].toFixed(digits)}`;
}

function round(v: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

function faceStats(img: RawImage, region: Region): { meanLuma: number; clippedShare: number; sharpness: number } {
  const x0 = Math.max(1, Math.floor(region.x0));
  const y0 = Math.max(1, Math.floor(region.y0));
  const x1 = Math.min(img.width - 1, Math.ceil(region.x1));
  const y1 = Math.min(img.height - 1, Math.ceil(region.y1));
  const d = img.data;
  const w = img.width;
  const L = (x: number, y: number): number => {
    const j = (y * w + x) * 3;
    return luma(d[j], d[j + 1], d[j + 2]);
  };
  let s = 0;
  let clipped = 0;
  let n = 0;
  let lapSum = 0;
  let lapSq = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const v = L(x, y);
      s += v;
      if (v >= 250 || v <= 5) clipped++;
      const lap = L(x - 1, y) + L(x + 1, y) + L(x, y - 1) + L(x, y + 1) - 4 * v;
      lapSum += lap;
      lapSq += lap * lap;
      n++;
    }
  }
  if (!n) return { meanLuma: 0, clippedShare: 1, sharpness: 0 };
  const lapMean = lapSum / n;
  const scale = (img.height / 600) ** 2;
  return { meanLuma: s / n, clippedShare: clipped / n, sharpness: (lapSq / n - lapMean * lapMean) * scale };
}

function backgroundStats(img: RawImage, prob: Float32Array): { share: number; mean: [number, number, number]; std: number } {
  const d = img.data;
  let n = 0;
  const sum = [0, 0, 0];
  let ls = 0;
  let lsq = 0;
  for (let i = 0, j = 0; i < prob.length; i++, j += 3) {
    if (prob[i] >= COMPLIANCE.BACKGROUND_PROB) continue;
    n++;
    sum[0] += d[j];
    sum[1] += d[j + 1];
    sum[2] += d[j + 2];
    const l = luma(d[j], d[j + 1], d[j + 2]);
    ls += l;
    lsq += l * l;
  }
  if (!n) return { share: 0, mean: [0, 0, 0], std: 0 };
  const m = ls / n;
  return { share: n / prob.length, mean: [sum[0] / n, sum[1] / n, sum[2] / n], std: Math.sqrt(Math.max(0, lsq / n - m * m)) };
}

function hex(c: readonly number[]): string {
  return '#' + c.map((v) => Math.round(v).toString(16).padStart(2, '0')).join('').toUpperCase();
}

export function runComplianceChecks(c: ComplianceInput): ComplianceCheck[] {
  const { spec, photo } = c;
  const checks: ComplianceCheck[] = [];
  checks.push({
    name: 'single_face',
    passed: c.inputFaceCount === 'manual' || c.inputFaceCount === 1,
    value: c.inputFaceCount,
    expected: 'exactly one face (or a manual face box)',
  });
  const [hLo, hHi] = spec.headHeightRatio;
  checks.push({
    name: 'head_height',
    passed: c.headHeightRatio >= hLo && c.headHeightRatio <= hHi,
    value: round(c.headHeightRatio),
    expected: `${fmtRange(spec.headHeightRatio)} of the photo height, chin to top of hair (${spec.headHeightMm[0]}-${spec.headHeightMm[1]} mm)`,
  });
  const [eLo, eHi] = spec.eyeLineRatio;
  checks.push({
    name: 'eye_line',
    passed: c.eyeLineRatio >= eLo && c.eyeLineRatio <= eHi,
    value: round(c.eyeLineRatio),
    expected: `${fmtRange(spec.eyeLineRatio)} of the photo height above the bottom edge (${spec.eyeLineMm[0]}-${spec.eyeLineMm[1]} mm)`,
  });
  const offset = c.faceCenterX / photo.width - 0.5;
  checks.push({
    name: 'horizontal_centering',
    passed: Math.abs(offset) <= COMPLIANCE.CENTERING_TOLERANCE,
    value: round(offset),
    expected: `face centre within ${COMPLIANCE.CENTERING_TOLERANCE} of the width from the centre line`,
  });
  checks.push({
    name: 'head_roll',
    passed: Math.abs(c.rollDeg) <= COMPLIANCE.MAX_ROLL_DEG,
    value: round(c.rollDeg, 2),
    expected: `eye line tilt within ${COMPLIANCE.MAX_ROLL_DEG} degrees`,
  });
  const bg = backgroundStats(photo, c.personProb);
  const enough = bg.share >= COMPLIANCE.BACKGROUND_MIN_SHARE;
  checks.push({
    name: 'background_uniformity',
    passed: enough && bg.std <= COMPLIANCE.BACKGROUND_MAX_STD,
    value: enough ? round(bg.std, 2) : null,
    expected: `background luma standard deviation <= ${COMPLIANCE.BACKGROUND_MAX_STD} (of 255) over at least ${COMPLIANCE.BACKGROUND_MIN_SHARE * 100} % of the photo`,
  });
  const target = spec.background.rgb;
  const dist = Math.hypot(bg.mean[0] - target[0], bg.mean[1] - target[1], bg.mean[2] - target[2]);
  checks.push({
    name: 'background_color',
    passed: enough && dist <= COMPLIANCE.BACKGROUND_MAX_DISTANCE,
    value: enough ? hex(bg.mean) : null,
    expected: `${spec.background.name} ${spec.background.hex} (RGB distance <= ${COMPLIANCE.BACKGROUND_MAX_DISTANCE})`,
  });
  const fs = faceStats(photo, c.faceRegion);
  const [lLo, lHi] = COMPLIANCE.FACE_LUMA_RANGE;
  checks.push({
    name: 'exposure',
    passed: fs.meanLuma >= lLo && fs.meanLuma <= lHi && fs.clippedShare <= COMPLIANCE.MAX_CLIPPED_SHARE,
    value: `face luma ${fs.meanLuma.toFixed(1)}, clipped ${(fs.clippedShare * 100).toFixed(1)} %`,
    expected: `face luma ${lLo}-${lHi} (of 255), clipped pixels <= ${COMPLIANCE.MAX_CLIPPED_SHARE * 100} %`,
  });
  checks.push({
    name: 'sharpness',
    passed: fs.sharpness >= COMPLIANCE.MIN_SHARPNESS,
    value: round(fs.sharpness, 1),
    expected: `variance of the face's Laplacian >= ${COMPLIANCE.MIN_SHARPNESS}`,
  });
  checks.push({
    name: 'input_resolution',
    passed: c.sourcePxPerOutputPx >= COMPLIANCE.MIN_SOURCE_PX_PER_OUTPUT_PX,
    value: round(c.sourcePxPerOutputPx),
    expected: `>= ${COMPLIANCE.MIN_SOURCE_PX_PER_OUTPUT_PX} source pixels per output pixel at the face (no more than ${(1 / COMPLIANCE.MIN_SOURCE_PX_PER_OUTPUT_PX).toFixed(2)}x upscaling)`,
  });
  const kb = c.bytes / 1000;
  const { min, max } = spec.fileSizeKb;
  checks.push({
    name: 'file_size',
    passed: c.bytes <= max * 1000 && (min === null || c.bytes >= min * 1024),
    value: round(kb, 1),
    expected: min === null ? `<= ${max} kB` : `${min}-${max} kB`,
  });
  checks.push({
    name: 'dimensions',
    passed: photo.width === spec.digital.width && photo.height === spec.digital.height,
    value: `${photo.width}x${photo.height} px at ${spec.dpi} dpi`,
    expected: `${spec.digital.width}x${spec.digital.height} px (accepted ${spec.digital.minWidth}-${spec.digital.maxWidth}), ${spec.dpi} dpi`,
  });
  return checks;
}

export interface WarningInput {
  spec: PassportSpec;
  backgroundReplaced: boolean;
  enhanced: boolean;
  ignoredSmallFaces: number;
  detector: 'short' | 'full' | 'tiled' | 'manual';
  manualWithoutKeypoints: boolean;
  crownSource: 'mask' | 'fallback';
  outsideShare: number;
  checks: ComplianceCheck[];
}

export function buildWarnings(w: WarningInput): string[] {
  const out: string[] = [];
  if (w.spec.editedPhotoWarning && (w.backgroundReplaced || w.enhanced)) out.push(w.spec.editedPhotoWarning);
  if (w.ignoredSmallFaces > 0) out.push(`${w.ignoredSmallFaces} much smaller face(s) in the background were ignored; a passport photo should show only the applicant.`);
  if (w.detector === 'full' || w.detector === 'tiled') out.push('The face is small in the frame (found only by the long-range or tiled detector): check the result closely.');
  if (w.manualWithoutKeypoints) out.push('Manual face box: eye positions are estimated from the box and the head was not levelled.');
  if (w.crownSource === 'fallback') out.push('The top of the head could not be found in the person mask; it was estimated from the face box, so check the head height.');
  if (w.outsideShare > 0.02) out.push(`${Math.round(w.outsideShare * 100)} % of the photo lies beyond the original image and was filled with the background colour.`);
  for (const c of w.checks) if (!c.passed && c.name === 'input_resolution') out.push('The source photo has less resolution than the output needs; it was upscaled and may look soft in print.');
  out.push('Not checked automatically: eyes open, neutral expression, no glasses, no headwear, no shadows on the face.');
  return out;
}
