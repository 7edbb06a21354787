// Face detection on a worker thread. MediaPipe's WASM runs on the thread that calls it and holds
// it (~17 ms per full-range pass, ~8 per refinement crop); on the worker process's main thread that
// stalls everything else until it returns. Here:
//  - the upload preview's faces: the finalize job's lookup, quota hold and durable write proceed
//    meanwhile (docs/transformations.md, Costs);
//  - the passport input's full-range pass, while the main thread runs the short-range one;
//  - the passport photo's output measurement: the main thread measures the halo meanwhile
//    (docs/passport.md, Speed).
// One thread per process (request-thread.ts: answered in order, started on first use, alive only
// while a call is in flight). A thread that dies or does not answer in time fails its calls in
// flight (the preview is best effort; a passport job fails and is retried) and is started again
// by the next call.
import type { CropHelper, DetectedFace, FaceSeed, GridCrop, OutputFaces } from '../face-detector.js';
import { RequestThread } from '../request-thread.js';
import { type RawImage } from '../raw-image.js';

export type DetectorRequest =
  | { op: 'photo-faces' }
  | { op: 'output-face' }
  | { op: 'full-range' }
  | { op: 'grid-crops'; seed: FaceSeed; crops: readonly GridCrop[] };

/**
 * A call not answered within this long ends its thread, failing the calls queued behind it: a
 * stuck WASM call would otherwise hold every later one (passport jobs time out, previews go
 * without faces) until the process restarts. The first call also loads the models (~1 s).
 */
export const DETECTOR_CALL_TIMEOUT_MS = 30_000;

export interface DetectorCallOptions {
  timeoutMs?: number;
}

const thread = new RequestThread(new URL('./detector-thread.worker.js', import.meta.url), 'face detection thread', DETECTOR_CALL_TIMEOUT_MS);

function call<T>(request: DetectorRequest, img: RawImage, options: DetectorCallOptions): Promise<T> {
  // Copied: the caller keeps its pixels (libvips may still be reading them).
  const copy = new Uint8Array(img.data);
  return thread.call<T>({ ...request, image: { data: copy, width: img.width, height: img.height, channels: img.channels } }, [copy.buffer], options.timeoutMs);
}

/** detectFacesInPhoto (RGBA) on the detector thread. */
export function detectFacesInPhotoOffThread(img: RawImage, options: DetectorCallOptions = {}): Promise<DetectedFace[]> {
  return call<DetectedFace[]>({ op: 'photo-faces' }, img, options);
}

/** measureOutputFace (RGBA) on the detector thread. */
export function measureOutputFaceOffThread(img: RawImage, options: DetectorCallOptions = {}): Promise<OutputFaces> {
  return call<OutputFaces>({ op: 'output-face' }, img, options);
}

/** detectFullRange (RGBA) on the detector thread: the passport input's full-range pass (face-detector.ts). */
export function detectFullRangeOffThread(img: RawImage, options: DetectorCallOptions = {}): Promise<DetectedFace[]> {
  return call<DetectedFace[]>({ op: 'full-range' }, img, options);
}

/**
 * A CropHelper on the detector thread for refineFace's grid (`share` of the crops; the thread is
 * sent the crops' image: detectOnGrid there).
 */
export function gridCropsOffThread(share: number): CropHelper {
  return { share, run: (img, seed, crops) => call<Array<DetectedFace | null>>({ op: 'grid-crops', seed, crops }, img, {}) };
}

/** Ends the thread (worker shutdown); calls in flight fail. */
export function closeDetectorThread(): Promise<void> {
  return thread.close();
}
