// GET/POST/PATCH/DELETE /cdn/projects (spec 2.5; errors in set B's shape).
import { createProjectController, deleteProjectController, listProjectsController, updateProjectController } from '../controllers/projects.controller.js';
import { requireApiKey } from '../middleware/auth.js';
import { API_KEY, errors, json } from '../openapi/operation.js';
import { keyOnlyInputs } from '../schemas/images.schemas.js';
import { createProjectInputs, deleteProjectInputs, updateProjectInputs } from '../schemas/projects.schemas.js';
import type { RouteTable } from './route-table.js';

export function projectsRouteTable(): RouteTable {
  return {
    routes: [
      {
        method: 'get',
        path: '/cdn/projects',
        inputs: keyOnlyInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), listProjectsController(deps)],
        openapi: { tags: ['Projects'], summary: 'List projects', operationId: 'listProjects', security: API_KEY, responses: { '200': json('ProjectList'), ...errors('B', [401, 422]) } },
      },
      {
        method: 'post',
        path: '/cdn/projects',
        inputs: createProjectInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), createProjectController(deps)],
        openapi: {
          tags: ['Projects'],
          summary: 'Create a project',
          operationId: 'createProject',
          security: API_KEY,
          responses: { '200': json('Project'), ...errors('B', [400, 401, 409, 413, 415, 422]) },
        },
      },
      {
        method: 'patch',
        path: '/cdn/projects',
        inputs: updateProjectInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), updateProjectController(deps)],
        openapi: {
          tags: ['Projects'],
          summary: 'Rename or describe a project',
          operationId: 'updateProject',
          security: API_KEY,
          responses: { '200': json('Project'), ...errors('B', [400, 401, 403, 404, 409, 413, 415, 422]) },
        },
      },
      {
        method: 'delete',
        path: '/cdn/projects',
        inputs: deleteProjectInputs,
        handlers: ({ deps, keys, checkInputs }) => [checkInputs, requireApiKey(keys), deleteProjectController(deps)],
        openapi: {
          tags: ['Projects'],
          summary: 'Delete a project',
          description: '`moveImagesToDefault: false` (default) deletes its images; true moves them to the default project.',
          operationId: 'deleteProject',
          security: API_KEY,
          responses: { '200': json('DeleteProjectResult'), ...errors('B', [400, 401, 403, 404, 413, 415, 422]) },
        },
      },
    ],
  };
}
