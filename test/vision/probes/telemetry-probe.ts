// Run in a child process by mediapipe.test.ts: installs a tripwire fetch BEFORE the passport
// module loads, uses the models, closes them (which makes tasks-vision flush its usage log) and
// prints what reached the tripwire. Nothing may: the telemetry must be answered in-process.
const tripwire: string[] = [];
globalThis.fetch = ((input: unknown) => {
  tripwire.push(String(input instanceof Request ? input.url : input));
  return Promise.reject(new TypeError('network disabled by telemetry-probe'));
}) as typeof fetch;

const { getFaceDetector, getSegmenter, closeModels, glStats } = await import('../../../src/vision/mediapipe/runtime.js');
const { toImageData } = await import('../../../src/vision/mediapipe/polyfills.js');
const { interceptedTelemetryRequests } = await import('../../../src/vision/mediapipe/telemetry.js');
const { droppedWasmLogLines } = await import('../../../src/vision/mediapipe/wasm-log.js');

const img = toImageData(new Uint8Array(64 * 64 * 4).fill(200), 64, 64);
(await getFaceDetector('short')).detect(img);
(await getSegmenter()).segment(img).close();
const gl = await glStats();
await closeModels();
// close() flushes asynchronously: give the intercepted request a moment to settle.
await new Promise((r) => setTimeout(r, 200));
process.stdout.write(JSON.stringify({ tripwire, intercepted: interceptedTelemetryRequests(), gl, droppedLogLines: droppedWasmLogLines() }) + '\n');
