// Request bodies of /cdn/projects (spec 2.5). Also the source of the OpenAPI document.
import { objectId } from './images.schemas.js';

export const createProjectBody = {
  $id: 'CreateProjectBody',
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    description: { type: ['string', 'null'], maxLength: 1000 },
  },
  required: ['name'],
};

export const updateProjectBody = {
  $id: 'UpdateProjectBody',
  type: 'object',
  properties: {
    projectId: objectId,
    name: { type: ['string', 'null'], minLength: 1, maxLength: 100 },
    description: { type: ['string', 'null'], maxLength: 1000 },
  },
  required: ['projectId'],
};

export const deleteProjectBody = {
  $id: 'DeleteProjectBody',
  type: 'object',
  properties: {
    projectId: objectId,
    moveImagesToDefault: { type: 'boolean', default: false },
  },
  required: ['projectId'],
};
