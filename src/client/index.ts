// Public entry of the Pictor client SDK (`pictor/client`): works in Node ≥ 20 and browsers.
export { PictorClient, type PictorClientOptions } from './pictor-client.js';
export { PictorApiError, PictorConfigError, PictorError, PictorNetworkError, type ApiErrorBody, type SetAErrorBody, type SetBErrorBody, type ValidationIssue } from './errors.js';
export type * from './types.js';
export type { RenderNoteValues } from '../storage/derivative-metadata.js';
export { canonicalQuery, signedTransformUrlWith, webCryptoHmacSha256, type HmacSha256 } from '../imaging/signing-core.js';
export { TRANSFORM_PARAMS, FORMAT_VALUES, FIT_VALUES, MAX_SIDE, type ParamDefinition, type FitMode } from '../imaging/params.js';
export { SRCSET_WIDTHS } from '../imaging/srcset.js';
