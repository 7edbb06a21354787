// Uploads: POST /upload (errors in set A's shape) and POST /cdn/upload (set B's).
import { cdnUploadController, uploadController } from '../controllers/upload.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { API_KEY, errors, json, multipartBody, requestModeParameters } from '../openapi/operation.js';
import { cdnUploadInputs, publicIdProperty, uploadFields, uploadInputs } from '../schemas/upload.schemas.js';
import type { RouteTable } from './route-table.js';

export function uploadRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'post',
        path: '/upload',
        inputs: uploadInputs,
        handlers: ({ deps, keys, checkInputs }) => [requireApiKey(keys), checkInputs, uploadController(deps)],
        openapi: {
          tags: ['Upload'],
          summary: 'Upload an image',
          operationId: 'uploadA',
          security: API_KEY,
          parameters: requestModeParameters(),
          requestBody: multipartBody(null, { public_id: { ...publicIdProperty, description: 'Same as the query parameter (the query wins)' } }),
          responses: { '200': json('UploadResult'), '202': json('JobAccepted', 'Accepted (async mode)'), ...errors('A', [400, 401, 403, 413, 415, 503, 504]) },
        },
      },
      {
        method: 'post',
        path: '/cdn/upload',
        inputs: cdnUploadInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), cdnUploadController(deps)],
        openapi: {
          tags: ['Upload'],
          summary: 'Upload an image into a project',
          operationId: 'cdnUpload',
          security: API_KEY,
          parameters: requestModeParameters(),
          requestBody: multipartBody(uploadFields, { public_id: publicIdProperty }),
          responses: { '200': json('CdnUploadResult'), '202': json('JobAccepted', 'Accepted (async mode)'), ...errors('B', [400, 401, 403, 413, 415, 422, 503, 504]) },
        },
      },
    ],
  };
}
