// Response bodies built in one place, so the synchronous answer and the async job status
// (GET /jobs/{id}) are the same document.
import type { TransformResult, UploadFinalizeResult } from '../../jobs/job-contract.js';
import type { ImagePreview } from '../../imaging/preview.js';
import type { Storage } from '../../storage/storage.js';

/**
 * The version and what the finalize job learnt about an original: in upload, listing and
 * srcset answers. Null placeholders for originals stored before (or where it failed).
 */
export function imageDescription(image: { version: string; preview?: ImagePreview | null }) {
  const p = image.preview ?? null;
  return {
    version: image.version,
    thumbhash: p?.thumbhash ?? null,
    dominant_color: p?.dominantColor ?? null,
    lqip: p?.lqip || null,
    faces: p ? p.faces.map((f) => ({ x: f.x, y: f.y, w: f.w, h: f.h })) : [],
  };
}

export function uploadBody(storage: Storage, result: UploadFinalizeResult, api: 'A' | 'B', projectSlug: string | null) {
  const url = storage.publicUrl(result.storageKey);
  const base = { success: true, error: '', public_url: url, cdn_url: url, size: result.size, content_type: result.contentType, ...imageDescription(result) };
  if (api === 'A') return base;
  return {
    ...base,
    imageId: result.imageId,
    project: projectSlug ?? 'default',
    public_id: result.publicId,
    width: result.width,
    height: result.height,
    checksum: result.checksum,
  };
}

export function transformBody(storage: Storage, result: Pick<TransformResult, 'key' | 'size' | 'contentType'>) {
  return { success: true, error: '', public_url: storage.publicUrl(result.key), size: result.size, content_type: result.contentType };
}
