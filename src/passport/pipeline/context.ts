// The pipeline's typed context: each stage takes the context the previous one returned and adds
// what it found, so a stage can read only what has been computed before it.
import type { DetectedFace, DetectorModel } from '../../vision/face-detector.js';
import type { FaceFrame, Box, FaceKeypoints } from '../../vision/face-frame.js';
import type { RawImage, Rgb } from '../../vision/raw-image.js';
import type { PhotoRender } from '../edge-bands.js';
import type { Encoded } from '../encode.js';
import type { EnhanceParams, Region } from '../enhance.js';
import type { FaceMeasures } from '../face-checks.js';
import type { NormalizedBox } from '../face-box.js';
import type { CropPlan, FaceInFrame, FrameMask, PhotoGeometry } from '../geometry.js';
import type { HaloMeasure } from '../halo.js';
import type { HeadwearMeasure, HeadInFrame } from '../head-extent.js';
import type { DecodedInput } from '../image.js';
import type { ChannelLuts } from '../kernels/pixels.js';
import type { PassportSpec } from '../specs.js';
import type { PhotoSchedule } from './scheduler.js';

/** Milliseconds per stage, summed when a stage runs twice. */
export class Timer {
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

/** The request, checked. */
export interface Request {
  input: Buffer;
  spec: PassportSpec;
  background: Rgb;
  removeBackground: boolean;
  enhance: boolean;
  includePrintSheet: boolean;
  manualBox: NormalizedBox | null;
  timer: Timer;
  schedule: PhotoSchedule;
}

export interface Decoded extends Request {
  decoded: DecodedInput;
}

export interface Detected extends Decoded {
  faces: DetectedFace[];
  model: DetectorModel;
}

/** The face the photo is made of, in working-copy pixels. */
export interface ChosenFace {
  box: Box;
  keypoints: FaceKeypoints;
  confidence: number | null;
  detector: DetectorModel | 'manual';
  hasKeypoints: boolean;
  inputFaceCount: number | 'manual';
  ignoredSmallFaces: number;
  manualBox: Box | null;
}

export interface Refined extends Decoded {
  chosen: ChosenFace;
  inputRoll: number;
  /** The levelled face frame and the face in it. */
  frame: FaceFrame;
  face: FaceInFrame;
  /** Full-size input pixels per working-copy pixel. */
  fullPerWork: number;
  targetHeadPx: number;
}

export interface Segmented extends Refined {
  /** The person probability around the face, on a grid in the face frame. */
  mask: FrameMask;
  crownSource: 'mask' | 'fallback' | 'under_headwear';
  /** The crown as the mask shows it (the warnings say when the fallback was used). */
  maskCrownSource: 'mask' | 'fallback';
  crownB: number;
  headwear: HeadwearMeasure | null;
  underHeadwear: boolean | null;
  inFrame: HeadInFrame;
}

export interface Planned extends Segmented {
  plan: CropPlan;
  job: PhotoRender;
}

export interface Rendered extends Planned {
  image: RawImage;
  inside: Uint8Array;
  /** The person's probability on the photo: the refined alpha when the background is replaced. */
  personProb: Float32Array;
  alpha: Float32Array | null;
  /** The foreground colours (the old background removed at the soft edge when it is replaced). */
  fg: RawImage;
}

export interface Enhanced extends Rendered {
  faceRegion: Region;
  enhancement: EnhanceParams | null;
  luts: ChannelLuts;
}

export interface Composited extends Enhanced {
  photo: RawImage;
}

/** The photo measured on its own: the faces found on it, the head's geometry (null: no face found), the JPEG read back. */
export interface Measured extends Composited {
  halo: HaloMeasure | null;
  faceCount: number;
  geometry: PhotoGeometry | null;
  encoded: Encoded;
  faceMeasures: FaceMeasures | null;
}
