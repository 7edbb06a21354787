// transform: renders one derivative from a stored original and stores it under its canonical key.
// No catalog round trip on the critical path: the job answers once the bytes are stored, and the
// derivative ledger records and counts them in batches afterwards, checking then that the
// original was not replaced or deleted meanwhile (see derivative-ledger.ts).
import type { Job } from 'bullmq';
import { ServiceError } from '../../src/errors.js';
import { RenderTimeoutError, renderDerivative } from '../../src/imaging/pipeline.js';
import { classifyRenderFailure } from '../../src/imaging/render-failure.js';
import type { TransformJobData, TransformResult } from '../../src/jobs/job-contract.js';
import { notesMetadata } from '../../src/storage/derivative-metadata.js';
import { readIfPresent } from '../../src/storage/storage.js';
import { encoderSettings, type ProcessorContext } from './processor-context.js';

export function transformProcessor(ctx: ProcessorContext) {
  const settings = encoderSettings(ctx.config);
  return async (job: Job<TransformJobData, TransformResult>): Promise<TransformResult> => {
    const data = job.data;
    const source = await readIfPresent(ctx.storage, data.sourceKey);
    if (!source) throw new ServiceError('not_found', 'The image does not exist');
    const watermark = data.plan.watermark ? await readIfPresent(ctx.storage, data.plan.watermark.sourceKey) : undefined;
    if (data.plan.watermark && !watermark) throw new ServiceError('invalid_parameter', 'The watermark image no longer exists');
    let rendered;
    try {
      const decodedSource = ctx.decodedSources?.lookupFor(data.sourceKey, data.version, source);
      rendered = await ctx.libvips.run(() => renderDerivative(source, data.plan, settings, { watermark: watermark ?? undefined, decodedSource }));
    } catch (err) {
      // Not retried (a retry would take as long): the caller is told what to change.
      if (err instanceof RenderTimeoutError) {
        throw new ServiceError('invalid_parameter', `The transformation took longer than the ${err.seconds} s render limit and was stopped; ask for a smaller output or lighter effects (blur, sharp, opt, PNG)`);
      }
      // Internal failures (out of memory, transient libvips errors) go back to BullMQ, which
      // retries them; after the last attempt the caller gets 503. Input that cannot be rendered
      // is 422 at once (the guard makes it final).
      if (err instanceof ServiceError) throw err;
      if ((await classifyRenderFailure(err, source, settings.maxInputPixels)) === 'internal') throw err;
      const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new ServiceError('invalid_parameter', `The image could not be processed: ${reason}`);
    }
    // Re-creatable from the original, so not flushed to disk before it becomes visible.
    const stored = await ctx.storage.put(data.derivativeKey, rendered.buffer, {
      contentType: rendered.contentType,
      cacheControl: 'public, max-age=31536000, immutable',
      durable: false,
      metadata: notesMetadata(rendered.notes),
    });
    ctx.derivatives.add({
      key: data.derivativeKey,
      userId: data.userId,
      imageId: data.imageId,
      version: data.version,
      bytes: rendered.buffer.length,
      contentType: rendered.contentType,
      origin: data.origin,
      quality: rendered.notes.quality,
    });
    return {
      key: data.derivativeKey,
      size: rendered.buffer.length,
      contentType: rendered.contentType,
      width: rendered.width,
      height: rendered.height,
      etag: stored.etag,
      updatedAt: stored.updatedAt.toISOString(),
      metadata: stored.metadata,
    };
  };
}
