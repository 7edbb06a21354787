// A user's images: GET /image/test, GET/DELETE /cdn/images, GET /cdn/usage and DELETE
// /cdn/{image_id} (errors in set B's shape). Mounted after the projects (fixed /cdn paths before
// /cdn/:image_id) and before the transform routes (/image/test before /image/*path).
import { deleteImagesController, deleteOneImageController, imageTestController, listImagesController, usageController } from '../controllers/images.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { validateSetB } from '../middleware/validate-set-b.js';
import { API_KEY, errors, json, jsonBody, parametersOf, pathParameter } from '../openapi/operation.js';
import { deleteImagesBody, listImagesQuery } from '../schemas/images.schemas.js';
import type { RouteTable } from './route-table.js';

const keyOnly = () => validateSetB({ requireKey: true });

export function imagesRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/image/test',
        handlers: ({ keys }) => [keyOnly(), requireApiKey(keys), imageTestController()],
        openapi: {
          tags: ['Set B: images'],
          summary: 'Validate credentials',
          operationId: 'imageTest',
          security: API_KEY,
          responses: { '200': json('ImageTestResult'), ...errors('B', [401, 422]) },
        },
      },
      {
        method: 'get',
        path: '/cdn/images',
        handlers: ({ deps, keys }) => [validateSetB({ requireKey: true, query: listImagesQuery }), requireApiKey(keys), listImagesController(deps)],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'List your images (newest first)',
          operationId: 'listImages',
          security: API_KEY,
          parameters: parametersOf(listImagesQuery, 'query'),
          responses: { '200': json('ImageList'), ...errors('B', [401, 422]) },
        },
      },
      {
        method: 'delete',
        path: '/cdn/images',
        handlers: ({ deps, keys }) => [validateSetB({ requireKey: true, body: deleteImagesBody }), requireApiKey(keys), deleteImagesController(deps)],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'Delete images',
          description: 'Removes originals, derivatives and their bytes from usage.',
          operationId: 'deleteImages',
          security: API_KEY,
          requestBody: jsonBody(deleteImagesBody),
          responses: { '200': json('DeleteImagesResult'), ...errors('B', [400, 401, 413, 415, 422]) },
        },
      },
      {
        method: 'get',
        path: '/cdn/usage',
        handlers: ({ deps, keys }) => [keyOnly(), requireApiKey(keys), usageController(deps)],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'Storage and bandwidth usage',
          operationId: 'getUsage',
          security: API_KEY,
          responses: { '200': json('Usage'), ...errors('B', [401, 422]) },
        },
      },
      {
        method: 'delete',
        path: '/cdn/:image_id',
        handlers: ({ deps, keys }) => [keyOnly(), requireApiKey(keys), deleteOneImageController(deps)],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'Delete one image',
          operationId: 'deleteImage',
          security: API_KEY,
          parameters: [pathParameter('image_id', 'imageId')],
          responses: { '200': json('DeleteImagesResult'), ...errors('B', [401, 404, 422]) },
        },
      },
    ],
  };
}
