import { Router } from 'express';
import { healthController, rootController } from '../controllers/status.controller.js';
import { pathSet } from '../middleware/path-set.js';
import type { WebDeps } from '../web-deps.js';

export function statusRoutes(deps: WebDeps): Router {
  const router = Router();
  router.get('/', pathSet('B'), rootController(deps));
  router.get('/health', pathSet('B'), healthController(deps));
  return router;
}
