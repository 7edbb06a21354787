// The answers built from job results, typed by the response schemas (src/api/responses.schemas.ts, types inferred in src/api/response-types.ts) so a
// body cannot drift from its documented shape; built in one place so the synchronous answer and
// the async job status (GET /jobs/{id}) are the same document.
import type { CdnUploadResult, ImageDescription, JobAccepted, TransformResult, UploadResultA } from '../../api/response-types.js';
import type { ImagePreview } from '../../imaging/preview.js';
import type { TransformResult as TransformJobResult, UploadFinalizeResult } from '../../jobs/job-contract.js';
import type { Storage } from '../../storage/storage.js';

/**
 * The version and what the finalize job learnt about an original: in upload, listing and
 * srcset answers. Null placeholders for originals stored before (or where it failed).
 */
export function imageDescription(image: { version: string; preview?: ImagePreview | null }): ImageDescription {
  const p = image.preview ?? null;
  return {
    version: image.version,
    thumbhash: p?.thumbhash ?? null,
    dominant_color: p?.dominantColor ?? null,
    lqip: p?.lqip || null,
    faces: p ? p.faces.map((f) => ({ x: f.x, y: f.y, w: f.w, h: f.h })) : [],
  };
}

export function uploadBody(storage: Storage, result: UploadFinalizeResult, api: 'A' | 'B', projectSlug: string | null): UploadResultA | CdnUploadResult {
  const url = storage.publicUrl(result.storageKey);
  const base: UploadResultA = { success: true, error: '', public_url: url, cdn_url: url, size: result.size, content_type: result.contentType, ...imageDescription(result) };
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

export function transformBody(storage: Storage, result: Pick<TransformJobResult, 'key' | 'size' | 'contentType'>): TransformResult {
  return { success: true, error: '', public_url: storage.publicUrl(result.key), size: result.size, content_type: result.contentType };
}

/** The 202 of an async request: where its status will be. */
export function jobAccepted(baseUrl: string, jobId: string): JobAccepted {
  return { job_id: jobId, state: 'queued', status_url: `${baseUrl}/jobs/${jobId}` };
}
