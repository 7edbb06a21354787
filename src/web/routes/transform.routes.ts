// Transforming a stored image: GET /transform (errors in set A's shape), GET /image/demo/{path}
// and GET /image/{path} (set B's). Mounted after GET /image/test (images.routes.ts).
import { DEFAULT_BOX } from '../../imaging/params.js';
import { imageDemoController, imagePathController, transformAuthentication, transformController } from '../controllers/transform.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { perIpLimit } from '../middleware/rate-limit.js';
import { API_KEY, NO_AUTH, demoParameters, errors, imageHeaders, imageMediaTypes, imageResponses, json, pathParameter, ref, requestModeParameters } from '../openapi/operation.js';
import { imageDemoInputs, imagePathInputs, transformInputs } from '../schemas/transform.schemas.js';
import type { RouteTable } from './route-table.js';

export function transformRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/transform',
        inputs: transformInputs,
        // A key, or a signed URL that browsers can load; checked before the parameters.
        handlers: ({ deps, keys, checkInputs }) => [transformAuthentication(keys), checkInputs, transformController(deps)],
        openapi: {
          tags: ['Transform'],
          summary: 'Transform a stored image',
          description:
            `With \`X-API-Key\`: the JSON transform result. Without it, a signed URL (\`kid\` + \`sig\`, see above) answers with the image bytes, the format negotiated from \`Accept\` when \`f=auto\`. Only \`w\` keeps the aspect ratio; \`w\` and \`h\` crop to fill; neither fits inside ${DEFAULT_BOX.width}×${DEFAULT_BOX.height}.`,
          operationId: 'transformA',
          security: [...API_KEY, {}],
          parameters: requestModeParameters(),
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
        path: '/image/demo/*path',
        inputs: imageDemoInputs,
        handlers: ({ deps, checkInputs }) => [perIpLimit(deps.redis, 'demo', deps.config.demoRateLimitPerMin), checkInputs, imageDemoController(deps)],
        openapi: {
          tags: ['Transform'],
          summary: 'Public demo of transformations',
          description: 'Allowed with `X-Demo-Token` = DEMO_TOKEN or an Origin/Referer in DEMO_ORIGINS; `src` only from DEMO_SOURCES; output at most 2000 px per side; rate-limited per IP.',
          operationId: 'imageDemo',
          security: NO_AUTH,
          parameters: [
            pathParameter('path', 'Vanity name; an image extension (.jpg, .png, .webp, .avif) sets the format when `f` is absent'),
            ...demoParameters(),
          ],
          responses: { ...imageResponses('The transformed image'), ...errors('B', [403, 404, 422, 429, 503, 504]) },
        },
      },
      {
        method: 'get',
        path: '/image/*path',
        inputs: imagePathInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), imagePathController(deps)],
        openapi: {
          tags: ['Transform'],
          summary: 'Process and serve one of your images with transformations',
          operationId: 'imagePath',
          security: API_KEY,
          parameters: [pathParameter('path', 'Vanity name (may contain "/"); an image extension sets the format when `f` is absent')],
          responses: { ...imageResponses('The transformed image'), ...errors('B', [401, 404, 422, 503, 504]) },
        },
      },
    ],
  };
}
