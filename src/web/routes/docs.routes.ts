// GET /openapi.json (generated from the route schemas) and GET /docs (Swagger UI from node_modules).
import { Router } from 'express';
import type { Config } from '../../config.js';
import { ServiceError } from '../../errors.js';
import { DOCS_ASSETS, SWAGGER_UI_DIR, docsInitializer, docsPage } from '../openapi/docs-assets.js';
import { buildOpenApiDocument, type OpenApiOptions } from '../openapi/document.js';
import type { WebDeps } from '../web-deps.js';

export function openApiOptions(config: Config): OpenApiOptions {
  return { baseUrl: config.baseUrl, cdnUrl: config.cdnUrl, servesFiles: config.storageDriver === 'local', adminEnabled: config.adminToken !== '' };
}

export function docsRoutes(deps: WebDeps): Router {
  const router = Router();
  const basePath = new URL(deps.config.baseUrl).pathname.replace(/\/+$/, '');
  let document: string | null = null;
  router.get('/openapi.json', (_req, res) => {
    document ??= JSON.stringify(buildOpenApiDocument(openApiOptions(deps.config)));
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/json').send(document);
  });
  router.get('/docs', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(docsPage(basePath));
  });
  router.get('/docs/:asset', (req, res, next) => {
    const name = String(req.params.asset);
    const asset = Object.hasOwn(DOCS_ASSETS, name) ? DOCS_ASSETS[name] : undefined;
    if (!asset) throw new ServiceError('not_found', 'Not found');
    res.setHeader('Content-Type', asset.contentType);
    if (!asset.file) {
      res.setHeader('Cache-Control', 'no-cache');
      res.send(docsInitializer(`${basePath}/openapi.json`));
      return;
    }
    res.sendFile(asset.file, { root: SWAGGER_UI_DIR, maxAge: '1h' }, (err) => {
      if (err) next(err);
    });
  });
  return router;
}
