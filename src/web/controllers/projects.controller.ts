// Set B projects: GET/POST/PATCH/DELETE /cdn/projects (spec 2.5).
import type { Request, Response } from 'express';
import type { Catalog } from '../../catalog/catalog.js';
import { deleteImage } from '../../catalog/images.js';
import type { ProjectDoc } from '../../catalog/models/project.model.js';
import { createProject, DEFAULT_PROJECT_SLUG, ensureDefaultProject, findOwnedProject, projectImageFilter, updateProject } from '../../catalog/projects.js';
import { ServiceError } from '../../errors.js';
import { currentUser } from '../middleware/auth.js';
import type { WebDeps } from '../web-deps.js';

async function present(catalog: Catalog, project: ProjectDoc) {
  return {
    projectId: String(project._id),
    name: project.name,
    slug: project.slug,
    description: project.description ?? null,
    image_count: await catalog.images.countDocuments(projectImageFilter(project)),
    created_at: project.createdAt,
  };
}

export function listProjectsController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    await ensureDefaultProject(deps.catalog, user.userId);
    const projects = await deps.catalog.projects.find({ userId: user.userId }).sort({ _id: 1 }).lean();
    res.json({ projects: await Promise.all(projects.map((p) => present(deps.catalog, p))) });
  };
}

export function createProjectController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const { name, description } = res.locals.body as { name: string; description?: string | null };
    const project = await createProject(deps.catalog, user.userId, name, description ?? null);
    res.json(await present(deps.catalog, project));
  };
}

export function updateProjectController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const { projectId, name, description } = res.locals.body as { projectId: string; name?: string | null; description?: string | null };
    const project = await updateProject(deps.catalog, user.userId, projectId, { name, description });
    res.json(await present(deps.catalog, project));
  };
}

export function deleteProjectController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const { projectId, moveImagesToDefault = false } = res.locals.body as { projectId: string; moveImagesToDefault?: boolean };
    const project = await findOwnedProject(deps.catalog, user.userId, projectId);
    if (project.slug === DEFAULT_PROJECT_SLUG) throw new ServiceError('forbidden', 'The default project cannot be deleted');
    let moved = 0;
    let deleted = 0;
    if (moveImagesToDefault) {
      const target = await ensureDefaultProject(deps.catalog, user.userId);
      moved = (await deps.catalog.images.updateMany({ userId: user.userId, projectId: project._id }, { $set: { projectId: target._id } })).modifiedCount;
    } else {
      const ids = await deps.catalog.images.find({ userId: user.userId, projectId: project._id }, { _id: 1 }).lean();
      for (const { _id } of ids) if (await deleteImage(deps.catalog, deps.storage, user.userId, String(_id))) deleted++;
    }
    await deps.catalog.projects.deleteOne({ _id: project._id, userId: user.userId });
    res.json({ deleted: true, projectId, images_moved: moved, images_deleted: deleted });
  };
}
