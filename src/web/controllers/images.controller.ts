// A user's images: GET /image/test (the key's owner), GET/DELETE /cdn/images, DELETE /cdn/{image_id}, GET /cdn/usage.
import type { Request, Response } from 'express';
import type { DeleteImagesResult, ImageList, ImageTestResult, Usage } from '../../api/response-types.js';
import { Types } from 'mongoose';
import { deleteImage, listImagesPage } from '../../catalog/images.js';
import { planById } from '../../catalog/plans.js';
import { DEFAULT_PROJECT_SLUG, ensureDefaultProject, listProjects, projectImageFilter } from '../../catalog/projects.js';
import { announceImageChange } from '../../catalog/image-changes.js';
import { currentPeriod, readUsage } from '../../catalog/usage.js';
import { ServiceError } from '../../errors.js';
import { currentUser } from '../middleware/auth.js';
import { inputOf } from '../middleware/validate.js';
import { deleteImagesInputs, deleteOneImageInputs, listImagesInputs, listImagesQuery } from '../schemas/images.schemas.js';
import { imageDescription } from '../services/response-bodies.js';
import type { WebDeps } from '../web-deps.js';

export function imageTestController() {
  return (_req: Request, res: Response) => {
    const user = currentUser(res);
    res.json({ valid: true, user_id: user.userId, plan: user.plan } satisfies ImageTestResult);
  };
}

export function listImagesController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const { project, limit = listImagesQuery.properties.limit.default, cursor } = inputOf(res, listImagesInputs).query;
    const projects = await listProjects(deps.catalog, user.userId);
    const slugById = new Map(projects.map((p) => [String(p._id), p.slug]));
    let scope: Record<string, unknown> = { userId: user.userId };
    if (project) {
      const match = projects.find((p) => p.slug === project) ?? (project === DEFAULT_PROJECT_SLUG ? await ensureDefaultProject(deps.catalog, user.userId) : null);
      if (!match) {
        res.json({ images: [], next_cursor: null, has_more: false } satisfies ImageList);
        return;
      }
      scope = projectImageFilter(match);
    }
    if (cursor) {
      if (!Types.ObjectId.isValid(cursor) || String(new Types.ObjectId(cursor)) !== cursor) {
        throw new ServiceError('invalid_parameter', 'cursor is not a valid imageId', { issues: [{ loc: ['query', 'cursor'], msg: 'must be an imageId from a previous page', type: 'value_error' }] });
      }
    }
    const { images: page, hasMore } = await listImagesPage(deps.catalog, scope, limit, cursor ? new Types.ObjectId(cursor) : undefined);
    res.json({
      images: page.map((d) => ({
        imageId: String(d._id),
        public_url: deps.storage.publicUrl(d.storageKey),
        public_id: d.publicId,
        project: d.projectId ? (slugById.get(String(d.projectId)) ?? DEFAULT_PROJECT_SLUG) : DEFAULT_PROJECT_SLUG,
        format: d.format as ImageList['images'][number]['format'],
        width: d.width,
        height: d.height,
        size: d.bytes,
        checksum: d.checksum,
        created_at: new Date(d.createdAt).toISOString(),
        ...imageDescription(d),
      })),
      next_cursor: hasMore && page.length > 0 ? String(page[page.length - 1]._id) : null,
      has_more: hasMore,
    } satisfies ImageList);
  };
}

async function deleteMany(deps: WebDeps, userId: string, ids: readonly string[]): Promise<DeleteImagesResult> {
  const deleted: string[] = [];
  const notFound: string[] = [];
  for (const id of [...new Set(ids)]) {
    const doc = await deleteImage(deps.catalog, deps.storage, userId, id);
    if (!doc) {
      notFound.push(id);
      continue;
    }
    deleted.push(id);
    const change = { imageId: id, userId, publicId: doc.publicId };
    deps.images.forget(change);
    await announceImageChange(deps.redis, change);
  }
  return { deleted, not_found: notFound };
}

export function deleteImagesController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const { imageIds } = inputOf(res, deleteImagesInputs).body;
    res.json(await deleteMany(deps, user.userId, imageIds));
  };
}

export function deleteOneImageController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    const result = await deleteMany(deps, user.userId, [inputOf(res, deleteOneImageInputs).params.image_id]);
    if (result.deleted.length === 0) throw new ServiceError('not_found', 'Image not found');
    res.json(result);
  };
}

export function usageController(deps: WebDeps) {
  return async (_req: Request, res: Response) => {
    const user = currentUser(res);
    await deps.bandwidth.flush(user.userId);
    const usage = await readUsage(deps.catalog, user.userId);
    const plan = planById(user.plan);
    res.json({
      storage_bytes: usage.storageBytes,
      image_count: usage.imageCount,
      derivative_count: usage.derivativeCount,
      derivative_bytes: usage.derivativeBytes,
      bandwidth_bytes: usage.bandwidthBytes,
      transformations: usage.transformations,
      period_start: `${currentPeriod()}-01T00:00:00.000Z`,
      plan: plan.id,
      limits: {
        storage_bytes: plan.storage_bytes,
        bandwidth_bytes_per_month: plan.bandwidth_bytes_per_month,
        transformations_per_month: plan.transformations_per_month,
        max_upload_bytes: Math.min(plan.max_upload_bytes, deps.config.maxUploadBytes),
      },
    } satisfies Usage);
  };
}
