// The transform pipeline shared by set A (/transform) and set B (/image/…, /cdn/{id}):
// resolve the original → canonical derivative key → answer from storage, or run one job.
import { createHash } from 'node:crypto';
import type { DerivativeOrigin } from '../../catalog/models/derivative.model.js';
import type { ImageDoc } from '../../catalog/models/image.model.js';
import { ServiceError } from '../../errors.js';
import { outputSize } from '../../imaging/output-size.js';
import { derivativeKey, formatFromExtension, parseCrop, resolvePlan, type CropRect, type NegotiationContext, type PathSet, type TransformPlan, type TransformRequest, type WatermarkSource } from '../../imaging/params.js';
import { dependOn, expectHit, type Noted } from './hit-memo.js';
import { presetBook } from './presets.js';
import { QUEUE_NAMES, type TransformJobData } from '../../jobs/job-contract.js';
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
  // Dot segments and encoded separators name some other path than the one a prefix check saw.
  if (rest.some((segment) => segment === '' || segment === '.' || segment === '..' || /[/\\]/.test(segment))) return null;
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
  /** Every image document the plan was made from (the image, a watermark's image). */
  sources: ImageDoc[];
  plan: TransformPlan;
  key: string;
  dependsOnAccept: boolean;
  /** The URL named the original's version (`v`): its answer can never change, so it is immutable. */
  versioned: boolean;
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

export interface PrepareOptions {
  /** Names of the parameters the caller really sent (the rest are schema defaults; presets beat those). */
  given: Iterable<string>;
  /** Keyless routes: dpr never enlarges beyond the original. */
  keyless?: boolean;
  /** Route-specific limits applied to the plan before its key is derived (demo size cap). */
  adjust?: (plan: TransformPlan) => void;
}

function cropOutside(image: ImageDoc, crop: CropRect): boolean {
  return crop.width < 1 || crop.height < 1 || crop.left + crop.width > image.width || crop.top + crop.height > image.height;
}

/** The watermark's original: an image of the same owner. */
async function watermarkSource(deps: WebDeps, image: ImageDoc, request: TransformRequest): Promise<{ source: WatermarkSource; mark: ImageDoc } | undefined> {
  if (request.wm === undefined) return undefined;
  const mark = await deps.images.byId(request.wm, image.userId);
  if (!mark || mark.userId !== image.userId) {
    throw new ServiceError('invalid_parameter', 'wm must be the imageId of another image of yours', {
      issues: [{ loc: ['query', 'wm'], msg: 'no image of this owner has this imageId', type: 'value_error' }],
    });
  }
  return { mark, source: { imageId: String(mark._id), sourceKey: mark.storageKey, version: mark.version } };
}

/** The output's size is known from the original's and the plan: too large a render is refused before any decoding. */
function assertOutputWithin(image: ImageDoc, plan: TransformPlan, maxPixels: number): void {
  const { width, height } = outputSize(image, plan);
  if (width * height <= maxPixels) return;
  throw new ServiceError('invalid_parameter', `The output would be ${width}×${height} = ${width * height} pixels; the maximum is ${maxPixels} (MAX_OUTPUT_PIXELS); ask for a smaller w, h, dpr or pad`);
}

export async function prepareTransform(
  deps: WebDeps,
  image: ImageDoc,
  set: PathSet,
  query: TransformRequest,
  ctx: NegotiationContext,
  options: PrepareOptions,
): Promise<PreparedTransform> {
  const request = presetBook(deps.config).expand(query, options.given);
  if (request.v !== undefined && request.v !== image.version) {
    // An old versioned URL must never show the new picture under an immutable answer.
    throw new ServiceError('not_found', `Version ${request.v} of this image was replaced; ask for its current URL`);
  }
  if (request.crop !== undefined && cropOutside(image, parseCrop(request.crop))) {
    throw new ServiceError('bad_request', `crop ${request.crop} lies outside the ${image.width}×${image.height} image`);
  }
  const watermark = await watermarkSource(deps, image, request);
  const { plan, dependsOnAccept } = resolvePlan(set, request, ctx, {
    watermark: watermark?.source,
    dprCapSource: options.keyless ? { width: image.width, height: image.height } : undefined,
    source: { width: image.width, height: image.height, faces: image.preview?.faces, frames: image.preview?.frames },
  });
  options.adjust?.(plan);
  assertOutputWithin(image, plan, deps.config.maxOutputPixels);
  return { image, sources: watermark ? [image, watermark.mark] : [image], plan, key: derivativeKey(image.storageKey, image.version, plan), dependsOnAccept, versioned: request.v !== undefined };
}

/** The hit path may answer this transform again while its image documents are unchanged. */
export function expectDerivativeHit(deps: WebDeps, res: Noted, prepared: PreparedTransform): void {
  expectHit(res);
  for (const doc of prepared.sources) dependOn(res, () => deps.images.holds(doc));
}

/** Cache-Control of a derivative answer: immutable only when its URL names the version. */
export function derivativeCacheControl(deps: WebDeps, prepared: PreparedTransform): string {
  return prepared.versioned ? DERIVATIVE_CACHE_CONTROL : revalidatedCacheControl(deps);
}

/** Answers that can change (unversioned URLs, originals): cacheable briefly, then revalidated with the ETag. */
export function revalidatedCacheControl(deps: Pick<WebDeps, 'config'>): string {
  return `public, max-age=${deps.config.unversionedMaxAgeSeconds}, must-revalidate`;
}

/** The transform job of a prepared request; its id is a hash of the derivative key (single-flight). */
export function transformJob(prepared: PreparedTransform, origin: DerivativeOrigin): { jobId: string; data: TransformJobData } {
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
export async function ensureDerivative(deps: WebDeps, prepared: PreparedTransform, origin: DerivativeOrigin, priority?: number): Promise<DerivativeOutcome> {
  const existing = await deps.derivatives.stat(prepared.key);
  if (existing) return { key: prepared.key, size: existing.size, contentType: existing.contentType, cached: true, object: existing };
  await deps.limits.assertMayTransform(prepared.image.userId);
  const { jobId, data } = transformJob(prepared, origin);
  const result = await deps.jobs.run(QUEUE_NAMES.transform, data, { jobId, priority });
  // The worker reports what it stored: the responder needs no stat.
  const object: StoredObject = { key: result.key, size: result.size, contentType: result.contentType, etag: result.etag, updatedAt: new Date(result.updatedAt), metadata: result.metadata ?? {}, cacheControl: DERIVATIVE_CACHE_CONTROL };
  deps.derivatives.remember(object);
  return { key: result.key, size: result.size, contentType: result.contentType, cached: false, object };
}
