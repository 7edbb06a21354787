// Response bodies built in one place, so the synchronous answer and the async job status
// (GET /jobs/{id}) are the same document.
import type { TransformResult, UploadFinalizeResult } from '../../jobs/job-types.js';
import type { Storage } from '../../storage/storage.js';

export function uploadBody(storage: Storage, result: UploadFinalizeResult, api: 'A' | 'B', projectSlug: string | null) {
  const url = storage.publicUrl(result.storageKey);
  const base = { success: true, error: '', public_url: url, cdn_url: url, size: result.size, content_type: result.contentType };
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
