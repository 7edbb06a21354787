// Projects: GET/POST/PATCH/DELETE /cdn/projects (spec 2.5).
import type { Request, Response } from 'express';
import type { DeleteProjectResult, Project } from '../../api/response-types.js';
import type { Catalog } from '../../catalog/catalog.js';
import type { ProjectDoc } from '../../catalog/models/project.model.js';
import { countProjectImages, createProject, deleteProject, ensureDefaultProject, findOwnedProject, listProjects, updateProject } from '../../catalog/projects.js';
import { currentUser } from '../middleware/auth.js';
import { inputOf } from '../middleware/validate.js';
import { createProjectInputs, deleteProjectBody, deleteProjectInputs, updateProjectInputs } from '../schemas/projects.schemas.js';
import type { WebDeps } from '../web-deps.js';

async function present(catalog: Catalog, project: ProjectDoc): Promise<Project> {
  return {
    projectId: String(project._id),
    name: project.name,
    slug: project.slug,
    description: project.description ?? null,
    image_count: await countProjectImages(catalog, project),
    created_at: new Date(project.createdAt).toISOString(),
  };
}

export function listProjectsController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    await ensureDefaultProject(deps.catalog, user.userId);
    const projects = await listProjects(deps.catalog, user.userId);
    res.json({ projects: await Promise.all(projects.map((p) => present(deps.catalog, p))) });
  };
}

export function createProjectController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const { name, description } = inputOf(res, createProjectInputs).body;
    const project = await createProject(deps.catalog, user.userId, name, description ?? null);
    res.json(await present(deps.catalog, project));
  };
}

export function updateProjectController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const { projectId, name, description } = inputOf(res, updateProjectInputs).body;
    const project = await updateProject(deps.catalog, user.userId, projectId, { name, description });
    res.json(await present(deps.catalog, project));
  };
}

export function deleteProjectController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const { projectId, moveImagesToDefault = deleteProjectBody.properties.moveImagesToDefault.default } = inputOf(res, deleteProjectInputs).body;
    const project = await findOwnedProject(deps.catalog, user.userId, projectId);
    const { moved, deleted } = await deleteProject(deps.catalog, deps.storage, project, moveImagesToDefault);
    res.json({ deleted: true, projectId, images_moved: moved, images_deleted: deleted } satisfies DeleteProjectResult);
  };
}
