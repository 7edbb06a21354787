// GET /, GET /health and GET /plans (errors in set B's shape).
import { PLANS } from '../../catalog/plans.js';
import { healthController, rootController } from '../controllers/status.controller.js';
import { answerErrorsAs } from '../middleware/error-shape.js';
import { NO_AUTH, json } from '../openapi/operation.js';
import type { RouteTable } from './route-table.js';

const PLANS_OPERATION = { tags: ['Plans'], summary: 'Plan information', operationId: 'listPlans', security: NO_AUTH, responses: { '200': json('Plans') } };

export function statusRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/',
        handlers: ({ deps }) => [answerErrorsAs('B'), rootController(deps)],
        openapi: { tags: ['Status'], summary: 'API root with basic information', operationId: 'getRoot', security: NO_AUTH, responses: { '200': json('ApiRoot') } },
      },
      {
        method: 'get',
        path: '/health',
        handlers: ({ deps }) => [answerErrorsAs('B'), healthController(deps)],
        openapi: {
          tags: ['Status'],
          summary: 'Health check for monitoring',
          description: 'Checks Redis, the catalog, storage and live worker heartbeats.',
          operationId: 'getHealth',
          security: NO_AUTH,
          responses: { '200': json('Health'), '503': json('Health', 'A check failed') },
        },
      },
      {
        method: 'get',
        path: '/plans',
        handlers: () => [
          (_req, res) => {
            res.json({ plans: PLANS });
          },
        ],
        openapi: PLANS_OPERATION,
        alias: { path: '/plans/', summary: 'Plan information (trailing-slash form)', operationId: 'listPlansSlash' },
      },
    ],
  };
}
