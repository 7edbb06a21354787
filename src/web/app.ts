// The front door: thin Express app that validates, authenticates and hands work to the queues.
import express, { type Express } from 'express';
import { answerDeadline } from './middleware/answer-deadline.js';
import { KeyCache } from './middleware/auth.js';
import { errorHandler, notFoundHandler } from './middleware/error-handler.js';
import { ERROR_SHAPE_PREFIXES, answerErrorsAs } from './middleware/error-shape.js';
import { requestContext, requestLogger } from './middleware/request-context.js';
import { createHitPath, type HitPath } from './hit-path.js';
import { catalogErrorWatch, dataHostGate } from './services/data-host-link.js';
import { buildOpenApiDocument } from './openapi/document.js';
import { presetBook } from './services/presets.js';
import { routeTables } from './routes/index.js';
import { mountRoutes, routeOptions, type RouteContext } from './routes/route-table.js';
import { createFrontDoorMetrics } from './monitoring/metrics.js';
import type { WebDeps } from './web-deps.js';

/** The Express app (the general path) and the hit path in front of it, sharing log and metrics. */
export function createFrontDoorApp(deps: WebDeps): { app: Express; hitPath: HitPath } {
  // A bad PRESETS value stops the start (ConfigError), not the first request that names it.
  presetBook(deps.config);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy ? true : 'loopback');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const requestLog = requestLogger(deps.log);
  app.use(requestContext(deps.log, requestLog.begin));
  const metrics = createFrontDoorMetrics(deps);
  app.use(metrics.middleware);
  app.use(answerDeadline(deps.config.jobTimeoutMs));
  if (deps.dataHost) app.use(dataHostGate(deps.dataHost));

  // The routes that exist and the document that lists them come from the same options and tables.
  const options = routeOptions(deps.config);
  const ctx: RouteContext = { deps, keys: new KeyCache(deps.catalog, deps.config.apiKeyCacheMs), metrics, openApiDocument: () => buildOpenApiDocument(options) };
  // Set A's paths answer errors in its shape, the other API paths in set B's (matched or not).
  app.use([...ERROR_SHAPE_PREFIXES.A], answerErrorsAs('A'));
  app.use([...ERROR_SHAPE_PREFIXES.B], answerErrorsAs('B'));
  for (const table of routeTables(options)) app.use(mountRoutes(table, ctx));
  app.use(notFoundHandler);
  if (deps.dataHost) app.use(catalogErrorWatch(deps.dataHost));
  app.use(errorHandler);
  return { app, hitPath: createHitPath(deps, metrics, requestLog) };
}

/** The Express app alone (tests that mount it themselves; the hit path is the front door's). */
export function createApp(deps: WebDeps): Express {
  return createFrontDoorApp(deps).app;
}
