// The transform pipeline shared by set A (/transform) and set B (/image/…, /cdn/{id}):
// resolve the original → canonical derivative key → answer from storage, or run one job.
import { createHash } from 'node:crypto';
import type { ImageDoc } from '../../catalog/models/image.model.js';
import { ServiceError } from '../../errors.js';
import { derivativeKey, formatFromExtension, resolvePlan, type NegotiationContext, type PathSet, type TransformPlan, type TransformRequest } from '../../imaging/params.js';
import { QUEUE_NAMES } from '../../jobs/queue-names.js';
import type { TransformJobData } from '../../jobs/job-types.js';
import type { StoredObject } from '../../storage/storage.js';
import type { WebDeps } from '../web-deps.js';

export interface BaseImageRef {
  userId: string;
  publicId: string;
  extension: string;
}

/** Parses `{CDN_URL}/<user_id>/images/<public_id>.<ext>`; null when src is not such a URL. */
export function parseBaseImageUrl(src: string, cdnUrl: string): BaseImageRef | null {
  let url: URL;
  let cdn: URL;
  try {
    url = new URL(src);
    cdn = new URL(cdnUrl);
  } catch {
    return null;
  }
  if (url.origin !== cdn.origin || url.search !== '' || url.hash !== '') return null;
  const cdnPath = cdn.pathname.replace(/\/+$/, '');
  if (!url.pathname.startsWith(cdnPath + '/')) return null;
  let rest: string[];
  try {
    rest = url.pathname.slice(cdnPath.length + 1).split('/').map(decodeURIComponent);
  } catch {
    return null;
  }
  if (rest.length < 3 || rest[1] !== 'images') return null;
  const userId = rest[0];
  const file = rest.slice(2).join('/');
  const dot = file.lastIndexOf('.');
  if (dot <= 0) return null;
  const extension = file.slice(dot + 1).toLowerCase();
  if (!formatFromExtension(extension) || extension === 'jpeg') return null;
  return { userId, publicId: file.slice(0, dot), extension };
}

export interface PreparedTransform {
  image: ImageDoc;
  plan: TransformPlan;
  key: string;
  dependsOnAccept: boolean;
}

export interface DerivativeOutcome {
  key: string;
  size: number;
  contentType: string;
  /** True when answered from storage without running a job. */
  cached: boolean;
  /** The stored object when it is already known (cache hit): the responder then skips its stat. */
  object?: StoredObject;
}

/** Stored with every derivative by the transform worker. */
const DERIVATIVE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export function negotiationFor(image: ImageDoc, accept: string, set: PathSet, pathFormat?: NegotiationContext['pathFormat']): NegotiationContext {
  return {
    accept,
    sourceFormat: formatFromExtension(image.format) ?? 'jpeg',
    preferWebpWhenUnsure: set === 'A',
    pathFormat,
  };
}

export async function findOwnedImageByRef(deps: WebDeps, userId: string, ref: BaseImageRef): Promise<ImageDoc> {
  // Another user's image and a missing one get the same answer.
  const image = ref.userId === userId ? await deps.images.byRef(userId, ref.publicId) : null;
  if (!image || image.storageKey.split('.').pop() !== ref.extension) throw new ServiceError('not_found', 'Image not found');
  return image;
}

export async function findImageById(deps: WebDeps, imageId: string, userId?: string): Promise<ImageDoc> {
  const image = await deps.images.byId(imageId, userId);
  if (!image) throw new ServiceError('not_found', 'Image not found');
  return image;
}

export function prepareTransform(
  image: ImageDoc,
  set: PathSet,
  request: TransformRequest,
  ctx: NegotiationContext,
  /** Route-specific limits applied to the plan before its key is derived (demo size cap). */
  adjust?: (plan: TransformPlan) => void,
): PreparedTransform {
  const { plan, dependsOnAccept } = resolvePlan(set, request, ctx);
  adjust?.(plan);
  return { image, plan, key: derivativeKey(image.storageKey, image.version, plan), dependsOnAccept };
}

/** The transform job of a prepared request; its id is a hash of the derivative key (single-flight). */
export function transformJob(prepared: PreparedTransform, origin: 'api' | 'public'): { jobId: string; data: TransformJobData } {
  return {
    jobId: 'tr-' + createHash('sha256').update(prepared.key).digest('hex').slice(0, 40),
    data: {
      userId: prepared.image.userId,
      imageId: String(prepared.image._id),
      sourceKey: prepared.image.storageKey,
      version: prepared.image.version,
      derivativeKey: prepared.key,
      plan: prepared.plan,
      origin,
    },
  };
}

/** Answers from storage when the derivative exists; otherwise runs (or joins) its one job. */
export async function ensureDerivative(deps: WebDeps, prepared: PreparedTransform, origin: 'api' | 'public', priority?: number): Promise<DerivativeOutcome> {
  const existing = await deps.derivatives.stat(prepared.key);
  if (existing) return { key: prepared.key, size: existing.size, contentType: existing.contentType, cached: true, object: existing };
  const { jobId, data } = transformJob(prepared, origin);
  const result = await deps.jobs.run(QUEUE_NAMES.transform, data, { jobId, priority });
  // The worker reports what it stored: the responder needs no stat.
  const object: StoredObject = { key: result.key, size: result.size, contentType: result.contentType, etag: result.etag, updatedAt: new Date(result.updatedAt), metadata: {}, cacheControl: DERIVATIVE_CACHE_CONTROL };
  deps.derivatives.remember(object);
  return { key: result.key, size: result.size, contentType: result.contentType, cached: false, object };
}
