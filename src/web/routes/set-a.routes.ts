import { Router } from 'express';
import { srcsetController, transformController, uploadController } from '../controllers/set-a.controller.js';
import { requireApiKey, type KeyCache } from '../middleware/auth.js';
import { pathSet } from '../middleware/path-set.js';
import type { WebDeps } from '../web-deps.js';

export function setARoutes(deps: WebDeps, keys: KeyCache): Router {
  const router = Router();
  router.use(['/upload', '/transform', '/generate/srcset'], pathSet('A'));
  router.post('/upload', requireApiKey(keys), uploadController(deps));
  router.get('/transform', transformController(deps, keys));
  router.get('/generate/srcset', requireApiKey(keys), srcsetController(deps));
  return router;
}
