// The info routes: GET /image/info?src= (keyed) and GET /cdn/{image_id}/info (public). Mounted
// before set B's table, whose /image/{path} would otherwise take /image/info.
import { imageInfoController, cdnInfoController } from '../controllers/image-info.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { perIpLimit } from '../middleware/rate-limit.js';
import { validateSetB } from '../middleware/validate-set-b.js';
import { API_KEY, NO_AUTH, errors, json, parametersOf, pathParameter } from '../openapi/operation.js';
import { srcProperty } from '../schemas/transform.schemas.js';
import type { RouteTable } from './route-table.js';

export const imageInfoQuery = { $id: 'ImageInfoQuery', type: 'object', properties: { src: srcProperty }, required: ['src'] };

export function imageInfoRouteTable(): RouteTable {
  return {
    pathSet: { set: 'B', prefixes: ['/image/info', '/cdn'] },
    routes: [
      {
        method: 'get',
        path: '/image/info',
        handlers: ({ deps, keys }) => [validateSetB({ requireKey: true, query: imageInfoQuery }), requireApiKey(keys), imageInfoController(deps)],
        openapi: {
          tags: ['Set B: images'],
          summary: 'Facts about an original',
          description: 'Size, format, colour space, alpha, orientation, frames, placeholders and faces found at upload, camera make/model and taken-at time (no other EXIF), and whether the original carries GPS. Computed once per image version by a worker, then read from the catalog.',
          operationId: 'imageInfo',
          security: API_KEY,
          parameters: parametersOf(imageInfoQuery, 'query'),
          responses: { '200': json('ImageInfo'), ...errors('B', [401, 404, 422, 503, 504]) },
        },
      },
      {
        method: 'get',
        path: '/cdn/:image_id/info',
        handlers: ({ deps }) => [cdnInfoController(deps, perIpLimit(deps.redis, 'cdn', deps.config.publicRateLimitPerMin))],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'Facts about an original (public)',
          description: 'Public, as /cdn/{image_id}: anyone who may load the image may ask; unknown ids count toward the per-IP limit. The same answer as GET /image/info.',
          operationId: 'cdnInfo',
          security: NO_AUTH,
          parameters: [pathParameter('image_id', 'imageId')],
          responses: { '200': json('ImageInfo'), ...errors('B', [404, 429, 503, 504]) },
        },
      },
    ],
  };
}
