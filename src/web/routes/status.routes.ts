// GET / and GET /health (set B shapes).
import { healthController, rootController } from '../controllers/status.controller.js';
import { pathSet } from '../middleware/path-set.js';
import { NO_AUTH, json } from '../openapi/operation.js';
import type { RouteTable } from './route-table.js';

export function statusRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/',
        handlers: ({ deps }) => [pathSet('B'), rootController(deps)],
        openapi: { tags: ['Status'], summary: 'API root with basic information', operationId: 'getRoot', security: NO_AUTH, responses: { '200': json('ApiRoot') } },
      },
      {
        method: 'get',
        path: '/health',
        handlers: ({ deps }) => [pathSet('B'), healthController(deps)],
        openapi: {
          tags: ['Status'],
          summary: 'Health check for monitoring',
          description: 'Checks Redis, the catalog, storage and live worker heartbeats.',
          operationId: 'getHealth',
          security: NO_AUTH,
          responses: { '200': json('Health'), '503': json('Health', 'A check failed') },
        },
      },
    ],
  };
}
