// Loads @mediapipe/tasks-vision (1.1.0, CPU delegate) in plain Node with the models from the legacy
// npm packages, once per process (lazy singletons). Nothing is downloaded: the WASM and the models
// are read from node_modules, the telemetry POST is answered in-process (telemetry.ts).
//
// The WASM runs on the calling thread: a detect/segment call blocks the event loop for 5-40 ms.
// Run this in worker processes (the `passport` queue), not in the HTTP server.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FaceDetector, ImageSegmenter } from '@mediapipe/tasks-vision';
import { createFakeCanvas, type FakeCanvas } from './fake-webgl.js';
import { installPolyfills } from './polyfills.js';
import { installTelemetryBlock, withUnrefIntervals } from './telemetry.js';
import { addMetadataToTflite, buildImageModelMetadata, FACE_MODEL_METADATA, SELFIE_MODEL_METADATA, type ImageModelMetadata } from './tflite-metadata.js';

type Vision = typeof import('@mediapipe/tasks-vision');
type WasmFileset = Parameters<typeof FaceDetector.createFromOptions>[0];

const require = createRequire(import.meta.url);

/**
 * Model files from the legacy packages (Apache-2.0), resolved in node_modules at run time. The
 * full-range detector comes twice: the dense model for passport photos (their geometry was
 * measured and tuned with it) and the package's sparse variant (pruned weights for CPU inference)
 * for the upload preview's faces: the same corpus detections, 16 ms a run instead of 20 here, but
 * boxes a few pixels apart, which moves a passport crop (docs/transformations.md, Costs).
 */
export const MODEL_FILES = {
  faceShort: '@mediapipe/face_detection/face_detection_short_range.tflite',
  faceFull: '@mediapipe/face_detection/face_detection_full_range.tflite',
  faceFullSparse: '@mediapipe/face_detection/face_detection_full_range_sparse.tflite',
  selfie: '@mediapipe/selfie_segmentation/selfie_segmentation.tflite',
} as const;
export type ModelName = keyof typeof MODEL_FILES;

const MODEL_METADATA: Record<ModelName, ImageModelMetadata> = {
  faceShort: FACE_MODEL_METADATA,
  faceFull: FACE_MODEL_METADATA,
  faceFullSparse: FACE_MODEL_METADATA,
  selfie: SELFIE_MODEL_METADATA,
};

/**
 * Minimum detector score. Real faces in the corpus score 0.77 (3/4 profile) to 0.97; the one false
 * positive seen on the landscape photos scored 0.57.
 */
export const MIN_DETECTION_CONFIDENCE = 0.65;

export function modelPath(name: ModelName): string {
  return require.resolve(MODEL_FILES[name]);
}

/** Model bytes with the TFLite metadata the Tasks API needs, added in memory. */
export function loadModel(name: ModelName): Uint8Array {
  const raw = new Uint8Array(readFileSync(modelPath(name)));
  return addMetadataToTflite(raw, buildImageModelMetadata(MODEL_METADATA[name]));
}

function fileset(): WasmFileset {
  const pkgDir = path.dirname(require.resolve('@mediapipe/tasks-vision'));
  // The ES-module build of the loader; emscripten's Node branch reads the .wasm with fs.
  return {
    wasmLoaderPath: path.join(pkgDir, 'wasm', 'vision_wasm_module_internal.js'),
    wasmBinaryPath: path.join(pkgDir, 'wasm', 'vision_wasm_module_internal.wasm'),
  };
}

let visionPromise: Promise<Vision> | null = null;
function vision(): Promise<Vision> {
  visionPromise ??= (async () => {
    installPolyfills();
    installTelemetryBlock();
    return import('@mediapipe/tasks-vision');
  })();
  return visionPromise;
}

interface Loaded<T> {
  task: T;
  canvas: FakeCanvas;
}
type Slot<T> = Promise<Loaded<T>> | null;

export type FaceDetectorModel = 'short' | 'full' | 'full-sparse';

const faceDetectors: Record<FaceDetectorModel, Slot<FaceDetector>> = { short: null, full: null, 'full-sparse': null };
let segmenter: Slot<ImageSegmenter> = null;
// Task creation hands the WASM factory over through self.ModuleFactory: never create two at once.
let creationChain: Promise<unknown> = Promise.resolve();

function serialized<T>(fn: () => Promise<T>): Promise<T> {
  const next = creationChain.then(fn, fn);
  creationChain = next.catch(() => undefined);
  return next;
}

function canvasFor(c: FakeCanvas): OffscreenCanvas {
  return c as unknown as OffscreenCanvas; // the fake context satisfies what the CPU path touches
}

async function createFaceDetector(model: (typeof FACE_MODEL_NAMES)[FaceDetectorModel]): Promise<Loaded<FaceDetector>> {
  const v = await vision();
  return serialized(() =>
    withUnrefIntervals(async () => {
      const canvas = createFakeCanvas();
      const task = await v.FaceDetector.createFromOptions(fileset(), {
        canvas: canvasFor(canvas),
        baseOptions: { modelAssetBuffer: loadModel(model), delegate: 'CPU' },
        runningMode: 'IMAGE',
        minDetectionConfidence: MIN_DETECTION_CONFIDENCE,
        minSuppressionThreshold: 0.3,
      });
      return { task, canvas };
    }),
  );
}

async function createSegmenter(): Promise<Loaded<ImageSegmenter>> {
  const v = await vision();
  return serialized(() =>
    withUnrefIntervals(async () => {
      const canvas = createFakeCanvas();
      const task = await v.ImageSegmenter.createFromOptions(fileset(), {
        canvas: canvasFor(canvas),
        baseOptions: { modelAssetBuffer: loadModel('selfie'), delegate: 'CPU' },
        runningMode: 'IMAGE',
        outputConfidenceMasks: true,
        outputCategoryMask: false,
      });
      return { task, canvas };
    }),
  );
}

function keep<T>(slot: Promise<Loaded<T>>, reset: () => void): Promise<Loaded<T>> {
  // A failed load is not cached: the next call retries.
  slot.catch(reset);
  return slot;
}

const FACE_MODEL_NAMES: Record<FaceDetectorModel, 'faceShort' | 'faceFull' | 'faceFullSparse'> = {
  short: 'faceShort',
  full: 'faceFull',
  'full-sparse': 'faceFullSparse',
};

export async function getFaceDetector(range: FaceDetectorModel): Promise<FaceDetector> {
  const slot = (faceDetectors[range] ??= keep(createFaceDetector(FACE_MODEL_NAMES[range]), () => {
    faceDetectors[range] = null;
  }));
  return (await slot).task;
}

export async function getSegmenter(): Promise<ImageSegmenter> {
  segmenter ??= keep(createSegmenter(), () => { segmenter = null; });
  return (await segmenter).task;
}

/** Loads the short-range detector and the segmenter now (worker start-up) instead of on first use. */
export async function warmUp(): Promise<void> {
  await Promise.all([getFaceDetector('short'), getSegmenter()]);
}

/** Fake-GL counters of every loaded task (a test asserts draws === 0). */
export async function glStats(): Promise<Array<{ model: string; uploads: number; readPixels: number; draws: number }>> {
  const out: Array<{ model: string; uploads: number; readPixels: number; draws: number }> = [];
  const slots: Array<[string, Slot<FaceDetector> | Slot<ImageSegmenter>]> = [
    ...(Object.keys(faceDetectors) as FaceDetectorModel[]).map((m): [string, Slot<FaceDetector>] => [FACE_MODEL_NAMES[m], faceDetectors[m]]),
    ['selfie', segmenter],
  ];
  for (const [model, slot] of slots) {
    if (!slot) continue;
    const { canvas } = await slot;
    if (canvas.ctx) out.push({ model, ...canvas.ctx.stats });
  }
  return out;
}

/**
 * Closes every loaded task (frees the WASM graphs, stops the library's telemetry timer; the final
 * telemetry flush is answered locally). Later calls load the models again.
 */
export async function closeModels(): Promise<void> {
  const slots = [...Object.values(faceDetectors), segmenter];
  for (const model of Object.keys(faceDetectors) as FaceDetectorModel[]) faceDetectors[model] = null;
  segmenter = null;
  for (const slot of slots) {
    if (!slot) continue;
    try {
      (await slot).task.close();
    } catch {
      // a task that failed to load has nothing to close
    }
  }
}
