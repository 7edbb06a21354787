// The types of the response bodies, inferred from their schemas (responses.schemas.ts) by
// json-schema-to-ts: the SDK exports them and the front door builds its bodies as them, so a
// body, its documentation and its type cannot drift apart.
import type { FromSchema } from 'json-schema-to-ts';
import type { deleteImagesResult, deleteProjectResult, imageDescription, imageInfoResult, imageListResult, imageTestResult, jobAccepted, passportResult, passportSpecsResult, projectRecord, setAError, setBError, setBValidationError, srcsetResult, transformResult, uploadResultA, uploadResultB, usageResult } from './responses.schemas.js';

export type SetAErrorBody = FromSchema<typeof setAError>;
export type SetBErrorBody = FromSchema<typeof setBError>;
export type SetBValidationErrorBody = FromSchema<typeof setBValidationError>;
export type ImageDescription = FromSchema<typeof imageDescription>;
/** POST /upload. */
export type UploadResultA = FromSchema<typeof uploadResultA>;
/** POST /cdn/upload. */
export type CdnUploadResult = FromSchema<typeof uploadResultB>;
export type TransformResult = FromSchema<typeof transformResult>;
export type SrcsetResult = FromSchema<typeof srcsetResult>;
export type JobAccepted = FromSchema<typeof jobAccepted>;
export type ImageTestResult = FromSchema<typeof imageTestResult>;
/** GET /cdn/{image_id}/info and /image/info (the worker's ImageInfo must satisfy it). */
export type ImageInfoResult = FromSchema<typeof imageInfoResult>;
export type ImageList = FromSchema<typeof imageListResult>;
export type DeleteImagesResult = FromSchema<typeof deleteImagesResult>;
export type Usage = FromSchema<typeof usageResult>;
export type Project = FromSchema<typeof projectRecord>;
export type DeleteProjectResult = FromSchema<typeof deleteProjectResult>;
export type PassportSpecs = FromSchema<typeof passportSpecsResult>;
export type PassportResult = FromSchema<typeof passportResult>;
