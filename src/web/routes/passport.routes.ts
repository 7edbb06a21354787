import { Router } from 'express';
import { passportFromUrlController, passportSpecsController, passportUploadController } from '../controllers/passport.controller.js';
import { pathSet } from '../middleware/path-set.js';
import { perIpLimit } from '../middleware/rate-limit.js';
import { validateSetB } from '../middleware/validate-set-b.js';
import { passportUrlQuery } from '../schemas/passport.schemas.js';
import type { WebDeps } from '../web-deps.js';

export function passportRoutes(deps: WebDeps): Router {
  const router = Router();
  const limit = perIpLimit(deps.redis, 'passport', deps.config.demoRateLimitPerMin);
  router.use('/passport-photo', pathSet('B'));
  router.get('/passport-photo/specs', passportSpecsController());
  router.get('/passport-photo/demo/process', limit, validateSetB({ query: passportUrlQuery, lowerCaseQuery: ['country'] }), passportFromUrlController(deps));
  router.post('/passport-photo/demo/process', limit, passportUploadController(deps));
  return router;
}
