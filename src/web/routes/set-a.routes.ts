// Set A routes (spec 4.1): errors answer `{type, msg, status_code}`.
import { DEFAULT_BOX } from '../../imaging/params.js';
import { srcsetController, transformController, uploadController } from '../controllers/set-a.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { API_KEY, errors, imageHeaders, imageMediaTypes, json, multipartBody, parametersOf, ref, requestModeParameters } from '../openapi/operation.js';
import { publicIdProperty, setAUploadQuery } from '../schemas/request-extras.schemas.js';
import { setATransformQuery, srcsetQuery } from '../schemas/transform.schemas.js';
import type { RouteTable } from './route-table.js';

export function setARouteTable(): RouteTable {
  return {
    pathSet: { set: 'A', prefixes: ['/upload', '/transform', '/generate/srcset'] },
    routes: [
      {
        method: 'post',
        path: '/upload',
        handlers: ({ deps, keys }) => [requireApiKey(keys), uploadController(deps)],
        openapi: {
          tags: ['Set A'],
          summary: 'Upload an image',
          operationId: 'uploadA',
          security: API_KEY,
          parameters: [...parametersOf(setAUploadQuery, 'query'), ...requestModeParameters()],
          requestBody: multipartBody(null, { public_id: { ...publicIdProperty, description: 'Same as the query parameter (the query wins)' } }),
          responses: { '200': json('UploadResult'), '202': json('JobAccepted', 'Accepted (async mode)'), ...errors('A', [400, 401, 403, 413, 415, 503, 504]) },
        },
      },
      {
        method: 'get',
        path: '/transform',
        // Authenticates itself: a key, or a signed URL that browsers can load.
        handlers: ({ deps, keys }) => [transformController(deps, keys)],
        openapi: {
          tags: ['Set A'],
          summary: 'Transform a stored image',
          description:
            `With \`X-API-Key\`: the JSON transform result. Without it, a signed URL (\`kid\` + \`sig\`, see above) answers with the image bytes, the format negotiated from \`Accept\` when \`f=auto\`. Only \`w\` keeps the aspect ratio; \`w\` and \`h\` crop to fill; neither fits inside ${DEFAULT_BOX.width}×${DEFAULT_BOX.height}.`,
          operationId: 'transformA',
          security: [...API_KEY, {}],
          parameters: [...parametersOf(setATransformQuery, 'query'), ...requestModeParameters()],
          responses: {
            '200': {
              description: 'JSON result (API key) or the image bytes (signed URL)',
              headers: { 'X-Cache': imageHeaders['X-Cache'] },
              content: { 'application/json': { schema: ref('TransformResult') }, ...imageMediaTypes() },
            },
            '202': json('JobAccepted', 'Accepted (async mode)'),
            '304': { description: 'Not modified (signed URL with a matching If-None-Match)' },
            ...errors('A', [400, 401, 403, 404, 422, 503, 504]),
          },
        },
      },
      {
        method: 'get',
        path: '/generate/srcset',
        handlers: ({ deps, keys }) => [requireApiKey(keys), srcsetController(deps)],
        openapi: {
          tags: ['Set A'],
          summary: 'Generate srcset, sizes and a default URL',
          description: 'Entries are signed `/transform` URLs that load in browsers without a key.',
          operationId: 'generateSrcset',
          security: API_KEY,
          parameters: parametersOf(srcsetQuery, 'query'),
          responses: { '200': json('SrcsetResult'), ...errors('A', [400, 401, 404, 422]) },
        },
      },
    ],
  };
}
