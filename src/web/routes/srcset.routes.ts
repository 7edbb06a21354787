// GET /generate/srcset (errors in set A's shape).
import { srcsetController } from '../controllers/srcset.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { API_KEY, errors, json } from '../openapi/operation.js';
import { srcsetInputs } from '../schemas/transform.schemas.js';
import type { RouteTable } from './route-table.js';

export function srcsetRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/generate/srcset',
        inputs: srcsetInputs,
        handlers: ({ deps, keys, checkInputs }) => [requireApiKey(keys), checkInputs, srcsetController(deps)],
        openapi: {
          tags: ['Srcset'],
          summary: 'Generate srcset, sizes and a default URL',
          description: 'Entries are signed `/transform` URLs that load in browsers without a key.',
          operationId: 'generateSrcset',
          security: API_KEY,
          responses: { '200': json('SrcsetResult'), ...errors('A', [400, 401, 404, 422]) },
        },
      },
    ],
  };
}
