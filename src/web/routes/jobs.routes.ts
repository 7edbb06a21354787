// GET /jobs/:id: the state of an async job, for its owner.
import { jobStatusController } from '../controllers/jobs.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { answerErrorsAs } from '../middleware/error-shape.js';
import { API_KEY, errors, json } from '../openapi/operation.js';
import { jobStatusInputs } from '../schemas/jobs.schemas.js';
import type { RouteTable } from './route-table.js';

export function jobsRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/jobs/:id',
        inputs: jobStatusInputs,
        handlers: ({ deps, keys, checkInputs }) => [answerErrorsAs('B'), checkInputs, requireApiKey(keys), jobStatusController(deps)],
        openapi: {
          tags: ['Jobs'],
          summary: 'State of an async job (owner only)',
          description: 'When completed, the body the synchronous call would have returned; finished jobs are kept for an hour.',
          operationId: 'getJob',
          security: API_KEY,
          responses: { '200': json('JobStatus'), ...errors('B', [401, 404, 422]) },
        },
      },
    ],
  };
}
