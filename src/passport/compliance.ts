// Compliance report: checks[] of {name, passed, value, expected} measured on the produced photo,
// plus advisories (warnings[]). Geometry is re-measured by running the face detector on the output
// (independent of the crop plan) whenever it finds exactly one face there; the crown comes from the
// person mask (there is no landmark for the top of the hair).
import type { ComplianceCheck } from './compliance-check.js';
import type { Region } from './enhance.js';
import type { PassportSpec } from './specs.js';
import { eyeVisible, FACE_CHECKS, glassesFound, mouthAcceptable, type FaceMeasures } from './face-checks.js';
import { HALO, type HaloMeasure } from './halo.js';
import { HEAD_EXTENT, type HeadInFrame, type HeadwearMeasure } from './head-extent.js';
import { luma, type RawImage } from '../vision/raw-image.js';

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
  /** Pixel measures around the keypoints detected on the output; null when no face was found there. */
  face: FaceMeasures | null;
  headInFrame: HeadInFrame;
  headwear: HeadwearMeasure | null;
  /** Headwear found: whether the crown under it could be estimated (null without headwear). */
  headHeightUnderHeadwear: boolean | null;
  /** Output y of the top of the hair (as planned; used where the document sets a top margin). */
  crownY: number;
  /** Ring measure of the old background beside the silhouette; null when the background was kept. */
  halo: HaloMeasure | null;
  /** Face luma before the enhancement (for the exposure message), null without enhancement. */
  faceLumaBeforeEnhance: number | null;
}

function fmtRange(r: readonly [number, number], digits = 3): string {
  return `${r[0].toFixed(digits)}-${r[1].toFixed(digits)}`;
}

function round(v: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

// Pixel loops are functions of their own that write their sums into an array (vision/warp.ts says why).

function faceStats(img: RawImage, region: Region): { meanLuma: number; clippedShare: number } {
  const x0 = Math.max(0, Math.floor(region.x0));
  const y0 = Math.max(0, Math.floor(region.y0));
  const x1 = Math.min(img.width, Math.ceil(region.x1));
  const y1 = Math.min(img.height, Math.ceil(region.y1));
  // luma sum, clipped count, pixel count
  const acc = new Float64Array(3);
  faceSums(img.data, img.width, x0, y0, x1, y1, acc);
  const [s, clipped, n] = acc;
  return n ? { meanLuma: s / n, clippedShare: clipped / n } : { meanLuma: 0, clippedShare: 1 };
}

function faceSums(d: Uint8Array, w: number, x0: number, y0: number, x1: number, y1: number, acc: Float64Array): void {
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const j = (y * w + x) * 3;
      const v = luma(d[j], d[j + 1], d[j + 2]);
      acc[0] += v;
      if (v >= 250 || v <= 5) acc[1]++;
      acc[2]++;
    }
  }
}

function backgroundStats(img: RawImage, prob: Float32Array): { share: number; mean: [number, number, number]; std: number } {
  // count, R, G, B sums, luma sum, luma sum of squares
  const acc = new Float64Array(6);
  backgroundSums(img.data, prob, acc);
  const [n, r, g, b, ls, lsq] = acc;
  if (!n) return { share: 0, mean: [0, 0, 0], std: 0 };
  const m = ls / n;
  return { share: n / prob.length, mean: [r / n, g / n, b / n], std: Math.sqrt(Math.max(0, lsq / n - m * m)) };
}

function backgroundSums(d: Uint8Array, prob: Float32Array, acc: Float64Array): void {
  let n = 0;
  let r = 0;
  let g = 0;
  let b = 0;
  let ls = 0;
  let lsq = 0;
  for (let i = 0, j = 0; i < prob.length; i++, j += 3) {
    if (prob[i] >= COMPLIANCE.BACKGROUND_PROB) continue;
    n++;
    r += d[j];
    g += d[j + 1];
    b += d[j + 2];
    const l = luma(d[j], d[j + 1], d[j + 2]);
    ls += l;
    lsq += l * l;
  }
  acc[0] = n;
  acc[1] = r;
  acc[2] = g;
  acc[3] = b;
  acc[4] = ls;
  acc[5] = lsq;
}

function hex(c: readonly number[]): string {
  return '#' + c.map((v) => Math.round(v).toString(16).padStart(2, '0')).join('').toUpperCase();
}

/** Whether every 'error' check passed (warnings do not count). */
export function isCompliant(checks: ComplianceCheck[]): boolean {
  return checks.every((c) => c.passed || c.severity === 'warning');
}

export function runComplianceChecks(c: ComplianceInput): ComplianceCheck[] {
  const { spec, photo } = c;
  const checks: ComplianceCheck[] = [];
  const add = (
    name: string,
    passed: boolean,
    value: ComplianceCheck['value'],
    expected: string | null,
    messages: { ok: string; fail: string },
    severity: ComplianceCheck['severity'] = 'error',
  ): void => {
    checks.push({ name, passed, value, expected, severity, message: passed ? messages.ok : messages.fail });
  };
  add('single_face', c.inputFaceCount === 'manual' || c.inputFaceCount === 1, c.inputFaceCount, 'exactly one face (or a manual face box)', {
    ok: c.inputFaceCount === 'manual' ? 'The face given by the manual face box was used.' : 'Exactly one face was found.',
    fail: `${String(c.inputFaceCount)} faces were found; the photo must show one person.`,
  });
  const cut = c.headInFrame.crownCut || c.headInFrame.chinCut;
  const cutWhere = c.headInFrame.crownCut && c.headInFrame.chinCut ? 'top of the head and the chin touch' : c.headInFrame.crownCut ? 'top of the head touches' : 'chin touches';
  add('head_in_frame', !cut, cut ? `${cutWhere} the edge` : 'whole head inside', 'the whole head, top of the hair to the chin, inside the input photo', {
    ok: 'The whole head, from the top of the hair to the chin, is inside the input photo.',
    fail: `The ${cutWhere} the edge of the input photo: part of the head is cut off, so its real height cannot be measured. Use a photo with space above the head and below the chin.`,
  });
  const [hLo, hHi] = spec.headHeightRatio;
  const headExpected = `${fmtRange(spec.headHeightRatio)} of the photo height, chin to top of hair (${spec.headHeightMm[0]}-${spec.headHeightMm[1]} mm)`;
  if (cut) {
    add('head_height', false, null, headExpected, { ok: '', fail: 'The head height cannot be measured: the head is cut off by the edge of the input photo.' });
  } else if (c.headHeightUnderHeadwear === false) {
    add('head_height', false, null, headExpected, { ok: '', fail: 'The head height cannot be measured: headwear covers the top of the head and the face gives no estimate under it.' });
  } else {
    const inRange = c.headHeightRatio >= hLo && c.headHeightRatio <= hHi;
    const under = c.headHeightUnderHeadwear ? ' (to the head estimated under the headwear)' : '';
    add('head_height', inRange, round(c.headHeightRatio), headExpected, {
      ok: `The head, chin to top of hair${under}, is ${(c.headHeightRatio * 100).toFixed(1)} % of the photo height.`,
      fail: `The head${under} is ${(c.headHeightRatio * 100).toFixed(1)} % of the photo height; it must be ${(hLo * 100).toFixed(1)}-${(hHi * 100).toFixed(1)} %.`,
    });
  }
  if (spec.eyeLineRatio && spec.eyeLineMm) {
    const [eLo, eHi] = spec.eyeLineRatio;
    add('eye_line', c.eyeLineRatio >= eLo && c.eyeLineRatio <= eHi, round(c.eyeLineRatio),
      `${fmtRange(spec.eyeLineRatio)} of the photo height above the bottom edge (${spec.eyeLineMm[0]}-${spec.eyeLineMm[1]} mm)`, {
        ok: `The eyes are ${(c.eyeLineRatio * 100).toFixed(1)} % of the height above the bottom edge.`,
        fail: `The eyes are ${(c.eyeLineRatio * 100).toFixed(1)} % of the height above the bottom edge; they must be ${(eLo * 100).toFixed(1)}-${(eHi * 100).toFixed(1)} %.`,
      });
  } else {
    add('eye_line', true, round(c.eyeLineRatio), null, {
      ok: `The eye line is not set by this document (measured: ${(c.eyeLineRatio * 100).toFixed(1)} % of the height above the bottom edge).`,
      fail: '',
    });
  }
  if (spec.topMarginMm) {
    // The crown's place comes from the crop plan (no landmark marks the top of the hair on the output).
    const [tLo, tHi] = spec.topMarginMm;
    const topMm = (c.crownY / photo.height) * spec.print.heightMm;
    add('head_top_margin', !cut && topMm >= tLo && topMm <= tHi, cut ? null : round(topMm, 1),
      `${tLo}-${tHi} mm from the top of the hair to the top edge`, {
        ok: `The top of the hair is ${topMm.toFixed(1)} mm below the top edge.`,
        fail: cut
          ? 'The gap above the head cannot be measured: the head is cut off by the edge of the input photo.'
          : `The top of the hair is ${topMm.toFixed(1)} mm below the top edge; it must be ${tLo}-${tHi} mm.`,
      });
  }
  const offset = c.faceCenterX / photo.width - 0.5;
  add('horizontal_centering', Math.abs(offset) <= COMPLIANCE.CENTERING_TOLERANCE, round(offset),
    `face centre within ${COMPLIANCE.CENTERING_TOLERANCE} of the width from the centre line`, {
      ok: 'The face is centred.',
      fail: `The face is ${Math.abs(offset * 100).toFixed(1)} % of the width off the centre line.`,
    });
  add('head_roll', Math.abs(c.rollDeg) <= COMPLIANCE.MAX_ROLL_DEG, round(c.rollDeg, 2), `eye line tilt within ${COMPLIANCE.MAX_ROLL_DEG} degrees`, {
    ok: 'The head is level.',
    fail: `The head is tilted by ${Math.abs(c.rollDeg).toFixed(1)} degrees.`,
  });
  const f = c.face;
  const noFace = { ok: '', fail: 'No face was found on the produced photo, so this could not be checked.' };
  if (f) {
    const eyesOk = eyeVisible(f.eyes.right) && eyeVisible(f.eyes.left);
    const lenses = glassesFound(f);
    add('eyes_visible', eyesOk,
      `contrast ${f.eyes.right.contrast.toFixed(2)}/${f.eyes.left.contrast.toFixed(2)}, luma ratio ${f.eyes.right.lumaRatio.toFixed(2)}/${f.eyes.left.lumaRatio.toFixed(2)} (right/left eye)`,
      `each eye region: contrast >= ${FACE_CHECKS.EYE_MIN_CONTRAST} and luma >= ${FACE_CHECKS.EYE_MIN_LUMA_RATIO} of the cheek`, {
        ok: 'Both eyes are open and visible.',
        fail: lenses.darkLenses
          ? 'The eyes are hidden (dark glasses or something covering them): both eyes must be open and clearly visible.'
          : 'At least one eye looks closed or covered (by hair, a hand or a reflection): both eyes must be open and clearly visible.',
      });
    const wearing = lenses.frame || lenses.darkLenses;
    const forbidden = spec.glasses === 'forbidden';
    add('glasses', !wearing, `bridge line ${f.bridgeDip.toFixed(2)}, lens luma ${Math.min(f.eyes.right.lumaRatio, f.eyes.left.lumaRatio).toFixed(2)}`,
      `no glasses (${forbidden ? 'not allowed' : 'discouraged'} for ${spec.country}): bridge line < ${FACE_CHECKS.BRIDGE_MIN_DIP}, lens luma >= ${FACE_CHECKS.DARK_LENS_RATIO} of the cheek`, {
        ok: 'No glasses were found.',
        fail: forbidden
          ? `Glasses were found${lenses.darkLenses ? ' (dark lenses)' : ''}; ${spec.country} photos must be taken without glasses.`
          : `Glasses were found${lenses.darkLenses ? ' (dark lenses)' : ''}; they are discouraged: the eyes must be clearly visible, with no glare or tinted lenses.`,
      }, forbidden ? 'error' : 'warning');
    const mouthOk = mouthAcceptable(f, spec.expression);
    add('expression', mouthOk, `mouth open ${((f.mouthCavityShare + f.mouthTeethShare) * 100).toFixed(1)} % (dark ${(f.mouthCavityShare * 100).toFixed(1)} %, teeth ${(f.mouthTeethShare * 100).toFixed(1)} %)`,
      spec.expression === 'neutral_mouth_closed'
        ? `neutral, mouth closed: dark mouth share <= ${FACE_CHECKS.MAX_CAVITY_SHARE * 100} %, teeth <= ${FACE_CHECKS.MOUTH_CLOSED_MAX_TEETH_SHARE * 100} %`
        : `neutral or a natural smile: dark mouth share <= ${FACE_CHECKS.MAX_CAVITY_SHARE * 100} %`, {
        ok: spec.expression === 'neutral_mouth_closed' ? 'The mouth is closed.' : 'The expression is neutral or a natural smile.',
        fail: spec.expression === 'neutral_mouth_closed'
          ? 'The mouth looks open or the teeth show; this document needs a neutral expression with the mouth closed.'
          : 'The mouth looks wide open; use a neutral expression or a natural smile.',
      }, 'warning');
    const lrOk = f.leftRightDiff <= FACE_CHECKS.MAX_LEFT_RIGHT_DIFF;
    const tbOk = f.topBottomDiff <= FACE_CHECKS.MAX_TOP_BOTTOM_DIFF;
    add('face_lighting', lrOk && tbOk, `left/right ${f.leftRightDiff.toFixed(2)}, top/bottom ${f.topBottomDiff.toFixed(2)}`,
      `face halves' luma difference <= ${FACE_CHECKS.MAX_LEFT_RIGHT_DIFF} left/right and <= ${FACE_CHECKS.MAX_TOP_BOTTOM_DIFF} top/bottom (of the brighter half)`, {
        ok: 'The face is evenly lit.',
        fail: `The face is unevenly lit (${!lrOk ? `one side ${(f.leftRightDiff * 100).toFixed(0)} % darker than the other` : `upper and lower face differ by ${(f.topBottomDiff * 100).toFixed(0)} %`}): shadows on the face are not allowed; light the face evenly from the front.`,
      });
  } else {
    for (const name of ['eyes_visible', 'glasses', 'expression', 'face_lighting']) {
      add(name, false, null, 'a face detected on the produced photo', noFace, name === 'expression' || (name === 'glasses' && spec.glasses !== 'forbidden') ? 'warning' : 'error');
    }
  }
  const hw = c.headwear;
  add('headwear', !hw?.detected, hw ? `hue distance of the head top to the hair ${hw.distanceToHair ?? '—'}, to the skin ${hw.distanceToSkin}` : null,
    `no hat or head covering: head-top hue distance to hair and to skin not both > ${HEAD_EXTENT.HEADWEAR_MIN_DISTANCE}`, {
      ok: hw ? 'No headwear was found.' : 'Headwear was not measured (no person mask around the head).',
      fail: `Headwear was found; ${c.headHeightUnderHeadwear ? 'the head height was measured to the head estimated under it' : 'the head height cannot be measured under it'}. Hats are not allowed unless worn for religious or medical reasons.`,
    }, 'warning');
  const bg = backgroundStats(photo, c.personProb);
  const enough = bg.share >= COMPLIANCE.BACKGROUND_MIN_SHARE;
  add('background_uniformity', enough && bg.std <= COMPLIANCE.BACKGROUND_MAX_STD, enough ? round(bg.std, 2) : null,
    `background luma standard deviation <= ${COMPLIANCE.BACKGROUND_MAX_STD} (of 255) over at least ${COMPLIANCE.BACKGROUND_MIN_SHARE * 100} % of the photo`, {
      ok: 'The background is plain.',
      fail: enough ? 'The background is not plain (patterns, shadows or objects).' : 'Too little background is visible to judge it.',
    });
  const target = spec.background.rgb;
  const dist = Math.hypot(bg.mean[0] - target[0], bg.mean[1] - target[1], bg.mean[2] - target[2]);
  add('background_color', enough && dist <= COMPLIANCE.BACKGROUND_MAX_DISTANCE, enough ? hex(bg.mean) : null,
    `${spec.background.name} ${spec.background.hex} (RGB distance <= ${COMPLIANCE.BACKGROUND_MAX_DISTANCE})`, {
      ok: `The background is ${spec.background.name}.`,
      fail: `The background colour ${enough ? hex(bg.mean) : ''} is not ${spec.background.name}.`,
    });
  if (c.halo) {
    const { share, widestRun } = c.halo;
    add('halo', share <= HALO.MAX_SHARE && widestRun <= HALO.MAX_RUN_PX, `${round(share, 4)} of the edge, widest ${widestRun} px`,
      `share of the silhouette's edge ring carrying more than ${HALO.BLEND_LEVEL * 100} % of the old background <= ${HALO.MAX_SHARE}, no run wider than ${HALO.MAX_RUN_PX} px`, {
        ok: 'No rim of the old background is left around the person.',
        fail: `A rim of the old background is left around the person (${(share * 100).toFixed(1)} % of the edge, up to ${widestRun} px wide).`,
      });
  }
  const fs = faceStats(photo, c.faceRegion);
  const [lLo, lHi] = COMPLIANCE.FACE_LUMA_RANGE;
  const exposureOk = fs.meanLuma >= lLo && fs.meanLuma <= lHi && fs.clippedShare <= COMPLIANCE.MAX_CLIPPED_SHARE;
  const corrected = c.faceLumaBeforeEnhance !== null && Math.abs(c.faceLumaBeforeEnhance - fs.meanLuma) >= 3
    ? ` (corrected from face luma ${c.faceLumaBeforeEnhance.toFixed(0)})` : '';
  add('exposure', exposureOk, `face luma ${fs.meanLuma.toFixed(1)}, clipped ${(fs.clippedShare * 100).toFixed(1)} %`,
    `face luma ${lLo}-${lHi} (of 255), clipped pixels <= ${COMPLIANCE.MAX_CLIPPED_SHARE * 100} %`, {
      ok: `The face is well exposed${corrected}.`,
      fail: fs.clippedShare > COMPLIANCE.MAX_CLIPPED_SHARE
        ? 'Parts of the face are pure black or white (clipped).'
        : `The face is too ${fs.meanLuma < lLo ? 'dark' : 'bright'}${corrected}.`,
    });
  add('input_resolution', c.sourcePxPerOutputPx >= COMPLIANCE.MIN_SOURCE_PX_PER_OUTPUT_PX, round(c.sourcePxPerOutputPx),
    `>= ${COMPLIANCE.MIN_SOURCE_PX_PER_OUTPUT_PX} source pixels per output pixel at the face (no more than ${(1 / COMPLIANCE.MIN_SOURCE_PX_PER_OUTPUT_PX).toFixed(2)}x upscaling)`, {
      ok: 'The input has enough resolution.',
      fail: 'The input has too little resolution: the face was enlarged and may look soft in print.',
    });
  const kb = c.bytes / 1000;
  const { min, max } = spec.fileSizeKb;
  const sizeRule = min === null && max === null ? null : min === null ? `<= ${max} kB` : max === null ? `>= ${min} kB` : `${min}-${max} kB`;
  add('file_size', (max === null || c.bytes <= max * 1000) && (min === null || c.bytes >= min * 1024), round(kb, 1), sizeRule, {
    ok: sizeRule === null ? 'No file-size limit is set by this document (a printed photo).' : 'The file size is within the limit.',
    fail: 'The file size is outside the limit.',
  });
  add('dimensions', photo.width === spec.digital.width && photo.height === spec.digital.height, `${photo.width}x${photo.height} px at ${spec.dpi} dpi`,
    `${spec.digital.width}x${spec.digital.height} px (accepted ${spec.digital.minWidth}-${spec.digital.maxWidth}), ${spec.dpi} dpi`, {
      ok: 'The pixel size is right.',
      fail: 'The pixel size is wrong.',
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
  for (const c of w.checks) if (c.severity === 'warning' && !c.passed) out.push(c.message);
  return out;
}
