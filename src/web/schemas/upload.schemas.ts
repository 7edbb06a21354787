// Inputs of the uploads: the file part, POST /cdn/upload's form fields and the custom public id
// (set A's query `public_id`, checked by services/public-id.ts).
import type { RouteInputs } from '../middleware/validate.js';
import { MAX_PUBLIC_ID } from '../services/public-id.js';
import { badUrlParameter } from '../validation.js';

export const uploadFields = {
  $id: 'CdnUploadFields',
  type: 'object',
  properties: { project: { type: ['string', 'null'], maxLength: 100, description: 'Project name (created when missing); default: the default project' } },
} as const;

export const publicIdProperty = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_PUBLIC_ID,
  pattern: '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$',
  description: 'Custom public id: "/"-separated segments of letters, digits, "_", "-", "." (no "." or ".." segments). Without it the file name (transliterated, without extension) is used.',
} as const;

export const setAUploadQuery = {
  $id: 'SetAUploadQuery',
  type: 'object',
  properties: { public_id: publicIdProperty },
} as const;

/** The image part of a multipart upload. */
export const fileField = {
  type: 'string',
  format: 'binary',
  contentMediaType: 'application/octet-stream',
  description: 'JPEG, PNG, WebP or AVIF (decided by the bytes)',
} as const;

/**
 * POST /upload: a bad `public_id` is set A's 400. The id's own rule (no "." or ".." segment) is
 * checked by services/public-id.ts, for the query and the form field alike.
 */
export const uploadInputs = { query: setAUploadQuery, refuse: badUrlParameter } as const satisfies RouteInputs;
export const cdnUploadInputs = { apiKey: true, fields: uploadFields } as const satisfies RouteInputs;
