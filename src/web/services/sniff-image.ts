// Decides an upload's type from its bytes (magic numbers), never from its name or declared type.
import { fileTypeFromBuffer } from 'file-type';
import { ServiceError } from '../../errors.js';
import { ACCEPTED_UPLOAD_MIME } from '../../imaging/params.js';

export const SNIFF_BYTES = 4100;

export async function sniffImageType(head: Buffer): Promise<string> {
  // A parser error on hostile bytes is an unknown type, not a failure of ours.
  const kind = await fileTypeFromBuffer(head.subarray(0, SNIFF_BYTES)).catch(() => undefined);
  if (!kind || !(ACCEPTED_UPLOAD_MIME as readonly string[]).includes(kind.mime)) {
    throw new ServiceError('unsupported_type', `Unsupported file type${kind ? ` (${kind.mime})` : ''}: JPEG, PNG, WebP or AVIF expected`);
  }
  return kind.mime;
}
