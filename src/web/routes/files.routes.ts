// GET <CDN_URL path>/*key: stored objects, when this front door is where CDN_URL points
// (see filesPath; in production CDN_URL names the bucket or a CDN and this route does not exist).
import { cdnFilesController } from '../controllers/cdn-files.controller.js';
import { answerErrorsAs } from '../middleware/error-shape.js';
import { NO_AUTH, errors, imageResponses, pathParameter } from '../openapi/operation.js';
import { filesPath, type RouteOptions, type RouteTable } from './route-table.js';

export function filesRouteTable(options: RouteOptions): RouteTable {
  const mountPath = filesPath(options);
  if (!mountPath) return { routes: [] };
  return {
    routes: [
      {
        method: 'get',
        path: `${mountPath}/*key`,
        handlers: ({ deps }) => [answerErrorsAs('B'), cdnFilesController(deps, mountPath)],
        openapi: {
          tags: ['Files'],
          summary: 'A stored object (when CDN_URL points at this service)',
          description:
            'Public URLs returned by uploads and transforms point here when STORAGE_DRIVER=local, or with GCS while CDN_URL is on this service’s origin. `key` is `<user_id>/images/<public_id>.<ext>` (may contain "/").',
          operationId: 'getFile',
          security: NO_AUTH,
          parameters: [pathParameter('key', 'Storage key')],
          responses: { ...imageResponses('The stored image', false), ...errors('B', [404]) },
        },
      },
    ],
  };
}
