// Inputs of /cdn/projects (spec 2.5). Validated by middleware/validate.ts; also the source of the
// OpenAPI document and of the controllers' types.
import type { RouteInputs } from '../middleware/validate.js';
import { objectId } from './images.schemas.js';

export const createProjectBody = {
  $id: 'CreateProjectBody',
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    description: { type: ['string', 'null'], maxLength: 1000 },
  },
  required: ['name'],
} as const;

export const updateProjectBody = {
  $id: 'UpdateProjectBody',
  type: 'object',
  properties: {
    projectId: objectId,
    name: { type: ['string', 'null'], minLength: 1, maxLength: 100 },
    description: { type: ['string', 'null'], maxLength: 1000 },
  },
  required: ['projectId'],
} as const;

export const deleteProjectBody = {
  $id: 'DeleteProjectBody',
  type: 'object',
  properties: {
    projectId: objectId,
    moveImagesToDefault: { type: 'boolean', default: false },
  },
  required: ['projectId'],
} as const;

export const createProjectInputs = { apiKey: true, body: createProjectBody } as const satisfies RouteInputs;
export const updateProjectInputs = { apiKey: true, body: updateProjectBody } as const satisfies RouteInputs;
export const deleteProjectInputs = { apiKey: true, body: deleteProjectBody } as const satisfies RouteInputs;
