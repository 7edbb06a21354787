// transform: renders one derivative from a stored original and stores it under its canonical key.
// Catalog work is kept off the critical path where it can be: no check before rendering (a
// replaced or deleted original is caught by the check after storing), and the check and the
// record run together.
import type { Job } from 'bullmq';
import { Types } from 'mongoose';
import { countDerivative, recordDerivative, unrecordDerivative } from '../../src/catalog/images.js';
import { ServiceError } from '../../src/errors.js';
import { renderDerivative } from '../../src/imaging/pipeline.js';
import type { TransformJobData, TransformResult } from '../../src/jobs/job-types.js';
import { readIfPresent } from '../../src/storage/storage.js';
import type { ProcessorContext } from './processor-context.js';

export function transformProcessor(ctx: ProcessorContext) {
  const settings = {
    avifEffort: ctx.config.avifEffort,
    webpEffort: ctx.config.webpEffort,
    maxInputPixels: ctx.config.maxInputPixels,
  };
  const currentVersion = (data: TransformJobData) =>
    ctx.catalog.images.exists({ _id: new Types.ObjectId(data.imageId), userId: data.userId, version: data.version });
  return async (job: Job<TransformJobData, TransformResult>): Promise<TransformResult> => {
    const data = job.data;
    const source = await readIfPresent(ctx.storage, data.sourceKey);
    if (!source) throw new ServiceError('not_found', 'The image does not exist');
    let rendered;
    try {
      rendered = await ctx.libvips.run(() => renderDerivative(source, data.plan, settings));
    } catch (err) {
      const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new ServiceError('invalid_parameter', `The image could not be processed: ${reason}`);
    }
    // Re-creatable from the original, so not flushed to disk before it becomes visible.
    const stored = await ctx.storage.put(data.derivativeKey, rendered.buffer, {
      contentType: rendered.contentType,
      cacheControl: 'public, max-age=31536000, immutable',
      durable: false,
    });
    // The original may have been replaced or deleted while we rendered (the bytes read may even
    // be the replacement's): checked after storing, so a replacement's purge cannot miss what we
    // stored. The record is made meanwhile and taken back if the check fails.
    const [current, created] = await Promise.all([
      currentVersion(data),
      recordDerivative(ctx.catalog, {
        key: data.derivativeKey,
        userId: data.userId,
        imageId: data.imageId,
        bytes: rendered.buffer.length,
        contentType: rendered.contentType,
        origin: data.origin,
      }),
    ]);
    if (!current) {
      if (created) await unrecordDerivative(ctx.catalog, data.derivativeKey);
      await ctx.storage.delete(data.derivativeKey);
      throw new ServiceError('not_found', 'The image was replaced or deleted during processing');
    }
    if (created) await countDerivative(ctx.catalog, data.userId);
    return {
      key: data.derivativeKey,
      size: rendered.buffer.length,
      contentType: rendered.contentType,
      width: rendered.width,
      height: rendered.height,
      etag: stored.etag,
      updatedAt: stored.updatedAt.toISOString(),
    };
  };
}
