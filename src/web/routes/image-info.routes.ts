// An original's info: GET /image/info?src= (keyed) and GET /cdn/{image_id}/info (public, as
// /cdn/{image_id}); errors in set B's shape. Mounted before the transform routes, whose
// /image/{path} would otherwise take /image/info.
import { cdnInfoController, imageInfoController } from '../controllers/image-info.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { perIpLimit } from '../middleware/rate-limit.js';
import { API_KEY, NO_AUTH, errors, json } from '../openapi/operation.js';
import { cdnInfoInputs, imageInfoInputs } from '../schemas/transform.schemas.js';
import type { RouteTable } from './route-table.js';

export function imageInfoRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/image/info',
        inputs: imageInfoInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), imageInfoController(deps)],
        openapi: {
          tags: ['Images'],
          summary: 'Facts about an original',
          description: 'Size, format, colour space, alpha, orientation, frames, placeholders and faces found at upload, camera make/model and taken-at time (no other EXIF), and whether the original carries GPS. Computed once per image version by a worker, then read from the catalog.',
          operationId: 'imageInfo',
          security: API_KEY,
          responses: { '200': json('ImageInfo'), ...errors('B', [401, 404, 422, 503, 504]) },
        },
      },
      {
        method: 'get',
        path: '/cdn/:image_id/info',
        inputs: cdnInfoInputs,
        handlers: ({ deps, checkInputs }) => [checkInputs, cdnInfoController(deps, perIpLimit(deps.redis, 'cdn', deps.config.publicRateLimitPerMin))],
        openapi: {
          tags: ['CDN'],
          summary: 'Facts about an original (public)',
          description: 'Public, as /cdn/{image_id}: anyone who may load the image may ask; unknown ids count toward the per-IP limit. The same answer as GET /image/info.',
          operationId: 'cdnInfo',
          security: NO_AUTH,
          responses: { '200': json('ImageInfo'), ...errors('B', [404, 422, 429, 503, 504]) },
        },
      },
    ],
  };
}
