// Entry of the edge thread (edge-bands.ts): renders and refines one band of a photo per request, in order.
import { parentPort } from 'node:worker_threads';
import { renderAndRefineBand, type BandRequest } from './edge-bands.js';

if (!parentPort) throw new Error('edge-thread.worker runs as a worker thread');
const port = parentPort;

port.on('message', (m: BandRequest & { id: number }) => {
  try {
    const result = renderAndRefineBand(m);
    port.postMessage({ id: m.id, result }, [result.image.buffer as ArrayBuffer, result.inside.buffer as ArrayBuffer, result.alpha.buffer as ArrayBuffer, result.fg.buffer as ArrayBuffer]);
  } catch (err) {
    port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
  }
});
