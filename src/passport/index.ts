// The passport-photo library's entry (no HTTP, no queue; README.md beside it). Its one other
// entry is specs.ts, the countries' rules as pure data: the front door validates and documents
// with it and must not load this one, which pulls in sharp and MediaPipe. Models load
// lazily once per process: warmUp() at worker start, closeModels() and closeEdgeThread() on
// shutdown. The models and kernels run on the calling thread: use it in passport worker processes.
export { processPassportPhoto, faceBoxFromFields, MAX_UPSCALE, SIGNIFICANT_FACE_RATIO } from './process-passport-photo.js';
export type { NormalizedBox, PassportMeasurements, PassportOptions, PassportResult } from './process-passport-photo.js';
export { PassportInputError } from './errors.js';
export type { PassportInputErrorCode } from './errors.js';
export { PASSPORT_COUNTRIES, PASSPORT_SPECS, isPassportCountry, printSheetTiling } from './specs.js';
export type { PassportCountry, PassportSpec } from './specs.js';
export type { ComplianceCheck } from './compliance-check.js';
export { closeModels, warmUp } from '../vision/mediapipe/runtime.js';
export { closeEdgeThread } from './edge-bands.js';
export { sweepStaleTempCopies, unwritableTempDir } from './temp-copy.js';
export { setWasmLogSink } from '../vision/mediapipe/wasm-log.js';
