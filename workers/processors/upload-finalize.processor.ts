// upload-finalize: the staged bytes become a catalogued original (or the upload is refused and
// nothing remains). Idempotent: a re-run after a crash finds the catalog entry and finishes.
import type { Job } from 'bullmq';
import { baseImageKey, findImage, findImageOfUpload, newImageId, purgeDerivatives, recordUpload } from '../../src/catalog/images.js';
import { originalMetadata, type OriginalEntry } from '../../src/catalog/original-metadata.js';
import { holdStorage, readUsage, releaseStorageHold } from '../../src/catalog/usage.js';
import { ServiceError } from '../../src/errors.js';
import { inspectUpload } from '../../src/imaging/inspect-upload.js';
import { describeImage, type ImagePreview } from '../../src/imaging/preview.js';
import type { UploadFinalizeJobData, UploadFinalizeResult } from '../../src/jobs/job-contract.js';
import { readIfPresent } from '../../src/storage/storage.js';
import type { ProcessorContext } from './processor-context.js';

export function uploadFinalizeProcessor(ctx: ProcessorContext) {
  return async (job: Job<UploadFinalizeJobData, UploadFinalizeResult>): Promise<UploadFinalizeResult> => {
    const data = job.data;
    const { catalog, storage } = ctx;
    const bytes = await readIfPresent(storage, data.stagingKey);
    if (!bytes) {
      // Staging is deleted last: if it is gone, an earlier run finished this upload.
      const done = await findImageOfUpload(catalog, data.userId, data.publicId, data.uploadId);
      if (!done) throw new ServiceError('bad_request', 'The staged upload is gone; please upload again');
      return toResult(done, false);
    }
    // Faces and placeholders, once per version. Started as soon as the bytes are read and
    // awaited only before the catalog write: it runs while the upload is inspected, the quota held
    // and the original written durably, so it adds little to the upload's latency. Best effort: an
    // image the detector or the placeholder encoder cannot handle is still a valid upload (stored
    // without a preview; gravity=face then falls back to attention). For an upload refused below,
    // its work is wasted, bounded like the inspection's (the same pixel limit, the first frame).
    const previewing = ctx.libvips.run(() => describeImage(bytes, data.maxInputPixels)).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
    try {
      // The front door hashed the file as it arrived; a staged object of another size is hashed anew.
      const knownSha256 = bytes.length === data.stagedBytes ? data.stagedSha256 : undefined;
      const info = await ctx.libvips.run(() => inspectUpload(bytes, data.maxInputPixels, knownSha256, ctx.config.maxAnimatedFrames));
      const existing = await findImage(catalog, data.userId, data.publicId);
      let heldBytes = 0;
      if (!existing || existing.uploadId !== data.uploadId) {
        // Held atomically against the quota until the upload's own usage delta is applied below.
        const growth = bytes.length - (existing?.bytes ?? 0);
        if (!(await holdStorage(catalog, data.userId, data.uploadId, growth, data.storageQuotaBytes))) {
          const usage = await readUsage(catalog, data.userId);
          throw new ServiceError('forbidden', `Storage quota exceeded: ${usage.storageBytes + growth} bytes would exceed the plan's ${data.storageQuotaBytes} bytes`);
        }
        heldBytes = Math.max(growth, 0);
      }
      const storageKey = baseImageKey(data.userId, data.publicId, info.extension);
      const entry: OriginalEntry = {
        // The id is fixed before the bytes are stored: the original's metadata names its catalog entry.
        imageId: existing ? String(existing._id) : String(newImageId()),
        createdAt: existing?.createdAt ?? new Date(),
        uploadId: data.uploadId,
        userId: data.userId,
        publicId: data.publicId,
        projectId: data.projectId ?? (existing?.projectId ? String(existing.projectId) : null),
        format: info.format,
        contentType: info.contentType,
        width: info.width,
        height: info.height,
        bytes: bytes.length,
        checksum: info.checksum,
        storageKey,
        preview: null,
      };
      await storage.put(storageKey, bytes, {
        contentType: info.contentType,
        cacheControl: `public, max-age=${ctx.config.unversionedMaxAgeSeconds}, must-revalidate`,
        metadata: originalMetadata(entry),
        sha256: info.checksum,
      });
      const preview = await previewing;
      if (preview instanceof Error) ctx.log.warn({ err: preview }, 'upload preview (faces, placeholders) failed; stored without it');
      const { image, previous, settled } = await recordUpload(catalog, { ...entry, preview: preview instanceof Error ? null : { ...preview, frames: info.frames } }, { existing, heldBytes });
      // Settled: the hold went with the usage delta. Otherwise (a re-run) a hold may be left.
      if (!settled) await releaseStorageHold(catalog, data.userId, data.uploadId);
      if (previous) {
        await ctx.announceImageChange({ imageId: String(image._id), userId: image.userId, publicId: image.publicId });
        // Replaced: old derivatives must never be served again, and a different extension leaves an old object.
        await purgeDerivatives(catalog, storage, previous, image.version);
        if (previous.storageKey !== storageKey) {
          await purgeDerivatives(catalog, storage, { ...previous, storageKey: previous.storageKey });
          await storage.delete(previous.storageKey);
        }
      }
      await storage.delete(data.stagingKey);
      return toResult(image, previous !== null);
    } catch (err) {
      // A retry takes a new hold (and checks the quota again).
      await releaseStorageHold(catalog, data.userId, data.uploadId).catch(() => undefined);
      if (err instanceof ServiceError) await storage.delete(data.stagingKey).catch(() => undefined);
      throw err;
    }
  };
}

function toResult(
  image: { _id: unknown; publicId: string; storageKey: string; bytes: number; contentType: string; format: string; width: number; height: number; checksum: string; projectId: unknown; version: string; preview?: ImagePreview | null },
  replaced: boolean,
): UploadFinalizeResult {
  return {
    version: image.version,
    preview: image.preview ?? null,
    imageId: String(image._id),
    publicId: image.publicId,
    storageKey: image.storageKey,
    size: image.bytes,
    contentType: image.contentType,
    format: image.format,
    width: image.width,
    height: image.height,
    checksum: image.checksum,
    projectId: image.projectId ? String(image.projectId) : null,
    replaced,
  };
}
