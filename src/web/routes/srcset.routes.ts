// GET /generate/srcset (errors in set A's shape).
import { srcsetController } from '../controllers/srcset.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { API_KEY, errors, json, parametersOf } from '../openapi/operation.js';
import { srcsetQuery } from '../schemas/transform.schemas.js';
import type { RouteTable } from './route-table.js';

export function srcsetRouteTable(): RouteTable {
  return {
    routes: [
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
