// transform: renders one derivative from a stored original and stores it under its canonical key.
import type { Job } from 'bullmq';
import { Types } from 'mongoose';
import { recordDerivative } from '../../src/catalog/images.js';
import { ServiceError } from '../../src/errors.js';
import { renderDerivative } from '../../src/imaging/pipeline.js';
import type { TransformJobData, TransformResult } from '../../src/jobs/job-types.js';
import { StorageNotFoundError } from '../../src/storage/storage.js';
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
    // The version check and the read are independent round trips: run them together.
    const [current, read] = await Promise.allSettled([currentVersion(data), ctx.storage.read(data.sourceKey)]);
    if (current.status === 'rejected') throw current.reason;
    if (!current.value) throw new ServiceError('not_found', 'The image does not exist (or was replaced)');
    if (read.status === 'rejected') {
      if (read.reason instanceof StorageNotFoundError) throw new ServiceError('not_found', 'The image does not exist');
      throw read.reason;
    }
    const source: Buffer = read.value;
    let rendered;
    try {
      rendered = await renderDerivative(source, data.plan, settings);
    } catch (err) {
      const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new ServiceError('invalid_parameter', `The image could not be processed: ${reason}`);
    }
    const stored = await ctx.storage.put(data.derivativeKey, rendered.buffer, {
      contentType: rendered.contentType,
      cacheControl: 'public, max-age=31536000, immutable',
    });
    // The original may have been replaced or deleted while we rendered: never leave a derivative behind.
    if (!(await currentVersion(data))) {
      await ctx.storage.delete(data.derivativeKey);
      throw new ServiceError('not_found', 'The image was replaced or deleted during processing');
    }
    await recordDerivative(ctx.catalog, {
      key: data.derivativeKey,
      userId: data.userId,
      imageId: data.imageId,
      bytes: rendered.buffer.length,
      contentType: rendered.contentType,
      origin: data.origin,
    });
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
