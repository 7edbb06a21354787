// The first stages: the request checked, the input decoded, faces detected, the face chosen,
// refined and levelled.
import { detectFacesInImage, refineFace, REFINE_GRID, SIGNIFICANT_FACE_RATIO, type DetectedFace, type DetectorModel } from '../../vision/face-detector.js';
import { rollDegrees, type Box } from '../../vision/face-frame.js';
import { PassportInputError } from '../errors.js';
import { validateFaceBox } from '../face-box.js';
import { CHIN_BOX_RATIO, CROWN_MAX_RATIO, faceInFrame, keypointsFromBox, makeFaceFrame } from '../geometry.js';
import { decodeInput, largeWorkingShrink } from '../image.js';
import { isPassportCountry, PASSPORT_COUNTRIES, PASSPORT_SPECS, type PassportSpec } from '../specs.js';
import type { PassportOptions } from '../passport-result.js';
import { Timer, type ChosenFace, type Decoded, type Detected, type Refined, type Request } from './context.js';
import { needsLargerCopy } from './full-size-region.js';
import type { PhotoSchedule } from './scheduler.js';

/**
 * Refuse when the head must be enlarged more than this to reach the spec's head height (the 512 px
 * corpus needs 1.2-3.0x; the input_resolution check already fails above 1.25x).
 */
export const MAX_UPSCALE = 3.5;

export function faceTooSmall(spec: PassportSpec, headSrcPx: number, targetHeadPx: number): PassportInputError {
  const needed = Math.ceil(targetHeadPx / MAX_UPSCALE);
  return new PassportInputError(
    'face_too_small',
    `The face is too small for a ${spec.digital.width}x${spec.digital.height} px ${spec.country} photo: the head is about ` +
      `${Math.round(headSrcPx)} px tall in the image and at least ${needed} px are needed (chin to top of hair). Use a larger or closer photo.`,
    { headPx: Math.round(headSrcPx), neededPx: needed },
  );
}

export function checkRequest(input: Buffer, options: PassportOptions, schedule: PhotoSchedule): Request {
  const timer = new Timer();
  if (!isPassportCountry(options.country)) {
    throw new PassportInputError('invalid_country', `Unknown country "${String(options.country)}"; allowed: ${PASSPORT_COUNTRIES.join(', ')}.`, {
      allowed: [...PASSPORT_COUNTRIES],
    });
  }
  const spec = PASSPORT_SPECS[options.country];
  return {
    input,
    spec,
    background: spec.background.rgb,
    removeBackground: options.removeBackground ?? true,
    enhance: options.enhance ?? true,
    includePrintSheet: options.includePrintSheet ?? false,
    manualBox: options.faceBox === undefined || options.faceBox === null ? null : validateFaceBox(options.faceBox),
    timer,
    schedule,
  };
}

/**
 * Decode: EXIF orientation applied, sRGB, alpha flattened onto the background; large JPEGs give a
 * reduced working copy now and the output's region at full size when it is rendered.
 */
export async function decode(r: Request): Promise<Decoded> {
  const decoded = await decodeInput(r.input, r.background, true);
  r.timer.lap('decode');
  return { ...r, decoded };
}

/**
 * Detect (short-range, full-range, tiles). A face too small in the reduced copy to be found or
 * measured (a person photographed from further away) is looked for again in a larger copy
 * (about 2000 px). Large JPEGs: the schedule starts decoding the full-size pixels the photo can
 * need from the first face found.
 */
export async function detect(d: Decoded): Promise<Detected> {
  const find = async (at: Decoded): Promise<Detected> => {
    if (at.manualBox) return { ...at, faces: [], model: 'short' };
    const { faces, model } = await detectFacesInImage(at.decoded.image, {
      onShortRange: (found) => {
        if (found.length > 0) at.schedule.prefetch(at.decoded, at.spec, found, at.manualBox);
      },
      fullRange: at.schedule.fullRangeDetector(),
    });
    return { ...at, faces, model };
  };
  let found = await find(d);
  if (needsLargerCopy(found.decoded, found.faces, found.manualBox)) {
    d.timer.lap('detect');
    const { originalWidth, originalHeight } = found.decoded;
    const decoded = await decodeInput(d.input, d.background, true, largeWorkingShrink(Math.max(originalWidth, originalHeight)));
    d.timer.lap('decode');
    found = await find({ ...d, decoded });
  }
  found.schedule.prefetch(found.decoded, found.spec, found.faces, found.manualBox);
  return found;
}

/** Refine the chosen face on crops around it, level the head (roll from the eyes; not for a bare manual box). */
export async function refine(d: Detected): Promise<Refined> {
  const src = d.decoded.image;
  const chosen = await chooseFace(d, d.faces, d.model);
  d.timer.lap('detect');
  const frame = makeFaceFrame(chosen.keypoints, chosen.hasKeypoints);
  const face = faceInFrame(frame, chosen);
  const targetHeadPx = ((d.spec.headHeightRatio[0] + d.spec.headHeightRatio[1]) / 2) * d.spec.digital.height;
  // Early size check before segmenting, with the largest plausible head (crown CROWN_MAX_RATIO box
  // heights above the box): if even that needs too much enlargement, stop here. Enlargement is
  // counted in the input's own pixels (the working copy may be reduced).
  const fullPerWork = (d.decoded.originalWidth / src.width + d.decoded.originalHeight / src.height) / 2;
  const largestHead = (CROWN_MAX_RATIO + CHIN_BOX_RATIO) * face.boxHeight * fullPerWork;
  if (targetHeadPx / largestHead > MAX_UPSCALE) throw faceTooSmall(d.spec, largestHead, targetHeadPx);
  const { faces: _faces, model: _model, ...decoded } = d;
  return { ...decoded, chosen, inputRoll: chosen.hasKeypoints ? rollDegrees(chosen.keypoints) : 0, frame, face, fullPerWork, targetHeadPx };
}

async function chooseFace(d: Decoded, faces: DetectedFace[], model: DetectorModel): Promise<ChosenFace> {
  const src = d.decoded.image;
  const manual = d.manualBox;
  if (manual) {
    const box: Box = { x: manual.x * src.width, y: manual.y * src.height, width: manual.width * src.width, height: manual.height * src.height };
    // The manual box selects the face: when the detector finds one on a crop around it (centre
    // inside the box), its refined geometry is used; otherwise the box with estimated keypoints.
    const seed: DetectedFace = { box, keypoints: keypointsFromBox(box), confidence: 0, model: 'short' };
    const { face, refined } = await refineFace(src, seed, REFINE_GRID, d.schedule.inputGrid());
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
  const { face } = await refineFace(src, faces[0], REFINE_GRID, d.schedule.inputGrid());
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
