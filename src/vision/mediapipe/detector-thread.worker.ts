// Entry of the detector thread (detector-thread.ts): one request at a time, answered in order.
import { parentPort } from 'node:worker_threads';
import { detectFacesInPhoto, detectFullRange, detectOnGrid, measureOutputFace } from '../face-detector.js';
import type { DetectorRequest } from './detector-thread.js';
import { type RawImage } from '../raw-image.js';

if (!parentPort) throw new Error('detector-thread.worker runs as a worker thread');
const port = parentPort;
let queue: Promise<void> = Promise.resolve();

function work(m: DetectorRequest & { image: RawImage }): Promise<unknown> {
  if (m.op === 'photo-faces') return detectFacesInPhoto(m.image);
  if (m.op === 'output-face') return measureOutputFace(m.image);
  if (m.op === 'full-range') return detectFullRange(m.image);
  if (m.op === 'grid-crops') return detectOnGrid(m.image, m.seed, m.crops);
  return Promise.reject(new Error(`unknown detector request ${(m as { op: string }).op}`));
}

port.on('message', (m: DetectorRequest & { id: number; image: RawImage }) => {
  // The detector's first use loads the models: later requests wait for it, in order.
  queue = queue.then(() =>
    work(m).then(
      (result) => port.postMessage({ id: m.id, result }),
      (err: unknown) => port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) }),
    ),
  );
});
