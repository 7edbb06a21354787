// The upload preview's face detector on a worker thread. MediaPipe's WASM runs on the thread that
// calls it and holds it for ~17 ms per full-range pass; on the worker process's main thread that
// stalls the finalize job's own catalog and storage calls (and every other job's callbacks, BullMQ's
// lock renewals included) until it returns. On this thread the job's lookup, quota hold and
// durable write proceed meanwhile (docs/transformations.md, Costs). One thread per process,
// started on first use, keeping the process alive only while a call is in flight; a thread that dies fails the calls in
// flight (the preview is best effort) and is started again by the next call.
import { Worker } from 'node:worker_threads';
import type { DetectedFace } from '../passport/face-detector.js';
import type { RawImage } from '../passport/image.js';

interface Reply {
  id: number;
  faces?: DetectedFace[];
  error?: string;
}

interface Pending {
  resolve: (faces: DetectedFace[]) => void;
  reject: (err: Error) => void;
}

let thread: Worker | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

function failAll(err: Error): void {
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

function started(): Worker {
  if (thread) return thread;
  // The process's flags, less --input-type (only valid for an --eval string; a thread given it fails).
  const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type'));
  const t = new Worker(new URL('./face-detection-thread.worker.js', import.meta.url), { execArgv });
  t.on('message', (m: Reply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (pending.size === 0) t.unref();
    if (m.faces) p.resolve(m.faces);
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

/** detectFacesInPhoto on the detector thread. The pixels are copied (the caller keeps them). */
export function detectFacesInPhotoOffThread(img: RawImage): Promise<DetectedFace[]> {
  const t = started();
  const id = nextId++;
  const copy = new Uint8Array(img.data);
  return new Promise<DetectedFace[]>((resolve, reject) => {
    if (pending.size === 0) t.ref();
    pending.set(id, { resolve, reject });
    t.postMessage({ id, image: { data: copy, width: img.width, height: img.height, channels: img.channels } }, [copy.buffer]);
  });
}

/** Ends the thread (worker shutdown); calls in flight fail. */
export async function closeFaceDetectionThread(): Promise<void> {
  const t = thread;
  thread = null;
  if (t) await t.terminate();
}
