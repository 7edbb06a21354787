// Entry of the face detection thread (face-detection-thread.ts): one request at a time, in order.
import { parentPort } from 'node:worker_threads';
import { detectFacesInPhoto } from '../passport/face-detector.js';
import type { RawImage } from '../passport/image.js';

if (!parentPort) throw new Error('face-detection-thread.worker runs as a worker thread');
const port = parentPort;
port.on('message', (m: { id: number; image: RawImage }) => {
  detectFacesInPhoto(m.image).then(
    (faces) => port.postMessage({ id: m.id, faces }),
    (err: unknown) => port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
