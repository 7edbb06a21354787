// Files of the /docs page: Swagger UI from the `swagger-ui-dist` package in node_modules (no CDN),
// plus our initializer. Only these names are served under /docs/.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
export const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

export const DOCS_ASSETS: Record<string, { file?: string; contentType: string }> = {
  'swagger-ui.css': { file: 'swagger-ui.css', contentType: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', contentType: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: 'favicon-32x32.png', contentType: 'image/png' },
  'favicon-16x16.png': { file: 'favicon-16x16.png', contentType: 'image/png' },
  /** Generated: loads /openapi.json (see docsInitializer). */
  'init.js': { contentType: 'text/javascript; charset=utf-8' },
};

/**
 * Swagger UI configuration: the document of this server, authorization kept across reloads
 * (persistAuthorization, in the browser's localStorage) so a pasted key survives, "Try it out"
 * enabled, and no call to the public swagger.io validator.
 */
export function docsInitializer(openApiUrl: string): string {
  return `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(openApiUrl)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    tryItOutEnabled: false,
    displayRequestDuration: true,
    filter: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;
}

export function docsPage(basePath: string): string {
  const asset = (name: string) => `${basePath}/docs/${name}`;
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Pictor API documentation</title>
  <link rel="stylesheet" href="${asset('swagger-ui.css')}">
  <link rel="icon" type="image/png" href="${asset('favicon-32x32.png')}" sizes="32x32">
  <link rel="icon" type="image/png" href="${asset('favicon-16x16.png')}" sizes="16x16">
  <style>body { margin: 0; } .swagger-ui .topbar { display: none; }</style>
</head>
<body>
  <main id="swagger-ui"></main>
  <script src="${asset('swagger-ui-bundle.js')}"></script>
  <script src="${asset('init.js')}"></script>
</body>
</html>
`;
}
