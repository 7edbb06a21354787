// A user's images: GET /image/test, GET/DELETE /cdn/images, GET /cdn/usage and DELETE
// /cdn/{image_id} (errors in set B's shape). Mounted after the projects (fixed /cdn paths before
// /cdn/:image_id) and before the transform routes (/image/test before /image/*path).
import { deleteImagesController, deleteOneImageController, imageTestController, listImagesController, usageController } from '../controllers/images.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { API_KEY, errors, json } from '../openapi/operation.js';
import { deleteImagesInputs, deleteOneImageInputs, keyOnlyInputs, listImagesInputs } from '../schemas/images.schemas.js';
import type { RouteTable } from './route-table.js';

export function imagesRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/image/test',
        inputs: keyOnlyInputs,
        handlers: ({ keys, checkInputs }) => [checkInputs, requireApiKey(keys), imageTestController()],
        openapi: {
          tags: ['Images'],
          summary: 'Validate credentials',
          operationId: 'imageTest',
          security: API_KEY,
          responses: { '200': json('ImageTestResult'), ...errors('B', [401, 422]) },
        },
      },
      {
        method: 'get',
        path: '/cdn/images',
        inputs: listImagesInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), listImagesController(deps)],
        openapi: {
          tags: ['Images'],
          summary: 'List your images (newest first)',
          operationId: 'listImages',
          security: API_KEY,
          responses: { '200': json('ImageList'), ...errors('B', [401, 422]) },
        },
      },
      {
        method: 'delete',
        path: '/cdn/images',
        inputs: deleteImagesInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), deleteImagesController(deps)],
        openapi: {
          tags: ['Images'],
          summary: 'Delete images',
          description: 'Removes originals, derivatives and their bytes from usage.',
          operationId: 'deleteImages',
          security: API_KEY,
          responses: { '200': json('DeleteImagesResult'), ...errors('B', [400, 401, 413, 415, 422]) },
        },
      },
      {
        method: 'get',
        path: '/cdn/usage',
        inputs: keyOnlyInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), usageController(deps)],
        openapi: {
          tags: ['Images'],
          summary: 'Storage and bandwidth usage',
          operationId: 'getUsage',
          security: API_KEY,
          responses: { '200': json('Usage'), ...errors('B', [401, 422]) },
        },
      },
      {
        method: 'delete',
        path: '/cdn/:image_id',
        inputs: deleteOneImageInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), deleteOneImageController(deps)],
        openapi: {
          tags: ['Images'],
          summary: 'Delete one image',
          operationId: 'deleteImage',
          security: API_KEY,
          responses: { '200': json('DeleteImagesResult'), ...errors('B', [401, 404, 422]) },
        },
      },
    ],
  };
}
