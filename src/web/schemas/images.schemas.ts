// Inputs of a user's image routes (spec 4.2): GET /image/test, GET/DELETE /cdn/images, GET
// /cdn/usage, DELETE /cdn/{image_id}. Validated by middleware/validate.ts; also the source of the
// OpenAPI document and of the controllers' types.
import type { RouteInputs } from '../middleware/validate.js';

/** An imageId or projectId as a request names it. */
export const objectId = { type: 'string', minLength: 1, maxLength: 64 } as const;

export const listImagesQuery = {
  $id: 'ListImagesQuery',
  type: 'object',
  properties: {
    project: { type: 'string', maxLength: 100, description: 'Project slug filter' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
    cursor: { type: 'string', maxLength: 64, description: 'imageId of the last image of the previous page' },
  },
} as const;

export const deleteImagesBody = {
  $id: 'DeleteImagesBody',
  type: 'object',
  properties: { imageIds: { type: 'array', items: objectId, minItems: 1, maxItems: 100 } },
  required: ['imageIds'],
} as const;

/** `{image_id}` of /cdn/{image_id}. */
export const imageIdParams = {
  type: 'object',
  properties: { image_id: { type: 'string', minLength: 1, description: 'imageId' } },
  required: ['image_id'],
} as const;

/** Routes that take nothing but the key (its absence is a 422 before authentication). */
export const keyOnlyInputs = { apiKey: true } as const satisfies RouteInputs;
export const listImagesInputs = { apiKey: true, query: listImagesQuery } as const satisfies RouteInputs;
export const deleteImagesInputs = { apiKey: true, body: deleteImagesBody } as const satisfies RouteInputs;
export const deleteOneImageInputs = { apiKey: true, params: imageIdParams } as const satisfies RouteInputs;
