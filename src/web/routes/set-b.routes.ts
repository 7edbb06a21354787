// Set B routes (spec 4.2). Order matters: fixed paths before `/image/*path` and `/cdn/:image_id`.
import { Router } from 'express';
import { PLANS } from '../../catalog/plans.js';
import { cdnUploadController, deleteImagesController, deleteOneImageController, listImagesController, usageController } from '../controllers/cdn.controller.js';
import { cdnServeController, imageDemoController, imagePathController, imageTestController } from '../controllers/image.controller.js';
import { createProjectController, deleteProjectController, listProjectsController, updateProjectController } from '../controllers/projects.controller.js';
import { requireApiKey, type KeyCache } from '../middleware/auth.js';
import { pathSet } from '../middleware/path-set.js';
import { perIpLimit } from '../middleware/rate-limit.js';
import { validateSetB } from '../middleware/validate-set-b.js';
import { createProjectBody, deleteImagesBody, deleteProjectBody, listImagesQuery, updateProjectBody } from '../schemas/set-b.schemas.js';
import { setBServeQuery, setBTransformQuery } from '../schemas/transform.schemas.js';
import type { WebDeps } from '../web-deps.js';

const CASE_INSENSITIVE = ['f', 'fit', 'gravity', 'flip', 'wm_gravity'];

export function setBRoutes(deps: WebDeps, keys: KeyCache): Router {
  const router = Router();
  const auth = requireApiKey(keys);
  const keyOnly = validateSetB({ requireKey: true });
  router.use(['/image', '/cdn', '/plans'], pathSet('B'));

  router.get('/plans', (_req, res) => {
    res.json({ plans: PLANS });
  });

  router.get('/image/test', keyOnly, auth, imageTestController());
  router.get(
    '/image/demo/*path',
    perIpLimit(deps.redis, 'demo', deps.config.demoRateLimitPerMin),
    validateSetB({ query: setBTransformQuery, lowerCaseQuery: CASE_INSENSITIVE }),
    imageDemoController(deps),
  );
  router.get('/image/*path', validateSetB({ requireKey: true, query: setBTransformQuery, lowerCaseQuery: CASE_INSENSITIVE }), auth, imagePathController(deps));

  router.post('/cdn/upload', keyOnly, auth, cdnUploadController(deps));
  router.get('/cdn/images', validateSetB({ requireKey: true, query: listImagesQuery }), auth, listImagesController(deps));
  router.delete('/cdn/images', validateSetB({ requireKey: true, body: deleteImagesBody }), auth, deleteImagesController(deps));
  router.get('/cdn/usage', keyOnly, auth, usageController(deps));
  router.get('/cdn/projects', keyOnly, auth, listProjectsController(deps));
  router.post('/cdn/projects', validateSetB({ requireKey: true, body: createProjectBody }), auth, createProjectController(deps));
  router.patch('/cdn/projects', validateSetB({ requireKey: true, body: updateProjectBody }), auth, updateProjectController(deps));
  router.delete('/cdn/projects', validateSetB({ requireKey: true, body: deleteProjectBody }), auth, deleteProjectController(deps));
  router.delete('/cdn/:image_id', keyOnly, auth, deleteOneImageController(deps));
  // The per-IP limit applies inside: to new derivatives and unknown images, not to stored ones.
  router.get(
    '/cdn/:image_id',
    validateSetB({ query: setBServeQuery, lowerCaseQuery: CASE_INSENSITIVE }),
    cdnServeController(deps, keys, perIpLimit(deps.redis, 'cdn', deps.config.publicRateLimitPerMin)),
  );
  return router;
}
