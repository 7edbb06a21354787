// Set B routes (spec 4.2): errors answer `{detail}`. Order matters: fixed paths before
// `/image/*path` and `/cdn/:image_id`.
import { PLANS } from '../../catalog/plans.js';
import { CASE_INSENSITIVE_PARAMS } from '../../imaging/params.js';
import { cdnUploadController, deleteImagesController, deleteOneImageController, listImagesController, usageController } from '../controllers/cdn.controller.js';
import { cdnServeController, imageDemoController, imagePathController, imageTestController } from '../controllers/image.controller.js';
import { createProjectController, deleteProjectController, listProjectsController, updateProjectController } from '../controllers/projects.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { perIpLimit } from '../middleware/rate-limit.js';
import { validateSetB } from '../middleware/validate-set-b.js';
import { API_KEY, NO_AUTH, demoParameters, errors, imageResponses, json, jsonBody, multipartBody, parametersOf, pathParameter, requestModeParameters } from '../openapi/operation.js';
import { publicIdProperty } from '../schemas/request-extras.schemas.js';
import { createProjectBody, deleteImagesBody, deleteProjectBody, listImagesQuery, updateProjectBody, uploadFields } from '../schemas/set-b.schemas.js';
import { setBServeQuery, setBTransformQuery } from '../schemas/transform.schemas.js';
import type { RouteTable } from './route-table.js';

const keyOnly = () => validateSetB({ requireKey: true });
const PLANS_OPERATION = { tags: ['Plans'], summary: 'Plan information', operationId: 'listPlans', security: NO_AUTH, responses: { '200': json('Plans') } };

export function setBRouteTable(): RouteTable {
  return {
    pathSet: { set: 'B', prefixes: ['/image', '/cdn', '/plans'] },
    routes: [
      {
        method: 'get',
        path: '/plans',
        handlers: () => [
          (_req, res) => {
            res.json({ plans: PLANS });
          },
        ],
        openapi: PLANS_OPERATION,
        alias: { path: '/plans/', summary: 'Plan information (trailing-slash form)', operationId: 'listPlansSlash' },
      },

      // ── Images ──
      {
        method: 'get',
        path: '/image/test',
        handlers: ({ keys }) => [keyOnly(), requireApiKey(keys), imageTestController()],
        openapi: {
          tags: ['Set B: images'],
          summary: 'Validate credentials',
          operationId: 'imageTest',
          security: API_KEY,
          responses: { '200': json('ImageTestResult'), ...errors('B', [401, 422]) },
        },
      },
      {
        method: 'get',
        path: '/image/demo/*path',
        handlers: ({ deps }) => [
          perIpLimit(deps.redis, 'demo', deps.config.demoRateLimitPerMin),
          validateSetB({ query: setBTransformQuery, lowerCaseQuery: [...CASE_INSENSITIVE_PARAMS] }),
          imageDemoController(deps),
        ],
        openapi: {
          tags: ['Set B: images'],
          summary: 'Public demo of transformations',
          description: 'Allowed with `X-Demo-Token` = DEMO_TOKEN or an Origin/Referer in DEMO_ORIGINS; `src` only from DEMO_SOURCES; output at most 2000 px per side; rate-limited per IP.',
          operationId: 'imageDemo',
          security: NO_AUTH,
          parameters: [
            pathParameter('path', 'Vanity name; an image extension (.jpg, .png, .webp, .avif) sets the format when `f` is absent'),
            ...parametersOf(setBTransformQuery, 'query'),
            ...demoParameters(),
          ],
          responses: { ...imageResponses('The transformed image'), ...errors('B', [403, 404, 422, 429, 503, 504]) },
        },
      },
      {
        method: 'get',
        path: '/image/*path',
        handlers: ({ deps, keys }) => [
          validateSetB({ requireKey: true, query: setBTransformQuery, lowerCaseQuery: [...CASE_INSENSITIVE_PARAMS] }),
          requireApiKey(keys),
          imagePathController(deps),
        ],
        openapi: {
          tags: ['Set B: images'],
          summary: 'Process and serve one of your images with transformations',
          operationId: 'imagePath',
          security: API_KEY,
          parameters: [pathParameter('path', 'Vanity name (may contain "/"); an image extension sets the format when `f` is absent'), ...parametersOf(setBTransformQuery, 'query')],
          responses: { ...imageResponses('The transformed image'), ...errors('B', [401, 404, 422, 503, 504]) },
        },
      },

      // ── CDN ──
      {
        method: 'post',
        path: '/cdn/upload',
        handlers: ({ deps, keys }) => [keyOnly(), requireApiKey(keys), cdnUploadController(deps)],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'Upload an image into a project',
          operationId: 'cdnUpload',
          security: API_KEY,
          parameters: requestModeParameters(),
          requestBody: multipartBody(uploadFields, { public_id: publicIdProperty }),
          responses: { '200': json('CdnUploadResult'), '202': json('JobAccepted', 'Accepted (async mode)'), ...errors('B', [400, 401, 403, 413, 415, 422, 503, 504]) },
        },
      },
      {
        method: 'get',
        path: '/cdn/images',
        handlers: ({ deps, keys }) => [validateSetB({ requireKey: true, query: listImagesQuery }), requireApiKey(keys), listImagesController(deps)],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'List your images (newest first)',
          operationId: 'listImages',
          security: API_KEY,
          parameters: parametersOf(listImagesQuery, 'query'),
          responses: { '200': json('ImageList'), ...errors('B', [401, 422]) },
        },
      },
      {
        method: 'delete',
        path: '/cdn/images',
        handlers: ({ deps, keys }) => [validateSetB({ requireKey: true, body: deleteImagesBody }), requireApiKey(keys), deleteImagesController(deps)],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'Delete images',
          description: 'Removes originals, derivatives and their bytes from usage.',
          operationId: 'deleteImages',
          security: API_KEY,
          requestBody: jsonBody(deleteImagesBody),
          responses: { '200': json('DeleteImagesResult'), ...errors('B', [400, 401, 413, 415, 422]) },
        },
      },
      {
        method: 'get',
        path: '/cdn/usage',
        handlers: ({ deps, keys }) => [keyOnly(), requireApiKey(keys), usageController(deps)],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'Storage and bandwidth usage',
          operationId: 'getUsage',
          security: API_KEY,
          responses: { '200': json('Usage'), ...errors('B', [401, 422]) },
        },
      },

      // ── Projects ──
      {
        method: 'get',
        path: '/cdn/projects',
        handlers: ({ deps, keys }) => [keyOnly(), requireApiKey(keys), listProjectsController(deps)],
        openapi: { tags: ['Projects'], summary: 'List projects', operationId: 'listProjects', security: API_KEY, responses: { '200': json('ProjectList'), ...errors('B', [401, 422]) } },
      },
      {
        method: 'post',
        path: '/cdn/projects',
        handlers: ({ deps, keys }) => [validateSetB({ requireKey: true, body: createProjectBody }), requireApiKey(keys), createProjectController(deps)],
        openapi: {
          tags: ['Projects'],
          summary: 'Create a project',
          operationId: 'createProject',
          security: API_KEY,
          requestBody: jsonBody(createProjectBody),
          responses: { '200': json('Project'), ...errors('B', [400, 401, 409, 413, 415, 422]) },
        },
      },
      {
        method: 'patch',
        path: '/cdn/projects',
        handlers: ({ deps, keys }) => [validateSetB({ requireKey: true, body: updateProjectBody }), requireApiKey(keys), updateProjectController(deps)],
        openapi: {
          tags: ['Projects'],
          summary: 'Rename or describe a project',
          operationId: 'updateProject',
          security: API_KEY,
          requestBody: jsonBody(updateProjectBody),
          responses: { '200': json('Project'), ...errors('B', [400, 401, 403, 404, 409, 413, 415, 422]) },
        },
      },
      {
        method: 'delete',
        path: '/cdn/projects',
        handlers: ({ deps, keys }) => [validateSetB({ requireKey: true, body: deleteProjectBody }), requireApiKey(keys), deleteProjectController(deps)],
        openapi: {
          tags: ['Projects'],
          summary: 'Delete a project',
          description: '`moveImagesToDefault: false` (default) deletes its images; true moves them to the default project.',
          operationId: 'deleteProject',
          security: API_KEY,
          requestBody: jsonBody(deleteProjectBody),
          responses: { '200': json('DeleteProjectResult'), ...errors('B', [400, 401, 403, 404, 413, 415, 422]) },
        },
      },

      // ── One image (after every fixed /cdn path) ──
      {
        method: 'delete',
        path: '/cdn/:image_id',
        handlers: ({ deps, keys }) => [keyOnly(), requireApiKey(keys), deleteOneImageController(deps)],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'Delete one image',
          operationId: 'deleteImage',
          security: API_KEY,
          parameters: [pathParameter('image_id', 'imageId')],
          responses: { '200': json('DeleteImagesResult'), ...errors('B', [401, 404, 422]) },
        },
      },
      {
        method: 'get',
        path: '/cdn/:image_id',
        // The per-IP limit applies inside: to new derivatives and unknown images, not to stored ones.
        handlers: ({ deps, keys }) => [
          validateSetB({ query: setBServeQuery, lowerCaseQuery: [...CASE_INSENSITIVE_PARAMS] }),
          cdnServeController(deps, keys, perIpLimit(deps.redis, 'cdn', deps.config.publicRateLimitPerMin)),
        ],
        openapi: {
          tags: ['Set B: CDN'],
          summary: 'Serve an optimized image (public)',
          description: `Public (the spec declares no key). Existing derivatives are always served; new ones are capped per image (PUBLIC_DERIVATIVES_PER_IMAGE) and the route is rate-limited per IP. Without w and dpr, the client hints Sec-CH-Width/Width and Sec-CH-DPR/DPR are honoured (Accept-CH, Vary). With PUBLIC_PRESETS_ONLY=true only preset, f and v are accepted (403 otherwise). A \`v\` naming a replaced version answers 404.`,
          operationId: 'cdnServe',
          security: NO_AUTH,
          parameters: [pathParameter('image_id', 'imageId'), ...parametersOf(setBServeQuery, 'query')],
          responses: { ...imageResponses('The image'), ...errors('B', [403, 404, 422, 429, 503, 504]) },
        },
      },
    ],
  };
}
