// Face detection on a worker thread. MediaPipe's WASM runs on the thread that calls it and holds
// it (~17 ms per full-range pass, ~8 per refinement crop); on the worker process's main thread that
// stalls everything else until it returns. Here:
//  - the upload preview's faces: the finalize job's lookup, quota hold and durable write proceed
//    meanwhile (docs/transformations.md, Costs);
//  - the passport photo's output measurement: the main thread refines the edges meanwhile
//    (docs/passport.md, Speed).
// Requests are answered in order. One thread per process,
// started on first use, keeping the process alive only while a call is in flight; a thread that dies fails the calls in
// flight (the preview is best effort) and is started again by the next call.
import { Worker } from 'node:worker_threads';
import type { DetectedFace } from '../face-detector.js';
import type { RawImage } from '../image.js';

export type DetectorRequest = { op: 'photo-faces' } | { op: 'output-face' };
export interface OutputFace {
  face: DetectedFace | null;
  significant: number;
}

interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
}

let thread: Worker | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

function failAll(err: Error): void {
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

/**
 * A thread with the process's flags (loaders such as --import carry over), less --input-type,
 * which only an --eval string may have; when Node refuses one of them for a thread (process-wide
 * flags such as --expose-gc are refused when given explicitly), with none.
 */
function newThread(url: URL): Worker {
  const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type'));
  try {
    return new Worker(url, { execArgv });
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw err;
    return new Worker(url, { execArgv: [] });
  }
}

function started(): Worker {
  if (thread) return thread;
  const t = newThread(new URL('./detector-thread.worker.js', import.meta.url));
  t.on('message', (m: Reply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (pending.size === 0) t.unref();
    if (m.error === undefined) p.resolve(m.result);
    else p.reject(new Error(m.error ?? 'face detection failed'));
  });
  const gone = (err: Error) => {
    if (thread === t) thread = null;
    failAll(err);
  };
  t.on('error', (err) => gone(err));
  t.on('exit', (code) => gone(new Error(`face detection thread exited (${code})`)));
  // Referenced only while a call is in flight (attaching a 'message' listener refs it again).
  t.unref();
  thread = t;
  return t;
}

function call<T>(request: DetectorRequest, img: RawImage): Promise<T> {
  const t = started();
  const id = nextId++;
  // Copied: the caller keeps its pixels (libvips may still be reading them).
  const copy = new Uint8Array(img.data);
  return new Promise<T>((resolve, reject) => {
    if (pending.size === 0) t.ref();
    pending.set(id, { resolve: resolve as (r: unknown) => void, reject });
    t.postMessage({ id, ...request, image: { data: copy, width: img.width, height: img.height, channels: img.channels } }, [copy.buffer]);
  });
}

/** detectFacesInPhoto (RGBA) on the detector thread. */
export function detectFacesInPhotoOffThread(img: RawImage): Promise<DetectedFace[]> {
  return call<DetectedFace[]>({ op: 'photo-faces' }, img);
}

/** measureOutputFace (RGBA) on the detector thread. */
export function measureOutputFaceOffThread(img: RawImage): Promise<OutputFace> {
  return call<OutputFace>({ op: 'output-face' }, img);
}

/** Ends the thread (worker shutdown); calls in flight fail. */
export async function closeDetectorThread(): Promise<void> {
  const t = thread;
  thread = null;
  if (t) await t.terminate();
}
