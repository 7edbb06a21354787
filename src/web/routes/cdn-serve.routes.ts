// GET /cdn/{image_id}: an image by its id, public (errors in set B's shape). Mounted after every
// fixed /cdn path.
import { PRESETS_ONLY_PARAMS } from '../../imaging/params.js';
import { cdnServeController } from '../controllers/cdn-serve.controller.js';
import { perIpLimit } from '../middleware/rate-limit.js';
import { NO_AUTH, errors, imageResponses } from '../openapi/operation.js';
import { cdnServeInputs } from '../schemas/transform.schemas.js';
import type { RouteTable } from './route-table.js';

export function cdnServeRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/cdn/:image_id',
        // The per-IP limit applies inside: to new derivatives and unknown images, not to stored ones.
        inputs: cdnServeInputs,
        handlers: ({ deps, keys, checkInputs }) => [
          checkInputs,
          cdnServeController(deps, keys, perIpLimit(deps.redis, 'cdn', deps.config.publicRateLimitPerMin)),
        ],
        openapi: {
          tags: ['CDN'],
          summary: 'Serve an optimized image (public)',
          description: `Public (the spec declares no key). Existing derivatives are always served; new ones are capped per image (PUBLIC_DERIVATIVES_PER_IMAGE) and the route is rate-limited per IP. Without w and dpr, the client hints Sec-CH-Width/Width and Sec-CH-DPR/DPR are honoured (Accept-CH, Vary). With PUBLIC_PRESETS_ONLY=true only ${PRESETS_ONLY_PARAMS.join(', ')} are accepted (403 otherwise). A \`v\` naming a replaced version answers 404.`,
          operationId: 'cdnServe',
          security: NO_AUTH,
          responses: { ...imageResponses('The image'), ...errors('B', [403, 404, 422, 429, 503, 504]) },
        },
      },
    ],
  };
}
