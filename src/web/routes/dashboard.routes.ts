// GET /dashboard/…: the web dashboard's static files, built by `npm run build` into dist/dashboard
// (index.html, styles.css and the compiled browser modules under js/). No CDN at run time: every
// asset, the client SDK and the parameter registry included, comes from this front door.
import express, { Router, type Request, type Response } from 'express';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceError } from '../../errors.js';
import { NO_AUTH, errors, plain } from '../openapi/operation.js';
import type { RouteTable } from './route-table.js';

/** dist/src/web/routes → dist/dashboard. */
export const DASHBOARD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dashboard');

export function dashboardRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/dashboard',
        mount: true,
        handlers: () => [dashboardRoutes()],
        openapi: {
          tags: ['Documentation'],
          summary: 'Web dashboard',
          description:
            'Upload, gallery, transform playground, srcset, usage, projects and the passport demo in the browser; paste an API key (kept in session storage). Its static files are served under /dashboard/.',
          operationId: 'getDashboard',
          security: NO_AUTH,
          responses: { '200': plain('HTML page', 'text/html'), ...errors('B', [404]) },
        },
      },
    ],
  };
}

export function dashboardRoutes(dir = DASHBOARD_DIR): Router {
  const router = Router();
  router.use((_req: Request, res: Response, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'same-origin');
    res.setHeader('X-Frame-Options', 'DENY');
    next();
  });
  if (!fs.existsSync(path.join(dir, 'index.html'))) {
    router.use(() => {
      throw new ServiceError('not_found', 'The dashboard is not built: run npm run build');
    });
    return router;
  }
  router.use(
    express.static(dir, {
      index: 'index.html',
      // Small files that change with every build: revalidate (cheap 304s) rather than cache blindly.
      cacheControl: true,
      maxAge: 0,
      etag: true,
      lastModified: true,
      fallthrough: true,
    }),
  );
  return router;
}
