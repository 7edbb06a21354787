// Request inputs of the image listing and deletion (spec 4.2). Also the source of the OpenAPI document.

/** An imageId or projectId as a request names it. */
export const objectId = { type: 'string', minLength: 1, maxLength: 64 };

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
