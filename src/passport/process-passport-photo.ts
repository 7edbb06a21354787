// The passport-photo pipeline: decode -> detect -> level -> crown/chin -> spec-exact crop ->
// background replacement -> mild enhancement -> JPEG within the kB limits -> compliance report
// (-> optional print sheet). Pure library: no HTTP, no queue. Models load once per process.
import sharp from 'sharp';
import { compositeOnBackground, fillOutside } from './background.js';
import { renderAndRefineEdges, renderRows, type PhotoRender } from './edge-bands.js';
import type { ComplianceCheck } from './compliance-check.js';
import { buildWarnings, isCompliant, runComplianceChecks } from './compliance.js';
import { measureFace } from './face-checks.js';
import { measureHalo } from './halo.js';
import { HEAD_EXTENT, headInFrame, measureHeadwear, type HeadwearMeasure } from './head-extent.js';
import { finishEnhancement, IDENTITY_LUTS, planEnhancement, sharpenLuma, type EnhanceParams, type Region } from './enhance.js';
import { withSrgbProfile } from './srgb-profile.js';
import { PassportInputError } from './errors.js';
import { detectFacesInImage, measureOutputFace, REFINE_GRID, refineFace, SIGNIFICANT_FACE_RATIO, type CropHelper, type DetectedFace, type DetectorModel, type FaceSeed } from '../vision/face-detector.js';
import { detectFullRangeOffThread, gridCropsOffThread, measureOutputFaceOffThread, seedCropsOffThread } from '../vision/mediapipe/detector-thread.js';

export { SIGNIFICANT_FACE_RATIO };
import { CHIN_BOX_RATIO, CROWN_MAX_RATIO, crownFromMask, faceInFrame, keypointsFromBox, makeFaceFrame, outsideShare, planCrop, sourceToOutput, type CropPlan, type FrameMask } from './geometry.js';
import { decodeInput, largeWorkingShrink, type DecodedInput } from './image.js';
import { segmentPerson } from '../vision/segmenter.js';
import { makePrintSheet } from './print-sheet.js';
import { isPassportCountry, PASSPORT_COUNTRIES, PASSPORT_SPECS, type PassportCountry, type PassportSpec } from './specs.js';
import { affineFromFrame, type Box, type FaceKeypoints, rollDegrees } from '../vision/face-frame.js';
import { type AffineMap, type PixelBounds, type RawImage, type Rgb, toRgba } from '../vision/raw-image.js';
import { renderWarp, warpRgbaBilinear, warpSource } from '../vision/warp.js';

/** Face box in normalized image coordinates (0..1), top-left corner and size. */
export interface NormalizedBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PassportOptions {
  country: PassportCountry;
  /** Replace the background with the spec colour (default true). */
  removeBackground?: boolean;
  /** Mild exposure / white-balance / sharpening corrections (default true). */
  enhance?: boolean;
  /** Also produce a 4 x 6 in print sheet (default false). */
  includePrintSheet?: boolean;
  /** Manual face box (normalized): replaces detection. */
  faceBox?: NormalizedBox | null;
}

export interface PassportResult {
  country: PassportCountry;
  spec: PassportSpec;
  photo: { buffer: Buffer; width: number; height: number; bytes: number; dpi: number; format: 'jpeg'; quality: number };
  printSheet: { buffer: Buffer; width: number; height: number; copies: number; dpi: number } | null;
  face: {
    /** Normalized to the (EXIF-oriented) input image. */
    box: NormalizedBox;
    /** Detector score; null for a manual box without a matching detection. */
    confidence: number | null;
    keypoints: Record<keyof FaceKeypoints, { x: number; y: number }>;
    detector: DetectorModel | 'manual';
  };
  measurements: PassportMeasurements;
  checks: ComplianceCheck[];
  /** Every check of severity 'error' passed (warnings do not count). */
  compliant: boolean;
  warnings: string[];
  /** Milliseconds per stage. */
  timings: Record<string, number>;
}

export interface PassportMeasurements {
  /** Chin to crown over photo height, measured on the output. */
  head_height_ratio: number;
  /** Eye line above the bottom edge over photo height, measured on the output. */
  eye_line_ratio: number;
  head_height_px: number;
  eye_line_px: number;
  crown_y: number;
  chin_y: number;
  eye_y: number;
  face_center_x: number;
  horizontal_offset_ratio: number;
  /** Eye-line tilt in the input, the rotation applied, and the tilt left on the output (degrees). */
  input_roll_degrees: number;
  rotation_applied_degrees: number;
  output_roll_degrees: number;
  /** Output pixels per source pixel. */
  scale: number;
  source_px_per_output_px: number;
  /** 'under_headwear': estimated from the face box because headwear covers the head. */
  crown_source: 'mask' | 'fallback' | 'under_headwear';
  headwear_detected: boolean;
  /** The crown / chin touches the input's edge (the head is cut off). */
  crown_cut: boolean;
  chin_cut: boolean;
  /** Share of the silhouette's edge ring showing the old background (null when the background was kept). */
  halo_share: number | null;
  /** 'output': detector re-run on the produced photo; 'plan': it did not find exactly one face there. */
  measured_on: 'output' | 'plan';
  planned_head_height_ratio: number;
  planned_eye_line_ratio: number;
  outside_fill_share: number;
  input_width: number;
  input_height: number;
  /** Detection and segmentation ran on a copy reduced by this (shrink-on-load for large JPEGs); the photo is rendered from full-size pixels. */
  decode_shrink: number;
  enhancement: EnhanceParams | null;
}

/**
 * Refuse when the head must be enlarged more than this to reach the spec's head height (the 512 px
 * corpus needs 1.2-3.0x; the input_resolution check already fails above 1.25x).
 */
export const MAX_UPSCALE = 3.5;
/** Long side of the region rendered for the segmenter (the model itself runs at 256 px). */
export const SEGMENTATION_MAX_SIDE = 384;
/** Segmentation region around the face, in face-box heights. */
const SEG_REGION = { side: 1.6, above: 1.4, belowChin: 1.2 };
/** JPEG qualities tried in order until the file fits the spec's kB limit. */
export const JPEG_QUALITY_STEPS = [95, 92, 90, 87, 84, 80, 76, 72, 68, 64, 60, 55, 50, 45, 40] as const;

function validateFaceBox(b: unknown): NormalizedBox {
  const fields = ['x', 'y', 'width', 'height'] as const;
  if (typeof b !== 'object' || b === null) throw new PassportInputError('invalid_face_box', 'The face box must be an object with x, y, width and height.');
  const rec = b as Record<string, unknown>;
  const missing = fields.filter((f) => rec[f] === undefined || rec[f] === null);
  if (missing.length) {
    throw new PassportInputError('invalid_face_box', `Partial face box: ${missing.join(', ')} missing. Give all of face_x, face_y, face_width and face_height, or none.`, { missing });
  }
  const v = Object.fromEntries(fields.map((f) => [f, Number(rec[f])])) as unknown as NormalizedBox;
  for (const f of fields) {
    if (!Number.isFinite(v[f]) || v[f] < 0 || v[f] > 1) {
      throw new PassportInputError('invalid_face_box', `Face box ${f} must be a number between 0 and 1 (normalized), got ${String(rec[f])}.`);
    }
  }
  if (v.width <= 0 || v.height <= 0) throw new PassportInputError('invalid_face_box', 'Face box width and height must be greater than 0.');
  const eps = 1e-6;
  if (v.x + v.width > 1 + eps || v.y + v.height > 1 + eps) {
    throw new PassportInputError('invalid_face_box', 'The face box extends beyond the image (x + width and y + height must be at most 1).');
  }
  return v;
}

/**
 * Face box from the HTTP fields face_x/face_y/face_width/face_height: null when none is given,
 * a PassportInputError when only some are given or any is out of range.
 */
export function faceBoxFromFields(fields: { face_x?: unknown; face_y?: unknown; face_width?: unknown; face_height?: unknown }): NormalizedBox | null {
  const vals = [fields.face_x, fields.face_y, fields.face_width, fields.face_height];
  const given = vals.filter((v) => v !== undefined && v !== null && v !== '');
  if (given.length === 0) return null;
  const num = (v: unknown): unknown => (v === undefined || v === null || v === '' ? undefined : typeof v === 'string' ? Number(v) : v);
  return validateFaceBox({ x: num(fields.face_x), y: num(fields.face_y), width: num(fields.face_width), height: num(fields.face_height) });
}

/**
 * Shares of the refinement grids' crops the detector thread takes while this thread detects on the
 * rest, when the photo is alone in the process (docs/passport.md, Speed). Input: of 6 crops, while
 * libvips decodes the crop's rectangle; output: of 4, while this thread sharpens, encodes and
 * measures the halo. Beside another photo the output's crops all go to the thread and the input's
 * stay here.
 */
const INPUT_GRID_SHARE_AWAY = 0.5;
const OUTPUT_GRID_SHARE_AWAY = 0.75;

class Timer {
  readonly timings: Record<string, number> = {};
  private last = performance.now();
  private readonly start = this.last;
  lap(name: string): void {
    const now = performance.now();
    this.timings[name] = (this.timings[name] ?? 0) + Math.round((now - this.last) * 10) / 10;
    this.last = now;
  }
  total(): void {
    this.timings.total = Math.round((performance.now() - this.start) * 10) / 10;
  }
}

function normalizedBox(b: Box, w: number, h: number): NormalizedBox {
  return { x: b.x / w, y: b.y / h, width: b.width / w, height: b.height / h };
}

function normalizedKeypoints(k: FaceKeypoints, w: number, h: number): Record<keyof FaceKeypoints, { x: number; y: number }> {
  const out = {} as Record<keyof FaceKeypoints, { x: number; y: number }>;
  for (const name of Object.keys(k) as Array<keyof FaceKeypoints>) out[name] = { x: k[name].x / w, y: k[name].y / h };
  return out;
}

interface ChosenFace {
  box: Box;
  keypoints: FaceKeypoints;
  confidence: number | null;
  detector: DetectorModel | 'manual';
  hasKeypoints: boolean;
  inputFaceCount: number | 'manual';
  ignoredSmallFaces: number;
  manualBox: Box | null;
}

async function chooseFace(src: RawImage, faces: DetectedFace[], model: DetectorModel, manual: NormalizedBox | null, helper?: CropHelper): Promise<ChosenFace> {
  if (manual) {
    const box: Box = { x: manual.x * src.width, y: manual.y * src.height, width: manual.width * src.width, height: manual.height * src.height };
    // The manual box selects the face: when the detector finds one on a crop around it (centre
    // inside the box), its refined geometry is used; otherwise the box with estimated keypoints.
    const seed: DetectedFace = { box, keypoints: keypointsFromBox(box), confidence: 0, model: 'short' };
    const { face, refined } = await refineFace(src, seed, REFINE_GRID, helper);
    const cx = face.box.x + face.box.width / 2;
    const cy = face.box.y + face.box.height / 2;
    const inside = refined && cx >= box.x && cx <= box.x + box.width && cy >= box.y && cy <= box.y + box.height;
    return {
      box: inside ? face.box : box,
      keypoints: inside ? face.keypoints : seed.keypoints,
      confidence: inside ? face.confidence : null,
      detector: 'manual',
      hasKeypoints: inside,
      inputFaceCount: 'manual',
      ignoredSmallFaces: 0,
      manualBox: box,
    };
  }
  if (faces.length === 0) {
    throw new PassportInputError('no_face', 'No face was found in the image. Use a photo that shows one face, looking at the camera, or give the face box.');
  }
  const largest = faces[0].box.height;
  const significant = faces.filter((f) => f.box.height >= SIGNIFICANT_FACE_RATIO * largest);
  if (significant.length > 1) {
    throw new PassportInputError(
      'multiple_faces',
      `Several faces (${significant.length}) were found in the image; a passport photo must show exactly one person. Crop the photo or give the face box.`,
      { faces: significant.length },
    );
  }
  const { face } = await refineFace(src, faces[0], REFINE_GRID, helper);
  return {
    box: face.box,
    keypoints: face.keypoints,
    confidence: faces[0].confidence,
    detector: model,
    hasKeypoints: true,
    inputFaceCount: 1,
    ignoredSmallFaces: faces.length - 1,
    manualBox: null,
  };
}

/**
 * JPEG (sRGB profile, DPI written) at the first quality of JPEG_QUALITY_STEPS that fits the spec's
 * kB limit; never padded. Sharpened first (enhance.ts, sharpenLuma) when asked; returns the pixels
 * that were encoded.
 */
export async function encodeWithinLimit(img: RawImage, spec: PassportSpec, sharpen: boolean): Promise<{ buffer: Buffer; quality: number; pixels: RawImage }> {
  const pixels = sharpen ? sharpenLuma(img) : img;
  const rawIn = { raw: { width: img.width, height: img.height, channels: 3 as const } };
  const maxBytes = (spec.fileSizeKb.max ?? Infinity) * 1000;
  let last: { buffer: Buffer; quality: number; pixels: RawImage } | null = null;
  for (const quality of JPEG_QUALITY_STEPS) {
    const jpeg = await sharp(pixels.data, rawIn)
      .jpeg({ quality, chromaSubsampling: quality >= 90 ? '4:4:4' : '4:2:0' })
      .withDensity(spec.dpi)
      .toBuffer();
    last = { buffer: await withSrgbProfile(jpeg), quality, pixels };
    if (last.buffer.length <= maxBytes) return last;
  }
  if (!last) throw new Error('no JPEG quality steps');
  return last; // still too large at the lowest quality: reported by the file_size check
}

/** The chosen face (working-copy pixels) where the crop plan puts it on the output: the output measure's seed. */
function seedOnOutput(plan: CropPlan, face: ChosenFace): FaceSeed {
  const b = face.box;
  const right = sourceToOutput(plan, face.keypoints.rightEye);
  const left = sourceToOutput(plan, face.keypoints.leftEye);
  return {
    centre: sourceToOutput(plan, { x: b.x + b.width / 2, y: b.y + b.height / 2 }),
    size: Math.max(b.width, b.height) * plan.scale,
    rollDeg: rollDegrees({ rightEye: right, leftEye: left }),
  };
}

function faceRegionOnOutput(plan: CropPlan, centerA: number, boxTopB: number, bw: number, bh: number): Region {
  const k = plan.scale;
  const x0 = (centerA - 0.3 * bw - plan.a0) * k;
  const x1 = (centerA + 0.3 * bw - plan.a0) * k;
  const y0 = (boxTopB + 0.15 * bh - plan.b0) * k;
  const y1 = (boxTopB + 0.85 * bh - plan.b0) * k;
  return { x0: Math.round(x0), y0: Math.round(y0), x1: Math.round(x1), y1: Math.round(y1) };
}

/** Pipelines running in this process (the edge refinement uses the other core only when alone). */
let running = 0;

export async function processPassportPhoto(input: Buffer, options: PassportOptions): Promise<PassportResult> {
  running++;
  try {
    return await runPipeline(input, options);
  } finally {
    running--;
  }
}

async function runPipeline(input: Buffer, options: PassportOptions): Promise<PassportResult> {
  const timer = new Timer();
  if (!isPassportCountry(options.country)) {
    throw new PassportInputError('invalid_country', `Unknown country "${String(options.country)}"; allowed: ${PASSPORT_COUNTRIES.join(', ')}.`, {
      allowed: [...PASSPORT_COUNTRIES],
    });
  }
  const spec = PASSPORT_SPECS[options.country];
  const removeBackground = options.removeBackground ?? true;
  const enhance = options.enhance ?? true;
  const manualBox = options.faceBox === undefined || options.faceBox === null ? null : validateFaceBox(options.faceBox);
  const bg: Rgb = spec.background.rgb;

  // 1. decode (EXIF orientation applied, sRGB, alpha flattened onto the background); large JPEGs:
  // a reduced working copy now, the output's region at full size when it is rendered
  let decoded = await decodeInput(input, bg, true);
  let src = decoded.image;
  timer.lap('decode');

  // 2. detect (short-range, full-range, tiles), then refine on a face crop. Large JPEGs: the
  // full-size pixels the photo can need are decoded on the thread pool while the main thread
  // detects, refines and segments, from the first face found (the short-range pass's, else the
  // merged result's); a final crop it does not cover decodes its own rectangle. A face too small
  // in the reduced copy to be found or measured (a person photographed from further away) is
  // looked for again in a larger copy (about 2000 px).
  let prefetch: Promise<FullSizeRegion> | null = null;
  const startPrefetch = (found: DetectedFace[]): void => {
    if (!prefetch && decoded.shrink > 1 && !needsLargerCopy(decoded, found, manualBox)) prefetch = prefetchRegion(decoded, spec, roughFace(src, found, manualBox));
  };
  const detect = async (): Promise<{ faces: DetectedFace[]; model: DetectorModel }> =>
    manualBox
      ? { faces: [], model: 'short' }
      : detectFacesInImage(src, {
          onShortRange: (found) => {
            if (found.length > 0) startPrefetch(found);
          },
          // Alone in the process, the full-range pass runs on the detector thread (idle now)
          // beside the short-range pass here.
          fullRange: running === 1 ? (img) => detectFullRangeOffThread(img) : undefined,
        });
  let { faces, model } = await detect();
  if (needsLargerCopy(decoded, faces, manualBox)) {
    timer.lap('detect');
    decoded = await decodeInput(input, bg, true, largeWorkingShrink(Math.max(decoded.originalWidth, decoded.originalHeight)));
    src = decoded.image;
    timer.lap('decode');
    ({ faces, model } = await detect());
  }
  startPrefetch(faces);
  // Alone in the process, part of the refinement grid's crops run on the detector thread.
  const chosen = await chooseFace(src, faces, model, manualBox, running === 1 ? gridCropsOffThread(INPUT_GRID_SHARE_AWAY) : undefined);
  timer.lap('detect');

  // 3. level the head: roll from the eyes (not for a bare manual box)
  const inputRoll = chosen.hasKeypoints ? rollDegrees(chosen.keypoints) : 0;
  const frame = makeFaceFrame(chosen.keypoints, chosen.hasKeypoints);
  const face = faceInFrame(frame, chosen);
  const targetHeadPx = ((spec.headHeightRatio[0] + spec.headHeightRatio[1]) / 2) * spec.digital.height;
  // Early size check before segmenting, with the largest plausible head (crown CROWN_MAX_RATIO box
  // heights above the box): if even that needs too much enlargement, stop here.
  // Enlargement is counted in the input's own pixels (the working copy may be reduced).
  const fullPerWork = (decoded.originalWidth / src.width + decoded.originalHeight / src.height) / 2;
  const largestHead = (CROWN_MAX_RATIO + CHIN_BOX_RATIO) * face.boxHeight * fullPerWork;
  if (targetHeadPx / largestHead > MAX_UPSCALE) throw tooSmall(spec, largestHead, targetHeadPx);

  // 4. crown from the person mask within the face's column band
  const bh = face.boxHeight;
  const ra0 = face.centerA - SEG_REGION.side * bh;
  const rb0 = face.boxTopB - SEG_REGION.above * bh;
  const regionW = 2 * SEG_REGION.side * bh;
  const regionH = face.chinB + SEG_REGION.belowChin * bh - rb0;
  const step = Math.max(regionW, regionH) / SEGMENTATION_MAX_SIDE;
  const rw = Math.max(16, Math.round(regionW / step));
  const rh = Math.max(16, Math.round(regionH / step));
  const regionMap = affineFromFrame(frame, ra0, rb0, step);
  const regionImg = await renderWarp(src, regionMap, rw, rh, (img, m) => warpRgbaBilinear(img, m, rw, rh, bg));
  timer.lap('geometry');
  const prob = await segmentPerson(regionImg);
  timer.lap('segment');
  const frameMask: FrameMask = { data: prob, width: rw, height: rh, a0: ra0, b0: rb0, step };
  const crown = crownFromMask(face, frameMask);
  // Headwear: plan and measure to the head estimated under it (needs a detected face, not a bare box).
  const headwear: HeadwearMeasure | null = crown.source === 'mask' ? measureHeadwear(regionImg, frameMask, face, crown.crownB) : null;
  const underHeadwear = headwear?.detected ? chosen.hasKeypoints : null;
  const crownB = underHeadwear ? face.boxTopB - HEAD_EXTENT.CROWN_UNDER_HEADWEAR_RATIO * face.boxHeight : crown.crownB;
  const crownSource = underHeadwear ? 'under_headwear' : crown.source;
  const inFrame = headInFrame(frame, face, crownB, src.width, src.height);

  // 5. crop plan
  const plan = planCrop(spec, frame, face, crownB);
  const headSrc = face.chinB - crownB;
  if (plan.scale / fullPerWork > MAX_UPSCALE) throw tooSmall(spec, headSrc * fullPerWork, targetHeadPx);
  timer.lap('geometry');

  // the output's source: the full-size pixels the crop needs, decoded (or prefetched) and reduced
  const W = spec.digital.width;
  const H = spec.digital.height;
  const outMap = affineFromFrame(frame, plan.a0, plan.b0, 1 / plan.scale);
  const full = await fullSizeRegion(decoded, outMap, W, H, prefetch);
  timer.lap('decode');
  const source = await warpSource(full.image, full.map, W, H);
  const job: PhotoRender = {
    source: source.image,
    map: source.map,
    width: W,
    height: H,
    fill: bg,
    mask: { data: prob, width: rw, height: rh, map: { ox: (plan.a0 - ra0) / step, oy: (plan.b0 - rb0) / step, dux: 1 / (plan.scale * step), duy: 0, dvx: 0, dvy: 1 / (plan.scale * step) } },
  };

  // 6. render (one bicubic resampling from the source; beyond it: background) and background.
  // On both cores when the background is replaced and this is the only photo in progress; beside
  // another one, whose work keeps the other core busy, on this thread alone (splitting costs ~20 %
  // more pixel work: edge-bands.ts).
  let rendered: { image: RawImage; inside: Uint8Array };
  let personProb: Float32Array;
  let alpha: Float32Array | null = null;
  let fg: RawImage;
  if (removeBackground) {
    timer.lap('render'); // rendered with its edges: counted under background
    const both = await renderAndRefineEdges(job, running === 1);
    rendered = both;
    ({ alpha, fg } = both);
    personProb = both.alpha;
  } else {
    const whole = renderRows(job, 0, H);
    rendered = whole;
    personProb = whole.prob;
    fg = whole.image;
    timer.lap('render');
  }
  timer.lap('background');

  // 7. enhancement (measured on the rendered photo, applied to the foreground colours)
  const faceRegion = faceRegionOnOutput(plan, face.centerA, face.boxTopB, face.boxWidth, face.boxHeight);
  let enhanceParams: EnhanceParams | null = null;
  let luts = IDENTITY_LUTS;
  if (enhance) {
    enhanceParams = planEnhancement(rendered.image, personProb, faceRegion);
    luts = finishEnhancement(fg, enhanceParams, faceRegion);
  }
  // The enhancement's tables are applied as the composite is written (one pass over the photo).
  const finalImg = alpha ? compositeOnBackground(fg, alpha, bg, luts) : fillOutside(fg, rendered.inside, bg, luts);
  // The face is measured again on the produced photo (before sharpening and JPEG, which move a
  // pixel by a few levels) by the detector thread, while this thread encodes and measures the halo.
  // A face measured in the input is looked for where the plan put it (the refinement grid around
  // it); a bare manual box is detected on the output first.
  const outSeed = chosen.hasKeypoints ? seedOnOutput(plan, chosen) : undefined;
  const outFace = outSeed
    ? measureOutputFace(finalImg, outSeed, seedCropsOffThread(running === 1 ? OUTPUT_GRID_SHARE_AWAY : 1))
    : measureOutputFaceOffThread(toRgba(finalImg));
  outFace.catch(() => undefined); // awaited below
  timer.lap('enhance');

  // 8. JPEG within the kB limit, DPI and sRGB profile written; libvips encodes on the thread pool
  // and decodes the JPEG again for the pixel checks as soon as it exists.
  const encoding = encodeWithinLimit(finalImg, spec, enhance).then(async (e) => ({
    ...e,
    decoded: await sharp(e.buffer).removeAlpha().raw().toBuffer(),
  }));
  encoding.catch(() => undefined); // awaited below; no unhandled rejection meanwhile

  // 9. compliance. Halo first, while the JPEG is encoded and the detector thread finishes: on the
  // composite (the JPEG's pixels before sharpening and compression, which move a pixel by a few
  // levels where the measure's distances are 28 and 40), against the old background as it would
  // look after the same corrections.
  const halo = alpha ? measureHalo(rendered.image, finalImg, alpha, rendered.inside, bg, luts) : null;
  // The face as detected on the produced photo (on this thread if the detector thread failed);
  // the other pixel checks read the decoded JPEG.
  const of = await outFace.catch(() => measureOutputFace(outSeed ? finalImg : toRgba(finalImg), outSeed));
  let measuredOn: 'output' | 'plan' = 'plan';
  let eyeY = plan.eyeY;
  let chinY = plan.chinY;
  let faceCenterX = plan.faceCenterX;
  let outRoll = inputRoll - frame.angleDeg;
  let complianceRegion = faceRegion;
  let outKeypoints: FaceKeypoints | null = null;
  if (of) {
    const oframe = makeFaceFrame(of.keypoints, false);
    const oface = faceInFrame(oframe, of);
    measuredOn = 'output';
    eyeY = oframe.origin.y;
    chinY = oframe.origin.y + oface.chinB;
    faceCenterX = of.box.x + of.box.width / 2;
    outRoll = rollDegrees(of.keypoints);
    outKeypoints = of.keypoints;
    complianceRegion = {
      x0: Math.round(of.box.x + 0.2 * of.box.width),
      x1: Math.round(of.box.x + 0.8 * of.box.width),
      y0: Math.round(of.box.y + 0.15 * of.box.height),
      y1: Math.round(of.box.y + 0.85 * of.box.height),
    };
  }
  if (!outKeypoints && chosen.hasKeypoints) {
    const k = chosen.keypoints;
    outKeypoints = {
      rightEye: sourceToOutput(plan, k.rightEye), leftEye: sourceToOutput(plan, k.leftEye), noseTip: sourceToOutput(plan, k.noseTip),
      mouth: sourceToOutput(plan, k.mouth), rightEar: sourceToOutput(plan, k.rightEar), leftEar: sourceToOutput(plan, k.leftEar),
    };
  }
  timer.lap('compliance');
  const { buffer, quality, pixels: encodedPixels, decoded: decodedOut } = await encoding;
  timer.lap('encode');
  const outRgb: RawImage = { data: new Uint8Array(decodedOut.buffer, decodedOut.byteOffset, decodedOut.length), width: W, height: H, channels: 3 };
  const faceMeasures = outKeypoints ? measureFace(outRgb, outKeypoints) : null;
  const headHeightRatio = (chinY - plan.crownY) / H;
  const eyeLineRatio = 1 - eyeY / H;
  // Input pixels (full size, not the working copy) per output pixel.
  const sourcePxPerOutputPx = fullPerWork / plan.scale;
  const checks = runComplianceChecks({
    spec,
    photo: outRgb,
    bytes: buffer.length,
    personProb,
    backgroundReplaced: removeBackground,
    enhanced: enhance,
    inputFaceCount: chosen.inputFaceCount,
    headHeightRatio,
    eyeLineRatio,
    faceCenterX,
    rollDeg: outRoll,
    faceRegion: complianceRegion,
    sourcePxPerOutputPx,
    face: faceMeasures,
    headInFrame: inFrame,
    headwear,
    headHeightUnderHeadwear: underHeadwear,
    crownY: plan.crownY,
    halo,
    faceLumaBeforeEnhance: enhanceParams ? enhanceParams.faceLumaBefore : null,
  });
  const outside = outsideShare(plan, src.width, src.height);
  const warnings = buildWarnings({
    spec,
    backgroundReplaced: removeBackground,
    enhanced: enhance,
    ignoredSmallFaces: chosen.ignoredSmallFaces,
    detector: chosen.detector,
    manualWithoutKeypoints: chosen.detector === 'manual' && !chosen.hasKeypoints,
    crownSource: crown.source,
    outsideShare: outside,
    checks,
  });
  timer.lap('compliance');

  // 10. print sheet
  let printSheet: PassportResult['printSheet'] = null;
  if (options.includePrintSheet) {
    const sheet = await makePrintSheet(encodedPixels, spec);
    printSheet = { buffer: sheet.buffer, width: sheet.width, height: sheet.height, copies: sheet.copies, dpi: sheet.dpi };
    timer.lap('print_sheet');
  }
  timer.total();

  const r3 = (v: number): number => Math.round(v * 1000) / 1000;
  const r1 = (v: number): number => Math.round(v * 10) / 10;
  return {
    country: spec.country,
    spec,
    photo: { buffer, width: W, height: H, bytes: buffer.length, dpi: spec.dpi, format: 'jpeg', quality },
    printSheet,
    face: {
      box: normalizedBox(chosen.manualBox ?? chosen.box, src.width, src.height),
      confidence: chosen.confidence,
      keypoints: normalizedKeypoints(chosen.keypoints, src.width, src.height),
      detector: chosen.detector,
    },
    measurements: {
      head_height_ratio: r3(headHeightRatio),
      eye_line_ratio: r3(eyeLineRatio),
      head_height_px: r1(chinY - plan.crownY),
      eye_line_px: r1(H - eyeY),
      crown_y: r1(plan.crownY),
      chin_y: r1(chinY),
      eye_y: r1(eyeY),
      face_center_x: r1(faceCenterX),
      horizontal_offset_ratio: r3(faceCenterX / W - 0.5),
      input_roll_degrees: Math.round(inputRoll * 100) / 100,
      rotation_applied_degrees: Math.round(frame.angleDeg * 100) / 100,
      output_roll_degrees: Math.round(outRoll * 100) / 100,
      scale: r3(1 / sourcePxPerOutputPx),
      source_px_per_output_px: r3(sourcePxPerOutputPx),
      crown_source: crownSource,
      headwear_detected: headwear?.detected ?? false,
      crown_cut: inFrame.crownCut,
      chin_cut: inFrame.chinCut,
      halo_share: halo ? r3(halo.share) : null,
      measured_on: measuredOn,
      planned_head_height_ratio: r3(plan.headHeightRatio),
      planned_eye_line_ratio: r3(plan.eyeLineRatio),
      outside_fill_share: r3(outside),
      input_width: decoded.originalWidth,
      input_height: decoded.originalHeight,
      decode_shrink: decoded.shrink,
      enhancement: enhanceParams,
    },
    checks,
    compliant: isCompliant(checks),
    warnings,
    timings: timer.timings,
  };
}

function tooSmall(spec: PassportSpec, headSrcPx: number, targetHeadPx: number): PassportInputError {
  const needed = Math.ceil(targetHeadPx / MAX_UPSCALE);
  return new PassportInputError(
    'face_too_small',
    `The face is too small for a ${spec.digital.width}x${spec.digital.height} px ${spec.country} photo: the head is about ` +
      `${Math.round(headSrcPx)} px tall in the image and at least ${needed} px are needed (chin to top of hair). Use a larger or closer photo.`,
    { headPx: Math.round(headSrcPx), neededPx: needed },
  );
}

/** Full-size pixels decoded for a rectangle (possibly reduced by `reduce`), and the rectangle. */
interface FullSizeRegion {
  bounds: PixelBounds;
  reduce: number;
  image: RawImage;
  left: number;
  top: number;
  scaleX: number;
  scaleY: number;
}

/** Output map (output pixel -> working-copy coordinates) scaled to full-size coordinates. */
function toFullSize(decoded: DecodedInput, map: AffineMap): AffineMap {
  const kx = decoded.originalWidth / decoded.image.width;
  const ky = decoded.originalHeight / decoded.image.height;
  return { ox: map.ox * kx, oy: map.oy * ky, dux: map.dux * kx, duy: map.duy * ky, dvx: map.dvx * kx, dvy: map.dvy * ky };
}

/** The full-size rectangle the samples of `full` need, plus the resampling kernels' reach. */
function boundsOf(full: AffineMap, width: number, height: number, margin = 0): PixelBounds {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const [u, v] of [[0, 0], [width, 0], [0, height], [width, height]]) {
    xs.push(full.ox + u * full.dux + v * full.dvx);
    ys.push(full.oy + u * full.duy + v * full.dvy);
  }
  // renderWarp's reduction pads by 3 steps, the bicubic kernel reaches 2 pixels.
  const pad = 3 * Math.max(1, Math.hypot(full.dux, full.duy)) + 2 + margin;
  return {
    left: Math.floor(Math.min(...xs) - pad),
    top: Math.floor(Math.min(...ys) - pad),
    right: Math.ceil(Math.max(...xs) + pad),
    bottom: Math.ceil(Math.max(...ys) + pad),
  };
}

/**
 * Faces (box height, working-copy pixels) below this in a reduced working copy are looked for
 * again in a larger one (largeWorkingShrink): refinement and segmentation measure the head on the
 * working copy.
 * The corpus portraits measure 86-193 px in their own 512 px photos and 90-236 px in the reduced
 * copies of their 12 MP versions (the bench's: 123), all measured well; a person further away
 * (55 px) was refused.
 */
export const MIN_WORKING_FACE_PX = 80;

/** A reduced working copy in which no face was found, or the face (or manual box) is small. */
function needsLargerCopy(decoded: DecodedInput, faces: DetectedFace[], manual: NormalizedBox | null): boolean {
  if (decoded.shrink <= largeWorkingShrink(Math.max(decoded.originalWidth, decoded.originalHeight))) return false;
  const height = manual ? manual.height * decoded.image.height : (faces[0]?.box.height ?? 0);
  return height < MIN_WORKING_FACE_PX;
}

/** The face as first detected (or the manual box), before refinement; null when there is none. */
function roughFace(src: RawImage, faces: DetectedFace[], manual: NormalizedBox | null): { box: Box; keypoints: FaceKeypoints; hasKeypoints: boolean } | null {
  if (manual) {
    const box: Box = { x: manual.x * src.width, y: manual.y * src.height, width: manual.width * src.width, height: manual.height * src.height };
    return { box, keypoints: keypointsFromBox(box), hasKeypoints: false };
  }
  return faces[0] ? { box: faces[0].box, keypoints: faces[0].keypoints, hasKeypoints: true } : null;
}

/**
 * Crown positions (box heights above the face box) whose crops bound the crops planned later: the
 * corpus measures 0.53-0.87, a hat included; a crown outside this range decodes its own rectangle.
 */
const PREFETCH_CROWNS = [0.35, 1.0] as const;
/** Margin around the prefetched rectangle for refinement and levelling, in face-box heights. */
const PREFETCH_MARGIN = 0.1;
/** The prefetched rectangle is reduced so the smallest plausible head still samples it at this step. */
const PREFETCH_STEP_LEFT = 1.0;

/**
 * Starts decoding the full-size rectangle covering the crops planned for the smallest and the
 * largest plausible head around the rough face (the crop's edges move linearly with the head
 * size between them), with a margin for what refinement and levelling change, reduced while
 * decoding to the smallest head's sampling step. The photo is rendered from it when it covers the
 * final crop and the final step is not smaller; otherwise the final rectangle is decoded.
 */
function prefetchRegion(decoded: DecodedInput, spec: PassportSpec, rough: ReturnType<typeof roughFace>): Promise<FullSizeRegion> | null {
  if (!rough) return null;
  const frame = makeFaceFrame(rough.keypoints, rough.hasKeypoints);
  const face = faceInFrame(frame, rough);
  const steps: number[] = [];
  const all: PixelBounds[] = PREFETCH_CROWNS.map((k) => {
    const plan = planCrop(spec, frame, face, face.boxTopB - k * face.boxHeight);
    const full = toFullSize(decoded, affineFromFrame(frame, plan.a0, plan.b0, 1 / plan.scale));
    steps.push(Math.hypot(full.dux, full.duy));
    return boundsOf(full, spec.digital.width, spec.digital.height, PREFETCH_MARGIN * face.boxHeight * (decoded.originalWidth / decoded.image.width));
  });
  // Reduce while decoding (libvips, off the main thread) as far as the smallest head's crop allows:
  // the render then resamples at about 1:1.
  const reduce = Math.max(1, Math.min(...steps) / PREFETCH_STEP_LEFT);
  const bounds: PixelBounds = {
    left: Math.max(0, Math.min(...all.map((b) => b.left))),
    top: Math.max(0, Math.min(...all.map((b) => b.top))),
    right: Math.min(decoded.originalWidth, Math.max(...all.map((b) => b.right))),
    bottom: Math.min(decoded.originalHeight, Math.max(...all.map((b) => b.bottom))),
  };
  if (bounds.right - bounds.left < 2 || bounds.bottom - bounds.top < 2) return null;
  const p = decoded.region(bounds, reduce).then((r) => ({ bounds, reduce, ...r }));
  p.catch(() => undefined); // a failure surfaces when (if) it is awaited
  return p;
}

/**
 * The full-size pixels that `map` (output pixel -> working-copy coordinates) samples, and the map
 * onto them: the prefetched rectangle when it covers what the map needs, else only the rectangle
 * the map needs is decoded.
 */
async function fullSizeRegion(
  decoded: DecodedInput,
  map: AffineMap,
  width: number,
  height: number,
  prefetch: Promise<FullSizeRegion> | null,
): Promise<{ image: RawImage; map: AffineMap }> {
  const full = toFullSize(decoded, map);
  const need = boundsOf(full, width, height);
  const clipped: PixelBounds = {
    left: Math.max(0, need.left),
    top: Math.max(0, need.top),
    right: Math.min(decoded.originalWidth, need.right),
    bottom: Math.min(decoded.originalHeight, need.bottom),
  };
  const pre = prefetch ? await prefetch : null;
  // Usable when it covers the crop and, reduced, is still sampled at a step of at least 1 (never enlarged).
  const step = Math.hypot(full.dux, full.duy);
  const covers =
    pre && pre.bounds.left <= clipped.left && pre.bounds.top <= clipped.top && pre.bounds.right >= clipped.right && pre.bounds.bottom >= clipped.bottom && step >= pre.reduce;
  const region = covers ? pre : await decoded.region(need);
  const { scaleX: sx, scaleY: sy } = region;
  return {
    image: region.image,
    map: { ox: (full.ox - region.left) * sx, oy: (full.oy - region.top) * sy, dux: full.dux * sx, duy: full.duy * sy, dvx: full.dvx * sx, dvy: full.dvy * sy },
  };
}
