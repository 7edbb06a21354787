// Bull Board (the queue dashboard) for the front door's queues, mounted at /admin/queues behind
// the admin credential. Only built when ADMIN_TOKEN is set; without it the path is a plain 404.
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Express } from 'express';
import { ALL_QUEUES } from '../../jobs/job-contract.js';
import type { WebDeps } from '../web-deps.js';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

export function queueDashboard(deps: WebDeps): Express {
  const basePath = new URL(deps.config.baseUrl).pathname.replace(/\/+$/, '');
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(`${basePath}${QUEUE_DASHBOARD_PATH}`);
  createBullBoard({
    queues: ALL_QUEUES.map((name) => new BullMQAdapter(deps.jobs.queues[name])),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Pictor queues' } },
  });
  const app = serverAdapter.getRouter() as Express;
  app.disable('x-powered-by');
  return app;
}
