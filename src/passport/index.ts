// Public API of the passport-photo library (no HTTP, no queue).
//
//   import { processPassportPhoto, PassportInputError, PASSPORT_SPECS, warmUp, closeModels } from './passport/index.js';
//
// - processPassportPhoto(buffer, { country, removeBackground, enhance, includePrintSheet, faceBox })
//   resolves to the photo, optional print sheet, face, measurements, checks and warnings; input
//   problems reject with PassportInputError (HTTP 422, `code` says which).
// - Models load lazily once per process; call warmUp() at worker start and closeModels() on
//   shutdown. The WASM runs on the calling thread: use it in the passport worker processes.
export { processPassportPhoto, faceBoxFromFields, MAX_UPSCALE, SIGNIFICANT_FACE_RATIO } from './process-passport-photo.js';
export type { NormalizedBox, PassportMeasurements, PassportOptions, PassportResult } from './process-passport-photo.js';
export { PassportInputError, isPassportInputError } from './errors.js';
export type { PassportInputErrorCode } from './errors.js';
export { PASSPORT_COUNTRIES, PASSPORT_SPECS, getPassportSpec, isPassportCountry, printSheetTiling } from './specs.js';
export type { PassportCountry, PassportSpec } from './specs.js';
export type { ComplianceCheck } from './compliance-check.js';
export { closeModels, warmUp } from '../vision/mediapipe/runtime.js';
export { closeEdgeThread } from './edge-bands.js';
export { sweepStaleTempCopies, unwritableTempDir } from './temp-copy.js';
export { setWasmLogSink } from '../vision/mediapipe/wasm-log.js';
