// Projects group a user's images. Slugs are unique per user (unique index); every user has an
// undeletable `default` project, created on first use.
import transliterate from '@sindresorhus/transliterate';
import { Types } from 'mongoose';
import { ServiceError } from '../errors.js';
import type { Storage } from '../storage/storage.js';
import type { Catalog } from './catalog.js';
import { deleteImage } from './images.js';
import type { ProjectDoc } from './models/project.model.js';

export const DEFAULT_PROJECT_SLUG = 'default';

export function slugify(name: string): string {
  return transliterate(name)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
}

export async function ensureDefaultProject(catalog: Catalog, userId: string): Promise<ProjectDoc> {
  const existing = await catalog.projects.findOne({ userId, slug: DEFAULT_PROJECT_SLUG }).lean();
  if (existing) return existing;
  try {
    await catalog.projects.create({ userId, name: 'Default', slug: DEFAULT_PROJECT_SLUG, description: 'Images uploaded without a project' });
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
  const created = await catalog.projects.findOne({ userId, slug: DEFAULT_PROJECT_SLUG }).lean();
  if (!created) throw new Error('default project missing after upsert');
  return created;
}

function isDuplicate(err: unknown): boolean {
  return (err as { code?: number }).code === 11000;
}

export async function createProject(catalog: Catalog, userId: string, name: string, description: string | null): Promise<ProjectDoc> {
  const slug = slugify(name);
  if (!slug) throw new ServiceError('invalid_parameter', 'name must contain at least one letter or digit', { issues: [{ loc: ['body', 'name'], msg: 'name must contain at least one letter or digit', type: 'value_error' }] });
  if (slug === DEFAULT_PROJECT_SLUG) await ensureDefaultProject(catalog, userId);
  try {
    return (await catalog.projects.create({ userId, name, slug, description })).toObject();
  } catch (err) {
    if (isDuplicate(err)) throw new ServiceError('conflict', `A project with the slug "${slug}" already exists`);
    throw err;
  }
}

/** Finds a project of the user by slug or name (for uploads), creating it when absent. */
export async function resolveProjectForUpload(catalog: Catalog, userId: string, value: string | undefined | null): Promise<ProjectDoc> {
  if (!value || !value.trim()) return ensureDefaultProject(catalog, userId);
  const slug = slugify(value);
  if (!slug) throw new ServiceError('invalid_parameter', 'project must contain at least one letter or digit', { issues: [{ loc: ['body', 'project'], msg: 'project must contain at least one letter or digit', type: 'value_error' }] });
  if (slug === DEFAULT_PROJECT_SLUG) return ensureDefaultProject(catalog, userId);
  const found = await catalog.projects.findOne({ userId, slug }).lean();
  if (found) return found;
  try {
    return (await catalog.projects.create({ userId, name: value.trim().slice(0, 100), slug, description: null })).toObject();
  } catch (err) {
    if (!isDuplicate(err)) throw err;
    const raced = await catalog.projects.findOne({ userId, slug }).lean();
    if (!raced) throw err;
    return raced;
  }
}

export async function findOwnedProject(catalog: Catalog, userId: string, projectId: string): Promise<ProjectDoc> {
  const valid = Types.ObjectId.isValid(projectId) && String(new Types.ObjectId(projectId)) === projectId;
  const project = valid ? await catalog.projects.findOne({ _id: new Types.ObjectId(projectId), userId }).lean() : null;
  if (!project) throw new ServiceError('not_found', 'Project not found');
  return project;
}

/** Images of a project; images without a project belong to `default`. */
export function projectImageFilter(project: ProjectDoc): Record<string, unknown> {
  return project.slug === DEFAULT_PROJECT_SLUG
    ? { userId: project.userId, projectId: { $in: [null, project._id] } }
    : { userId: project.userId, projectId: project._id };
}

export async function updateProject(catalog: Catalog, userId: string, projectId: string, changes: { name?: string | null; description?: string | null }): Promise<ProjectDoc> {
  const project = await findOwnedProject(catalog, userId, projectId);
  const set: Record<string, unknown> = {};
  if (changes.name !== undefined && changes.name !== null && changes.name !== project.name) {
    if (project.slug === DEFAULT_PROJECT_SLUG) throw new ServiceError('forbidden', 'The default project cannot be renamed');
    const slug = slugify(changes.name);
    if (!slug) throw new ServiceError('invalid_parameter', 'name must contain at least one letter or digit', { issues: [{ loc: ['body', 'name'], msg: 'name must contain at least one letter or digit', type: 'value_error' }] });
    set.name = changes.name;
    set.slug = slug;
  }
  if (changes.description !== undefined) set.description = changes.description;
  if (Object.keys(set).length === 0) return project;
  try {
    const updated = await catalog.projects.findOneAndUpdate({ _id: project._id, userId }, { $set: set }, { new: true }).lean();
    if (!updated) throw new ServiceError('not_found', 'Project not found');
    return updated;
  } catch (err) {
    if (isDuplicate(err)) throw new ServiceError('conflict', `A project with the slug "${String(set.slug)}" already exists`);
    throw err;
  }
}

/** The user's projects, oldest first. */
export function listProjects(catalog: Catalog, userId: string): Promise<ProjectDoc[]> {
  return catalog.projects.find({ userId }).sort({ _id: 1 }).lean();
}

export function countProjectImages(catalog: Catalog, project: ProjectDoc): Promise<number> {
  return catalog.images.countDocuments(projectImageFilter(project));
}

/**
 * Deletes a project (never `default`): its images move to `default`, or are deleted one by one
 * (catalog, usage, bytes) before the project itself goes. Several steps, each atomic: a crash
 * midway leaves the project with fewer images, and the same request finishes it.
 */
export async function deleteProject(catalog: Catalog, storage: Storage, project: ProjectDoc, moveImagesToDefault: boolean): Promise<{ moved: number; deleted: number }> {
  if (project.slug === DEFAULT_PROJECT_SLUG) throw new ServiceError('forbidden', 'The default project cannot be deleted');
  const { userId } = project;
  let moved = 0;
  let deleted = 0;
  if (moveImagesToDefault) {
    const target = await ensureDefaultProject(catalog, userId);
    moved = (await catalog.images.updateMany({ userId, projectId: project._id }, { $set: { projectId: target._id } })).modifiedCount;
  } else {
    const ids = await catalog.images.find({ userId, projectId: project._id }, { _id: 1 }).lean();
    for (const { _id } of ids) if (await deleteImage(catalog, storage, userId, String(_id))) deleted++;
  }
  await catalog.projects.deleteOne({ _id: project._id, userId });
  return { moved, deleted };
}
