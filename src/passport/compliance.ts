// Compliance report: checks[] measured on the produced photo, plus advisories (warnings[]). The
// geometry comes from the photo alone (PhotoGeometry: the face found on it from scratch, the crown
// from its person mask); the pixel checks read the JPEG as decoded. What the crop plan intended is
// never used as a measurement: what cannot be measured fails its check and says why. A value
// within its check's MARGIN of a limit is 'borderline' (a warning to look at), not a pass or fail.
import type { ComplianceCheck } from './compliance-check.js';
import type { Region } from './enhance.js';
import type { PhotoGeometry } from './geometry.js';
import type { PassportSpec } from './specs.js';
import { FACE_CHECKS, type FaceMeasures } from './face-checks.js';
import { HALO, type HaloMeasure } from './halo.js';
import { HEAD_EXTENT, type HeadInFrame, type HeadwearMeasure } from './head-extent.js';
import { NOISE, grainAndFocus } from './noise.js';
import type { Box } from '../vision/face-frame.js';
import { luma, type RawImage } from '../vision/raw-image.js';

/** Thresholds of the checks that are not spec numbers. */
export const COMPLIANCE = {
  CENTERING_TOLERANCE: 0.05, // face box centre from the centre line, share of the width
  MAX_ROLL_DEG: 3, // head roll from the eye line, degrees (headRollDegrees; the refined BlazeFace roll scatters about +-1.5)
  BACKGROUND_MAX_STD: 10, // standard deviation of background luma (0..255)
  BACKGROUND_MAX_DISTANCE: 30, // mean background colour to the spec colour, RGB (off-white passes)
  BACKGROUND_PROB: 0.05, // background pixels: person probability below this
  BACKGROUND_MIN_SHARE: 0.05, // share of the photo that must be background to judge it
  /** Mean face luma range (0..255) and maximum share of clipped face pixels (luma >= 250 or <= 5). */
  FACE_LUMA_RANGE: [90, 215] as const,
  MAX_CLIPPED_SHARE: 0.03,
  /** Source pixels per output pixel at the face: below 0.8 means upscaling by more than 1.25x. */
  MIN_SOURCE_PX_PER_OUTPUT_PX: 0.8,
} as const;

/**
 * Borderline margins: a measure this close to its limit (either side) makes its check 'borderline'.
 * About the measure's own scatter: geometry between runs of the detector (~0.003 of the height,
 * ~1 degree of roll), pixel ratios under lighting and JPEG (docs/passport.md, The report). Exact
 * quantities (file size, pixel size, face count) have none.
 */
export const MARGIN = {
  HEIGHT_SHARE: 0.01, // head height, eye line, centring (share of the photo's size)
  TOP_MM: 0.3,
  ROLL_DEG: 0.5,
  RATIO: 0.05, // eye contrast and luma, lens luma (shares of the cheek luma)
  BRIDGE: 0.04,
  SHARE: 0.03, // mouth shares, face halves' difference
  HALO: 0.005,
  HALO_RUN_PX: 2,
  NOISE: 0.3,
  BACKGROUND_STD: 1,
  BACKGROUND_DISTANCE: 3,
  LUMA: 5,
  CLIPPED: 0.005,
  SHARPNESS: 1,
  RESOLUTION: 0.05,
} as const;

/** One condition of a check: `value` at least (or at most) `limit`, `margin` its borderline band. */
interface Condition {
  value: number;
  limit: number;
  margin: number;
  atLeast: boolean;
}
const atLeast = (value: number, limit: number, margin: number): Condition => ({ value, limit, margin, atLeast: true });
const atMost = (value: number, limit: number, margin: number): Condition => ({ value, limit, margin, atLeast: false });
const holds = (c: Condition): boolean => (c.atLeast ? c.value >= c.limit : c.value <= c.limit);
const near = (c: Condition): boolean => Math.abs(c.value - c.limit) <= c.margin;

/**
 * A check passes when all its conditions hold. It is borderline when moving one value by its
 * margin could change that: passing with a condition near its limit, or failing only by
 * conditions near theirs. The condition reported is the closest call (distance over margin).
 */
export function decide(conditions: Condition[]): { status: ComplianceCheck['status']; closest: Condition } {
  const passed = conditions.every(holds);
  const borderline = passed ? conditions.some(near) : conditions.filter((c) => !holds(c)).every(near);
  const closeness = (c: Condition): number => Math.abs(c.value - c.limit) / (c.margin || 1e-9);
  const closest = conditions.reduce((a, b) => (closeness(b) < closeness(a) ? b : a));
  return { status: borderline ? 'borderline' : passed ? 'pass' : 'fail', closest };
}

export interface ComplianceInput {
  spec: PassportSpec;
  /** The JPEG as decoded, its byte size and the DPI in its header. */
  photo: RawImage;
  bytes: number;
  density: number | null;
  /** Person probability (0..1) per output pixel. */
  personProb: Float32Array;
  /** Significant faces found on the photo, and the largest one's geometry (null: none found). */
  faceCount: number;
  geometry: PhotoGeometry | null;
  sourcePxPerOutputPx: number;
  /** Pixel measures around the keypoints detected on the output; null when no face was found there. */
  face: FaceMeasures | null;
  headInFrame: HeadInFrame;
  headwear: HeadwearMeasure | null;
  /** Headwear found: whether the crown under it could be estimated (null without headwear). */
  headHeightUnderHeadwear: boolean | null;
  /** Ring measure of the old background beside the silhouette; null when the background was kept. */
  halo: HaloMeasure | null;
  /** Face luma before the enhancement (for the exposure message), null without enhancement. */
  faceLumaBeforeEnhance: number | null;
  /** The input's noise sigma before any reduction (for the noise message). */
  inputNoise: number;
}

/** The region of the face box the exposure and sharpness read (its middle, without hair and chin). */
export function faceRegion(box: Box): Region {
  return { x0: Math.round(box.x + 0.2 * box.width), x1: Math.round(box.x + 0.8 * box.width), y0: Math.round(box.y + 0.15 * box.height), y1: Math.round(box.y + 0.85 * box.height) };
}

function fmtRange(r: readonly [number, number], digits = 3): string {
  return `${r[0].toFixed(digits)}-${r[1].toFixed(digits)}`;
}

function round(v: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

const pct = (share: number): string => (share * 100).toFixed(1);

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
  acc.set([n, r, g, b, ls, lsq]);
}

function hex(c: readonly number[]): string {
  return '#' + c.map((v) => Math.round(v).toString(16).padStart(2, '0')).join('').toUpperCase();
}

/** Whether every 'error' check passed (warnings do not count). */
export function isCompliant(checks: ComplianceCheck[]): boolean {
  return checks.every((c) => c.passed || c.severity === 'warning');
}

type Decision = boolean | Condition[];

export function runComplianceChecks(c: ComplianceInput): ComplianceCheck[] {
  const { spec, photo, geometry: g } = c;
  const H = photo.height;
  const checks: ComplianceCheck[] = [];
  /** A check from its decision (a plain yes/no, or conditions with margins) and its two messages. */
  const add = (name: string, decision: Decision, value: ComplianceCheck['value'], expected: string | null, ok: string, fail: string, severity: ComplianceCheck['severity'] = 'error'): void => {
    if (typeof decision === 'boolean') {
      checks.push({ name, passed: decision, status: decision ? 'pass' : 'fail', value, expected, severity, message: decision ? ok : fail, measure: null, limit: null, margin: null });
      return;
    }
    const { status, closest } = decide(decision);
    const borderline = status === 'borderline';
    const said = decision.every(holds) ? ok : fail;
    checks.push({
      name,
      passed: status === 'pass',
      status,
      value,
      expected,
      severity: borderline ? 'warning' : severity,
      message: borderline ? `Borderline, look at it: ${round(closest.value, 3)} is within ${closest.margin} of the limit ${closest.limit}. ${said}` : said,
      measure: round(closest.value, 4),
      limit: closest.limit,
      margin: closest.margin,
    });
  };
  const noFace = 'No face was found on the produced photo, so this could not be checked.';
  add('single_face', c.faceCount === 1, c.faceCount, 'exactly one face on the photo', 'One face is on the photo.',
    c.faceCount === 0 ? noFace : `${c.faceCount} faces were found on the photo; it must show one person.`);
  const cut = c.headInFrame.crownCut || c.headInFrame.chinCut;
  const cutWhere = c.headInFrame.crownCut && c.headInFrame.chinCut ? 'top of the head and the chin touch' : c.headInFrame.crownCut ? 'top of the head touches' : 'chin touches';
  add('head_in_frame', !cut, cut ? `${cutWhere} the edge` : 'whole head inside', 'the whole head, top of the hair to the chin, inside the input photo',
    'The whole head, from the top of the hair to the chin, is inside the input photo.',
    `The ${cutWhere} the edge of the input photo: part of the head is cut off, so its real height cannot be measured. Use a photo with space above the head and below the chin.`);
  // Why the crown (top of the hair) cannot be measured on the photo, if it cannot.
  const crownMissing = !g ? noFace
    : cut ? 'the head is cut off by the edge of the input photo'
      : c.headHeightUnderHeadwear === false ? 'headwear covers the top of the head and the face gives no estimate under it'
        : g.crownY === null ? `the top of the head was not found on the photo (${g.crownProblem})` : null;
  const [hLo, hHi] = spec.headHeightRatio;
  const headExpected = `${fmtRange(spec.headHeightRatio)} of the photo height, chin to top of hair (${spec.headHeightMm[0]}-${spec.headHeightMm[1]} mm)`;
  if (!g || crownMissing || g.crownY === null) {
    add('head_height', false, null, headExpected, '', g ? `The head height cannot be measured: ${crownMissing}.` : noFace);
  } else {
    const ratio = (g.chinY - g.crownY) / H;
    const under = c.headHeightUnderHeadwear ? ' (to the head estimated under the headwear)' : '';
    add('head_height', [atLeast(ratio, hLo, MARGIN.HEIGHT_SHARE), atMost(ratio, hHi, MARGIN.HEIGHT_SHARE)], round(ratio), headExpected,
      `The head, chin to top of hair${under}, is ${pct(ratio)} % of the photo height.`,
      `The head${under} is ${pct(ratio)} % of the photo height; it must be ${pct(hLo)}-${pct(hHi)} %.`);
  }
  const eyeRatio = g ? 1 - g.eyeY / H : null;
  if (eyeRatio === null) {
    add('eye_line', false, null, 'the eye line measured on the photo', '', noFace);
  } else if (spec.eyeLineRatio && spec.eyeLineMm) {
    const [eLo, eHi] = spec.eyeLineRatio;
    add('eye_line', [atLeast(eyeRatio, eLo, MARGIN.HEIGHT_SHARE), atMost(eyeRatio, eHi, MARGIN.HEIGHT_SHARE)], round(eyeRatio),
      `${fmtRange(spec.eyeLineRatio)} of the photo height above the bottom edge (${spec.eyeLineMm[0]}-${spec.eyeLineMm[1]} mm)`,
      `The eyes are ${pct(eyeRatio)} % of the height above the bottom edge.`,
      `The eyes are ${pct(eyeRatio)} % of the height above the bottom edge; they must be ${pct(eLo)}-${pct(eHi)} %.`);
  } else {
    add('eye_line', true, round(eyeRatio), null, `The eye line is not set by this document (measured: ${pct(eyeRatio)} % of the height above the bottom edge).`, '');
  }
  if (spec.topMarginMm) {
    const [tLo, tHi] = spec.topMarginMm;
    const expected = `${tLo}-${tHi} mm from the top of the hair to the top edge`;
    if (crownMissing || !g || g.crownY === null) {
      add('head_top_margin', false, null, expected, '', g ? `The gap above the head cannot be measured: ${crownMissing}.` : noFace);
    } else {
      const topMm = (g.crownY / H) * spec.print.heightMm;
      add('head_top_margin', [atLeast(topMm, tLo, MARGIN.TOP_MM), atMost(topMm, tHi, MARGIN.TOP_MM)], round(topMm, 1), expected,
        `The top of the hair is ${topMm.toFixed(1)} mm below the top edge.`, `The top of the hair is ${topMm.toFixed(1)} mm below the top edge; it must be ${tLo}-${tHi} mm.`);
    }
  }
  const centreRule = `face centre within ${COMPLIANCE.CENTERING_TOLERANCE} of the width from the centre line`;
  const rollRule = `eye line tilt within ${COMPLIANCE.MAX_ROLL_DEG} degrees`;
  if (g) {
    const offset = g.faceCenterX / photo.width - 0.5;
    add('horizontal_centering', [atMost(Math.abs(offset), COMPLIANCE.CENTERING_TOLERANCE, MARGIN.HEIGHT_SHARE)], round(offset), centreRule,
      'The face is centred.', `The face is ${Math.abs(offset * 100).toFixed(1)} % of the width off the centre line.`);
    add('head_roll', [atMost(Math.abs(g.roll), COMPLIANCE.MAX_ROLL_DEG, MARGIN.ROLL_DEG)], round(g.roll, 2), rollRule,
      'The head is level.', `The head is tilted by ${Math.abs(g.roll).toFixed(1)} degrees.`);
  } else {
    add('horizontal_centering', false, null, centreRule, '', noFace);
    add('head_roll', false, null, rollRule, '', noFace);
  }
  const f = c.face;
  if (f) {
    const eyes = [f.eyes.right, f.eyes.left];
    const lensLuma = Math.max(f.eyes.right.lumaRatio, f.eyes.left.lumaRatio);
    const darkLenses = lensLuma < FACE_CHECKS.DARK_LENS_RATIO;
    add('eyes_visible', eyes.flatMap((e) => [atLeast(e.contrast, FACE_CHECKS.EYE_MIN_CONTRAST, MARGIN.RATIO), atLeast(e.lumaRatio, FACE_CHECKS.EYE_MIN_LUMA_RATIO, MARGIN.RATIO)]),
      `contrast ${f.eyes.right.contrast.toFixed(2)}/${f.eyes.left.contrast.toFixed(2)}, luma ratio ${f.eyes.right.lumaRatio.toFixed(2)}/${f.eyes.left.lumaRatio.toFixed(2)} (right/left eye)`,
      `each eye region: contrast >= ${FACE_CHECKS.EYE_MIN_CONTRAST} and luma >= ${FACE_CHECKS.EYE_MIN_LUMA_RATIO} of the cheek`,
      'Both eyes are open and visible.',
      darkLenses
        ? 'The eyes are hidden (dark glasses or something covering them): both eyes must be open and clearly visible.'
        : 'At least one eye looks closed or covered (by hair, a hand or a reflection): both eyes must be open and clearly visible.');
    const forbidden = spec.glasses === 'forbidden';
    const found = `Glasses were found${darkLenses ? ' (dark lenses)' : ''}`;
    // A frame's bridge is judged between two visible eyes: beside a hidden eye (a hand, a camera, a
    // turned face) the band catches the cover's edge, and eyes_visible already fails the photo.
    const bothEyes = eyes.every((e) => e.contrast >= FACE_CHECKS.EYE_MIN_CONTRAST && e.lumaRatio >= FACE_CHECKS.EYE_MIN_LUMA_RATIO);
    add('glasses', [...(bothEyes ? [atMost(f.bridgeDip, FACE_CHECKS.BRIDGE_MIN_DIP, MARGIN.BRIDGE)] : []), atLeast(lensLuma, FACE_CHECKS.DARK_LENS_RATIO, MARGIN.RATIO)],
      `bridge line ${f.bridgeDip.toFixed(2)}, lens luma ${lensLuma.toFixed(2)}`,
      `no glasses (${forbidden ? 'not allowed' : 'discouraged'} for ${spec.country}): bridge line < ${FACE_CHECKS.BRIDGE_MIN_DIP}, lens luma >= ${FACE_CHECKS.DARK_LENS_RATIO} of the cheek`,
      'No glasses were found.',
      forbidden ? `${found}; ${spec.country} photos must be taken without glasses.` : `${found}; they are discouraged: the eyes must be clearly visible, with no glare or tinted lenses.`,
      forbidden ? 'error' : 'warning');
    const closed = spec.expression === 'neutral_mouth_closed';
    add('expression', [atMost(f.mouthCavityShare, FACE_CHECKS.MAX_CAVITY_SHARE, MARGIN.SHARE), ...(closed ? [atMost(f.mouthTeethShare, FACE_CHECKS.MOUTH_CLOSED_MAX_TEETH_SHARE, MARGIN.SHARE / 3)] : [])],
      `mouth open ${pct(f.mouthCavityShare + f.mouthTeethShare)} % (dark ${pct(f.mouthCavityShare)} %, teeth ${pct(f.mouthTeethShare)} %)`,
      closed
        ? `neutral, mouth closed: dark mouth share <= ${FACE_CHECKS.MAX_CAVITY_SHARE * 100} %, teeth <= ${FACE_CHECKS.MOUTH_CLOSED_MAX_TEETH_SHARE * 100} %`
        : `neutral or a natural smile: dark mouth share <= ${FACE_CHECKS.MAX_CAVITY_SHARE * 100} %`,
      closed ? 'The mouth is closed.' : 'The expression is neutral or a natural smile.',
      closed ? 'The mouth looks open or the teeth show; this document needs a neutral expression with the mouth closed.' : 'The mouth looks wide open; use a neutral expression or a natural smile.',
      'warning');
    const lrOk = f.leftRightDiff <= FACE_CHECKS.MAX_LEFT_RIGHT_DIFF;
    add('face_lighting', [atMost(f.leftRightDiff, FACE_CHECKS.MAX_LEFT_RIGHT_DIFF, MARGIN.SHARE), atMost(f.topBottomDiff, FACE_CHECKS.MAX_TOP_BOTTOM_DIFF, MARGIN.SHARE)],
      `left/right ${f.leftRightDiff.toFixed(2)}, top/bottom ${f.topBottomDiff.toFixed(2)}`,
      `face halves' luma difference <= ${FACE_CHECKS.MAX_LEFT_RIGHT_DIFF} left/right and <= ${FACE_CHECKS.MAX_TOP_BOTTOM_DIFF} top/bottom (of the brighter half)`,
      'The face is evenly lit.',
      `The face is unevenly lit (${!lrOk ? `one side ${(f.leftRightDiff * 100).toFixed(0)} % darker than the other` : `upper and lower face differ by ${(f.topBottomDiff * 100).toFixed(0)} %`}): shadows on the face are not allowed; light the face evenly from the front.`);
  } else {
    for (const name of ['eyes_visible', 'glasses', 'expression', 'face_lighting']) {
      add(name, false, null, 'a face detected on the produced photo', '', noFace, name === 'expression' || (name === 'glasses' && spec.glasses !== 'forbidden') ? 'warning' : 'error');
    }
  }
  const hw = c.headwear;
  add('headwear', hw ? !hw.detected : false, hw ? `hue distance of the head top to the hair ${hw.distanceToHair ?? '—'}, to the skin ${hw.distanceToSkin}` : null,
    `no hat or head covering: head-top hue distance to hair and to skin not both > ${HEAD_EXTENT.HEADWEAR_MIN_DISTANCE}`, 'No headwear was found.',
    hw ? `Headwear was found; ${c.headHeightUnderHeadwear ? 'the head height was measured to the head estimated under it' : 'the head height cannot be measured under it'}. Hats are not allowed unless worn for religious or medical reasons.`
      : 'Headwear could not be checked: the person mask gives no top of the head.',
    'warning');
  const bg = backgroundStats(photo, c.personProb);
  const enough = bg.share >= COMPLIANCE.BACKGROUND_MIN_SHARE;
  const bgShare = `over at least ${COMPLIANCE.BACKGROUND_MIN_SHARE * 100} % of the photo`;
  const tooLittle = 'Too little background is visible to judge it.';
  add('background_uniformity', enough ? [atMost(bg.std, COMPLIANCE.BACKGROUND_MAX_STD, MARGIN.BACKGROUND_STD)] : false, enough ? round(bg.std, 2) : null,
    `background luma standard deviation <= ${COMPLIANCE.BACKGROUND_MAX_STD} (of 255) ${bgShare}`,
    'The background is plain.', enough ? 'The background is not plain (patterns, shadows or objects).' : tooLittle);
  const target = spec.background.rgb;
  const dist = Math.hypot(bg.mean[0] - target[0], bg.mean[1] - target[1], bg.mean[2] - target[2]);
  add('background_color', enough ? [atMost(dist, COMPLIANCE.BACKGROUND_MAX_DISTANCE, MARGIN.BACKGROUND_DISTANCE)] : false, enough ? hex(bg.mean) : null,
    `${spec.background.name} ${spec.background.hex} (RGB distance <= ${COMPLIANCE.BACKGROUND_MAX_DISTANCE})`,
    `The background is ${spec.background.name}.`, enough ? `The background colour ${hex(bg.mean)} is not ${spec.background.name}.` : tooLittle);
  if (c.halo) {
    const { share, widestRun } = c.halo;
    add('halo', [atMost(share, HALO.MAX_SHARE, MARGIN.HALO), atMost(widestRun, HALO.MAX_RUN_PX, MARGIN.HALO_RUN_PX)], `${round(share, 4)} of the edge, widest ${widestRun} px`,
      `share of the silhouette's edge ring carrying more than ${HALO.BLEND_LEVEL * 100} % of the old background <= ${HALO.MAX_SHARE}, no run wider than ${HALO.MAX_RUN_PX} px`,
      'No rim of the old background is left around the person.', `A rim of the old background is left around the person (${pct(share)} % of the edge, up to ${widestRun} px wide).`);
  }
  const [lLo, lHi] = COMPLIANCE.FACE_LUMA_RANGE;
  const exposureRule = `face luma ${lLo}-${lHi} (of 255), clipped pixels <= ${COMPLIANCE.MAX_CLIPPED_SHARE * 100} %`;
  const noiseRule = `noise sigma of the face <= ${NOISE.MAX_OUTPUT_SIGMA} (of 255; median absolute high-pass)`;
  const sharpRule = `variance of the face's Laplacian (after two 3 x 3 medians, less the noise's share) >= ${NOISE.MIN_SHARPNESS}`;
  if (g) {
    const fs = faceStats(photo, faceRegion(g.box));
    const corrected = c.faceLumaBeforeEnhance !== null && Math.abs(c.faceLumaBeforeEnhance - fs.meanLuma) >= 3 ? ` (corrected from face luma ${c.faceLumaBeforeEnhance.toFixed(0)})` : '';
    add('exposure', [atLeast(fs.meanLuma, lLo, MARGIN.LUMA), atMost(fs.meanLuma, lHi, MARGIN.LUMA), atMost(fs.clippedShare, COMPLIANCE.MAX_CLIPPED_SHARE, MARGIN.CLIPPED)],
      `face luma ${fs.meanLuma.toFixed(1)}, clipped ${pct(fs.clippedShare)} %`, exposureRule, `The face is well exposed${corrected}.`,
      fs.clippedShare > COMPLIANCE.MAX_CLIPPED_SHARE ? 'Parts of the face are pure black or white (clipped).' : `The face is too ${fs.meanLuma < lLo ? 'dark' : 'bright'}${corrected}.`);
    const { sigma, sharpness } = grainAndFocus(photo, faceRegion(g.box));
    const reduced = c.inputNoise > NOISE.REDUCE_ABOVE ? ` (noise reduced from sigma ${c.inputNoise.toFixed(1)})` : '';
    add('noise', [atMost(sigma, NOISE.MAX_OUTPUT_SIGMA, MARGIN.NOISE)], round(sigma, 2), noiseRule, `The face shows no disturbing grain${reduced}.`,
      'The face is grainy (sensor noise of a dark photo): take the photo in more light.');
    add('sharpness', [atLeast(sharpness, NOISE.MIN_SHARPNESS, MARGIN.SHARPNESS)], round(sharpness, 1), sharpRule, 'The face is in focus.', 'The face is blurred or out of focus.');
  } else {
    add('exposure', false, null, exposureRule, '', noFace);
    add('noise', false, null, noiseRule, '', noFace);
    add('sharpness', false, null, sharpRule, '', noFace);
  }
  add('input_resolution', [atLeast(c.sourcePxPerOutputPx, COMPLIANCE.MIN_SOURCE_PX_PER_OUTPUT_PX, MARGIN.RESOLUTION)], round(c.sourcePxPerOutputPx),
    `>= ${COMPLIANCE.MIN_SOURCE_PX_PER_OUTPUT_PX} source pixels per output pixel at the face (no more than ${(1 / COMPLIANCE.MIN_SOURCE_PX_PER_OUTPUT_PX).toFixed(2)}x upscaling)`,
    'The input has enough resolution.', 'The input has too little resolution: the face was enlarged and may look soft in print.');
  const kb = c.bytes / 1000;
  const { min, max } = spec.fileSizeKb;
  const sizeRule = min === null && max === null ? null : min === null ? `<= ${max} kB` : max === null ? `>= ${min} kB` : `${min}-${max} kB`;
  add('file_size', (max === null || c.bytes <= max * 1000) && (min === null || c.bytes >= min * 1024), round(kb, 1), sizeRule,
    sizeRule === null ? 'No file-size limit is set by this document (a printed photo).' : 'The file size is within the limit.', 'The file size is outside the limit.');
  const size = `${photo.width}x${photo.height} px at ${c.density ?? 'no'} dpi`;
  add('dimensions', photo.width === spec.digital.width && photo.height === spec.digital.height && c.density === spec.dpi, `${size} (read from the file)`,
    `${spec.digital.width}x${spec.digital.height} px (accepted ${spec.digital.minWidth}-${spec.digital.maxWidth}), ${spec.dpi} dpi`,
    'The file has the right pixel size and DPI.', `The file is ${size}.`);
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
