// Face detection on a worker thread. MediaPipe's WASM runs on the thread that calls it and holds
// it (~17 ms per full-range pass, ~8 per refinement crop); on the worker process's main thread that
// stalls everything else until it returns. Here:
//  - the upload preview's faces: the finalize job's lookup, quota hold and durable write proceed
//    meanwhile (docs/transformations.md, Costs);
//  - the passport photo's output measurement: the main thread refines the edges meanwhile
//    (docs/passport.md, Speed).
// Requests are answered in order. One thread per process, started on first use, keeping the
// process alive only while a call is in flight. A thread that dies or does not answer in time
// fails its calls in flight (the preview is best effort; a passport job fails and is retried) and
// is started again by the next call.
import { Worker } from 'node:worker_threads';
import type { DetectedFace } from '../face-detector.js';
import type { RawImage } from '../image.js';

export type DetectorRequest = { op: 'photo-faces' } | { op: 'output-face' };

interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** A thread and the calls sent to it (a replaced thread fails only its own calls). */
interface DetectorThread {
  worker: Worker;
  pending: Map<number, Pending>;
}

/**
 * A call not answered within this long ends its thread, failing the calls queued behind it: a
 * stuck WASM call would otherwise hold every later one (passport jobs time out, previews go
 * without faces) until the process restarts. The first call also loads the models (~1 s).
 */
export const DETECTOR_CALL_TIMEOUT_MS = 30_000;

export interface DetectorCallOptions {
  timeoutMs?: number;
}

let current: DetectorThread | null = null;
let nextId = 0;

function end(t: DetectorThread, err: Error): void {
  if (current === t) current = null;
  for (const p of t.pending.values()) {
    clearTimeout(p.timer);
    p.reject(err);
  }
  t.pending.clear();
}

/**
 * A thread with the process's flags (loaders such as --import carry over), less --input-type,
 * which only an --eval string may have; when Node refuses one of them for a thread (process-wide
 * flags such as --expose-gc are refused when given explicitly), with none.
 */
function newWorker(url: URL): Worker {
  const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type'));
  try {
    return new Worker(url, { execArgv });
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw err;
    return new Worker(url, { execArgv: [] });
  }
}

function started(): DetectorThread {
  if (current) return current;
  const worker = newWorker(new URL('./detector-thread.worker.js', import.meta.url));
  const t: DetectorThread = { worker, pending: new Map() };
  worker.on('message', (m: Reply) => {
    const p = t.pending.get(m.id);
    if (!p) return;
    t.pending.delete(m.id);
    clearTimeout(p.timer);
    if (t.pending.size === 0) worker.unref();
    if (m.error === undefined) p.resolve(m.result);
    else p.reject(new Error(m.error));
  });
  worker.on('error', (err) => end(t, err));
  worker.on('exit', (code) => end(t, new Error(`face detection thread exited (${code})`)));
  // Referenced only while a call is in flight (attaching a 'message' listener refs it again).
  worker.unref();
  current = t;
  return t;
}

function call<T>(request: DetectorRequest, img: RawImage, options: DetectorCallOptions): Promise<T> {
  const t = started();
  const id = nextId++;
  const timeoutMs = options.timeoutMs ?? DETECTOR_CALL_TIMEOUT_MS;
  // Copied: the caller keeps its pixels (libvips may still be reading them).
  const copy = new Uint8Array(img.data);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      end(t, new Error(`face detection thread did not answer within ${timeoutMs} ms; it is restarted for the next call`));
      void t.worker.terminate();
    }, timeoutMs);
    timer.unref();
    if (t.pending.size === 0) t.worker.ref();
    t.pending.set(id, { resolve: resolve as (r: unknown) => void, reject, timer });
    t.worker.postMessage({ id, ...request, image: { data: copy, width: img.width, height: img.height, channels: img.channels } }, [copy.buffer]);
  });
}

/** detectFacesInPhoto (RGBA) on the detector thread. */
export function detectFacesInPhotoOffThread(img: RawImage, options: DetectorCallOptions = {}): Promise<DetectedFace[]> {
  return call<DetectedFace[]>({ op: 'photo-faces' }, img, options);
}

/** measureOutputFace (RGBA) on the detector thread. */
export function measureOutputFaceOffThread(img: RawImage, options: DetectorCallOptions = {}): Promise<DetectedFace | null> {
  return call<DetectedFace | null>({ op: 'output-face' }, img, options);
}

/** Ends the thread (worker shutdown); calls in flight fail. */
export async function closeDetectorThread(): Promise<void> {
  const t = current;
  if (!t) return;
  end(t, new Error('face detection thread closed'));
  await t.worker.terminate();
}
