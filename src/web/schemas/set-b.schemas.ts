// Request schemas of set B (spec 2.5, 4.2). Also the source of the OpenAPI document.
const objectId = { type: 'string', minLength: 1, maxLength: 64 };

export const listImagesQuery = {
  $id: 'ListImagesQuery',
  type: 'object',
  properties: {
    project: { type: 'string', maxLength: 100, description: 'Project slug filter' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
    cursor: { type: 'string', maxLength: 64, description: 'imageId of the last image of the previous page' },
  },
};

export const deleteImagesBody = {
  $id: 'DeleteImagesBody',
  type: 'object',
  properties: { imageIds: { type: 'array', items: objectId, minItems: 1, maxItems: 100 } },
  required: ['imageIds'],
};

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

export const uploadFields = {
  $id: 'CdnUploadFields',
  type: 'object',
  properties: { project: { type: ['string', 'null'], maxLength: 100 } },
};
