// Passport photos (errors in set B's shape): the specifications and the public, gated demo.
import { passportFromUrlController, passportSpecsController, passportUploadController } from '../controllers/passport.controller.js';
import { perIpLimit } from '../middleware/rate-limit.js';
import { NO_AUTH, binaryImage, demoParameters, errors, json, multipartBody, ref } from '../openapi/operation.js';
import { passportUploadFields, passportUploadInputs, passportUrlInputs } from '../schemas/passport.schemas.js';
import type { WebDeps } from '../web-deps.js';
import type { RouteTable } from './route-table.js';

// One budget for both demo routes: the limiter counts in Redis under this name.
const demoLimit = (deps: WebDeps) => perIpLimit(deps.redis, 'passport', deps.config.demoRateLimitPerMin);
const GATED = 'Gated like the image demo (X-Demo-Token or an allowed Origin/Referer); rate-limited per IP.';

export function passportRouteTable(): RouteTable {
  const responses = {
    '200': {
      description: 'The photo with its compliance report (JSON), or the JPEG itself with `Accept: image/jpeg`',
      content: { 'application/json': { schema: ref('PassportResult') }, 'image/jpeg': { schema: binaryImage } },
    },
    ...errors('B', [400, 403, 404, 413, 415, 422, 429, 503, 504]),
  };
  return {
    routes: [
      {
        method: 'get',
        path: '/passport-photo/specs',
        handlers: () => [passportSpecsController()],
        openapi: { tags: ['Passport'], summary: 'Passport specifications of every supported country', operationId: 'passportSpecs', security: NO_AUTH, responses: { '200': json('PassportSpecs') } },
      },
      {
        method: 'get',
        path: '/passport-photo/demo/process',
        inputs: passportUrlInputs,
        handlers: ({ deps, checkInputs }) => [demoLimit(deps), checkInputs, passportFromUrlController(deps)],
        openapi: {
          tags: ['Passport'],
          summary: 'Process a passport photo from a URL',
          description: GATED,
          operationId: 'passportFromUrl',
          security: NO_AUTH,
          parameters: demoParameters(),
          responses,
        },
      },
      {
        method: 'post',
        path: '/passport-photo/demo/process',
        // The form fields are checked once the upload is received.
        inputs: passportUploadInputs,
        handlers: ({ deps }) => [demoLimit(deps), passportUploadController(deps)],
        openapi: {
          tags: ['Passport'],
          summary: 'Process an uploaded passport photo',
          description: GATED,
          operationId: 'passportUpload',
          security: NO_AUTH,
          parameters: demoParameters(),
          requestBody: multipartBody(passportUploadFields),
          responses,
        },
      },
    ],
  };
}
