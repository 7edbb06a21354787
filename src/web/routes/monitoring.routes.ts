// GET /metrics (Prometheus; protected by ADMIN_TOKEN when it is set, public otherwise) and the
// queue dashboard at /admin/queues (Bull Board; only with ADMIN_TOKEN, else 404).
import { requireAdmin } from '../monitoring/admin-auth.js';
import { QUEUE_DASHBOARD_PATH, queueDashboard } from '../monitoring/queue-dashboard.js';
import { ADMIN, NO_AUTH, errors, plain } from '../openapi/operation.js';
import type { RouteOptions, RouteSpec, RouteTable } from './route-table.js';

export function monitoringRouteTable(options: RouteOptions): RouteTable {
  const admin = options.adminEnabled;
  const routes: RouteSpec[] = [
    {
      method: 'get',
      path: '/metrics',
      handlers: ({ deps, metrics }) => [
        ...(admin ? [requireAdmin(deps.config.adminToken)] : []),
        async (_req, res) => {
          const { contentType, body } = await metrics.render();
          res.setHeader('Content-Type', contentType);
          res.setHeader('Cache-Control', 'no-store');
          res.send(body);
        },
      ],
      openapi: {
        tags: ['Operations'],
        summary: 'Prometheus metrics',
        description: admin
          ? 'Requires the admin token (ADMIN_TOKEN): `Authorization: Bearer <token>`, `X-Admin-Token: <token>` or Basic with the token as password.'
          : 'Public: ADMIN_TOKEN is not set on this deployment (set it to protect this route).',
        operationId: 'getMetrics',
        security: admin ? ADMIN : NO_AUTH,
        responses: { '200': plain('Prometheus text exposition format 0.0.4', 'text/plain'), ...(admin ? errors('B', [401]) : {}) },
      },
    },
  ];
  if (admin) {
    routes.push({
      method: 'get',
      path: QUEUE_DASHBOARD_PATH,
      mount: true,
      handlers: ({ deps }) => [requireAdmin(deps.config.adminToken), queueDashboard(deps)],
      openapi: {
        tags: ['Operations'],
        summary: 'Queue dashboard (Bull Board)',
        description: 'Jobs of every queue by state, with retry/clean/promote actions. Requires the admin token; a browser asks for it (any user name, the token as password). Disabled (404) when ADMIN_TOKEN is empty.',
        operationId: 'getQueueDashboard',
        security: ADMIN,
        responses: { '200': plain('HTML page (its API lives under /admin/queues/api/)', 'text/html'), ...errors('B', [401]) },
      },
    });
  }
  return { routes };
}
