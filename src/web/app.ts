// The front door: thin Express app that validates, authenticates and hands work to the queues.
import express, { type Express } from 'express';
import { cdnFilesController } from './controllers/cdn-files.controller.js';
import { KeyCache } from './middleware/auth.js';
import { errorHandler, notFoundHandler } from './middleware/error-handler.js';
import { pathSet } from './middleware/path-set.js';
import { requestContext } from './middleware/request-context.js';
import { setARoutes } from './routes/set-a.routes.js';
import { presetBook } from './services/presets.js';
import { setBRoutes } from './routes/set-b.routes.js';
import { passportRoutes } from './routes/passport.routes.js';
import { jobsRoutes } from './routes/jobs.routes.js';
import { statusRoutes } from './routes/status.routes.js';
import { dashboardRoutes } from './routes/dashboard.routes.js';
import { docsRoutes } from './routes/docs.routes.js';
import { monitoringRoutes } from './routes/monitoring.routes.js';
import { createFrontDoorMetrics } from './monitoring/metrics.js';
import type { WebDeps } from './web-deps.js';

export function createApp(deps: WebDeps): Express {
  // A bad PRESETS value stops the start (ConfigError), not the first request that names it.
  presetBook(deps.config);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy ? true : 'loopback');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext(deps.log));
  const metrics = createFrontDoorMetrics(deps);
  app.use(metrics.middleware);
  const keys = new KeyCache(deps.catalog, deps.config.apiKeyCacheMs);

  app.use(statusRoutes(deps));
  app.use(setARoutes(deps, keys));
  app.use(setBRoutes(deps, keys));
  app.use(passportRoutes(deps));
  app.use(jobsRoutes(deps, keys));
  app.use(docsRoutes(deps));
  app.use(monitoringRoutes(deps, metrics));
  // Every URL handed out must resolve: stored objects are served at CDN_URL's path with local
  // storage, and with GCS too while CDN_URL points at this service (the default).
  if (deps.config.storageDriver === 'local' || new URL(deps.config.cdnUrl).origin === new URL(deps.config.baseUrl).origin) {
    const cdnPath = new URL(deps.config.cdnUrl).pathname.replace(/\/+$/, '');
    if (cdnPath) app.get(`${cdnPath}/*splat`, pathSet('B'), cdnFilesController(deps, cdnPath));
  }
  app.use('/dashboard', dashboardRoutes());
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
