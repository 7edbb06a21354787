import { Router } from 'express';
import { jobStatusController } from '../controllers/jobs.controller.js';
import { requireApiKey, type KeyCache } from '../middleware/auth.js';
import { pathSet } from '../middleware/path-set.js';
import type { WebDeps } from '../web-deps.js';

export function jobsRoutes(deps: WebDeps, keys: KeyCache): Router {
  const router = Router();
  router.get('/jobs/:id', pathSet('B'), requireApiKey(keys), jobStatusController(deps));
  return router;
}
