// Entry of the edge thread (edge-bands.ts): refines one band of a photo per request, in order.
import { parentPort } from 'node:worker_threads';
import { refineEdgesWhole } from './edge-bands.js';

if (!parentPort) throw new Error('edge-thread.worker runs as a worker thread');
const port = parentPort;

interface BandRequest {
  id: number;
  rgb: Uint8Array;
  prob: Float32Array;
  inside: Uint8Array;
  width: number;
  height: number;
  photoHeight: number;
}

port.on('message', (m: BandRequest) => {
  try {
    const { alpha, fg } = refineEdgesWhole({ data: m.rgb, width: m.width, height: m.height, channels: 3 }, m.prob, m.inside, m.photoHeight);
    port.postMessage({ id: m.id, result: { alpha, fg: fg.data } }, [alpha.buffer as ArrayBuffer, fg.data.buffer as ArrayBuffer]);
  } catch (err) {
    port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
  }
});
