// GET /openapi.json (built from the route tables) and GET /docs (Swagger UI from node_modules).
import type { Request, Response } from 'express';
import { ServiceError } from '../../errors.js';
import { DOCS_ASSETS, SWAGGER_UI_DIR, docsInitializer, docsPage } from '../openapi/docs-assets.js';
import { NO_AUTH, binaryImage, errors, plain } from '../openapi/operation.js';
import type { WebDeps } from '../web-deps.js';
import type { RouteTable } from './route-table.js';

const basePathOf = (deps: WebDeps) => new URL(deps.config.baseUrl).pathname.replace(/\/+$/, '');

function docsAssetController(deps: WebDeps) {
  const basePath = basePathOf(deps);
  return (req: Request, res: Response, next: (err?: unknown) => void) => {
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
  };
}

export function docsRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/openapi.json',
        handlers: ({ openApiDocument }) => {
          let document: string | null = null;
          return [
            (_req, res) => {
              document ??= JSON.stringify(openApiDocument());
              res.setHeader('Cache-Control', 'no-cache');
              res.type('application/json').send(document);
            },
          ];
        },
        openapi: {
          tags: ['Documentation'],
          summary: 'This OpenAPI document',
          operationId: 'getOpenApi',
          security: NO_AUTH,
          responses: { '200': plain('OpenAPI 3.1', 'application/json', { type: 'object' }) },
        },
      },
      {
        method: 'get',
        path: '/docs',
        handlers: ({ deps }) => [
          (_req, res) => {
            res.setHeader('Cache-Control', 'no-cache');
            res.type('html').send(docsPage(basePathOf(deps)));
          },
        ],
        openapi: {
          tags: ['Documentation'],
          summary: 'Interactive documentation (Swagger UI)',
          operationId: 'getDocs',
          security: NO_AUTH,
          responses: { '200': plain('HTML page', 'text/html') },
        },
      },
      {
        method: 'get',
        path: '/docs/:asset',
        handlers: ({ deps }) => [docsAssetController(deps)],
        openapi: {
          tags: ['Documentation'],
          summary: 'Static files of the documentation UI',
          operationId: 'getDocsAsset',
          security: NO_AUTH,
          parameters: [{ name: 'asset', in: 'path', required: true, schema: { type: 'string', enum: Object.keys(DOCS_ASSETS) } }],
          responses: { '200': plain('The file', '*/*', binaryImage), ...errors('B', [404]) },
        },
      },
    ],
  };
}
