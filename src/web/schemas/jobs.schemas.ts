// Inputs of GET /jobs/{id}. Validated by middleware/validate.ts; also the source of the OpenAPI
// document and of the controller's types.
import type { RouteInputs } from '../middleware/validate.js';

export const jobIdParams = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, description: 'Job id from a 202 answer' } },
  required: ['id'],
} as const;

export const jobStatusInputs = { params: jobIdParams } as const satisfies RouteInputs;
