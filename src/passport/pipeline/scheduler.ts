// Where the pipeline's work runs: on this thread, the detector thread or the edge thread, and what
// libvips decodes ahead. The stages ask the photo's schedule; they never count photos themselves.
//
// On 2 cores a photo alone in the process keeps both busy: the full-range detector pass and part
// of the input's refinement grid go to the detector thread, the bottom band of the edges to the
// edge thread, and the full-size pixels of the crop are decoded while the face is still being
// refined. Beside another photo (whose work keeps the other core busy) the grid stays on this
// thread and the edges are refined in one piece (splitting costs ~20 % more pixel work:
// edge-bands.ts). The output measure always runs on the detector thread.
import type { CropHelper, DetectedFace, OutputFaces } from '../../vision/face-detector.js';
import { detectFullRangeOffThread, gridCropsOffThread, measureOutputFaceOffThread } from '../../vision/mediapipe/detector-thread.js';
import type { AffineMap, RawImage } from '../../vision/raw-image.js';
import type { NormalizedBox } from '../face-box.js';
import type { DecodedInput } from '../image.js';
import type { PassportSpec } from '../specs.js';
import { fullSizeRegion, needsLargerCopy, prefetchRegion, roughFace, type FullSizeRegion } from './full-size-region.js';

/**
 * Share of the input's refinement grid (6 crops) the detector thread takes while libvips decodes
 * the crop's rectangle, when the photo is alone in the process (docs/passport.md, Speed); beside
 * another photo the crops stay here.
 */
export const INPUT_GRID_SHARE_AWAY = 0.5;

/** One photo's view of the process: whether it is alone decides where its work runs. */
export class PhotoSchedule {
  private prefetched: Promise<FullSizeRegion> | null = null;

  constructor(private readonly alone: () => boolean) {}

  /**
   * Starts decoding the crop's full-size pixels around the first face found, while this thread
   * detects, refines and segments (large JPEGs; not when a larger working copy is still needed).
   */
  prefetch(decoded: DecodedInput, spec: PassportSpec, found: DetectedFace[], manual: NormalizedBox | null): void {
    if (this.prefetched || decoded.shrink <= 1 || needsLargerCopy(decoded, found, manual)) return;
    this.prefetched = prefetchRegion(decoded, spec, roughFace(decoded.image, found, manual));
  }

  /** The full-size pixels `map` samples, from the prefetched rectangle when it covers them. */
  fullSizeRegion(decoded: DecodedInput, map: AffineMap, width: number, height: number): Promise<{ image: RawImage; map: AffineMap }> {
    return fullSizeRegion(decoded, map, width, height, this.prefetched);
  }

  /** The full-range detector pass on the detector thread (idle now), beside the short-range pass here. */
  fullRangeDetector(): ((img: RawImage) => Promise<DetectedFace[]>) | undefined {
    return this.alone() ? (img) => detectFullRangeOffThread(img) : undefined;
  }

  /** The detector thread's share of the input's refinement grid. */
  inputGrid(): CropHelper | undefined {
    return this.alone() ? gridCropsOffThread(INPUT_GRID_SHARE_AWAY) : undefined;
  }

  /** The faces on the produced photo, found from scratch on the detector thread while this one sharpens, encodes and measures the halo. */
  measureOutput(rgba: RawImage): Promise<OutputFaces> {
    return measureOutputFaceOffThread(rgba);
  }

  /** Render and refine the edges in two bands on both cores. */
  bothCores(): boolean {
    return this.alone();
  }
}

/** The photos in progress in this process. */
export class PassportScheduler {
  private running = 0;

  async run<T>(work: (schedule: PhotoSchedule) => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await work(new PhotoSchedule(() => this.running === 1));
    } finally {
      this.running--;
    }
  }
}
