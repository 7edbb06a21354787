// Inputs of the uploads: the file part, POST /cdn/upload's form fields and the custom public id
// (set A's query `public_id`, checked by services/public-id.ts).
import { MAX_PUBLIC_ID } from '../services/public-id.js';

export const uploadFields = {
  $id: 'CdnUploadFields',
  type: 'object',
  properties: { project: { type: ['string', 'null'], maxLength: 100 } },
};

export const publicIdProperty = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_PUBLIC_ID,
  pattern: '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$',
  description: 'Custom public id: "/"-separated segments of letters, digits, "_", "-", "." (no "." or ".." segments). Without it the file name (transliterated, without extension) is used.',
};

export const setAUploadQuery = {
  $id: 'SetAUploadQuery',
  type: 'object',
  properties: { public_id: publicIdProperty },
};

/** The image part of a multipart upload. */
export const fileField = {
  type: 'string',
  format: 'binary',
  contentMediaType: 'application/octet-stream',
  description: 'JPEG, PNG, WebP or AVIF (decided by the bytes)',
};
