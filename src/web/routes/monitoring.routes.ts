// GET /metrics (Prometheus; protected by ADMIN_TOKEN when it is set, public otherwise) and the
// queue dashboard at /admin/queues (Bull Board; only with ADMIN_TOKEN, else 404).
import { Router } from 'express';
import { requireAdmin } from '../monitoring/admin-auth.js';
import type { FrontDoorMetrics } from '../monitoring/metrics.js';
import { QUEUE_DASHBOARD_PATH, queueDashboard } from '../monitoring/queue-dashboard.js';
import type { WebDeps } from '../web-deps.js';

export function monitoringRoutes(deps: WebDeps, metrics: FrontDoorMetrics): Router {
  const router = Router();
  const token = deps.config.adminToken;
  const admin = token ? [requireAdmin(token)] : [];
  router.get('/metrics', ...admin, async (_req, res) => {
    const { contentType, body } = await metrics.render();
    res.setHeader('Content-Type', contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.send(body);
  });
  if (token) router.use(QUEUE_DASHBOARD_PATH, requireAdmin(token), queueDashboard(deps));
  return router;
}
