// What a stored original carries about itself (local sidecar metadata, GCS object metadata): enough
// to rebuild its catalog entry when the catalog lost it, so the start-up reconcile can re-adopt an
// original instead of deleting or ignoring it. Values are strings (GCS custom metadata is).
import { Types } from 'mongoose';
import { FORMAT_EXTENSION, FORMAT_MIME, type OutputFormat } from '../imaging/params.js';
import type { StoredObject } from '../storage/storage.js';
import { baseImageKey, type RecordUploadInput } from './images.js';

/** Metadata layout version; a reader refuses layouts it does not know. */
const LAYOUT = '1';

export interface OriginalEntry extends RecordUploadInput {
  imageId: string;
  /** When the image was first created (kept across replacements). */
  createdAt: Date;
}

export function originalMetadata(entry: OriginalEntry): Record<string, string> {
  return {
    pictorOriginal: LAYOUT,
    imageId: entry.imageId,
    userId: entry.userId,
    publicId: entry.publicId,
    projectId: entry.projectId ?? '',
    uploadId: entry.uploadId,
    format: entry.format,
    contentType: entry.contentType,
    width: String(entry.width),
    height: String(entry.height),
    bytes: String(entry.bytes),
    checksum: entry.checksum,
    createdAt: entry.createdAt.toISOString(),
  };
}

export type ParsedOriginal = { ok: true; entry: OriginalEntry } | { ok: false; reason: string };

const POSITIVE_INT = /^[1-9]\d{0,15}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * The catalog entry an original's metadata describes, checked against the object itself (its key
 * and size); the caller checks the checksum against the bytes. A reason when it cannot be trusted.
 */
export function parseOriginalMetadata(object: Pick<StoredObject, 'key' | 'size' | 'metadata'>): ParsedOriginal {
  const m = object.metadata ?? {};
  if (m.pictorOriginal === undefined) return { ok: false, reason: 'no rebuild metadata (stored before it existed, or not stored by Pictor)' };
  if (m.pictorOriginal !== LAYOUT) return { ok: false, reason: `unknown metadata layout "${m.pictorOriginal}"` };
  const missing = ['imageId', 'userId', 'publicId', 'uploadId', 'format', 'contentType', 'width', 'height', 'bytes', 'checksum', 'createdAt'].filter(
    (name) => typeof m[name] !== 'string' || m[name] === '',
  );
  if (missing.length > 0) return { ok: false, reason: `metadata lacks ${missing.join(', ')}` };
  if (!Types.ObjectId.isValid(m.imageId) || String(new Types.ObjectId(m.imageId)) !== m.imageId) return { ok: false, reason: 'imageId is not an ObjectId' };
  if (m.projectId && !Types.ObjectId.isValid(m.projectId)) return { ok: false, reason: 'projectId is not an ObjectId' };
  const format = m.format as OutputFormat;
  if (!(format in FORMAT_EXTENSION) || FORMAT_MIME[format] !== m.contentType) return { ok: false, reason: `format "${m.format}" / "${m.contentType}" unknown` };
  if (![m.width, m.height, m.bytes].every((v) => POSITIVE_INT.test(v))) return { ok: false, reason: 'width, height or bytes is not a positive integer' };
  if (!SHA256_HEX.test(m.checksum)) return { ok: false, reason: 'checksum is not a SHA-256' };
  const createdAt = new Date(m.createdAt);
  if (Number.isNaN(createdAt.getTime())) return { ok: false, reason: 'createdAt is not a date' };
  const expectedKey = baseImageKey(m.userId, m.publicId, FORMAT_EXTENSION[format]);
  if (expectedKey !== object.key) return { ok: false, reason: `metadata names ${expectedKey}, not this key` };
  if (Number(m.bytes) !== object.size) return { ok: false, reason: `metadata says ${m.bytes} bytes, the object has ${object.size}` };
  return {
    ok: true,
    entry: {
      imageId: m.imageId,
      userId: m.userId,
      publicId: m.publicId,
      projectId: m.projectId || null,
      uploadId: m.uploadId,
      format,
      contentType: m.contentType,
      width: Number(m.width),
      height: Number(m.height),
      bytes: Number(m.bytes),
      checksum: m.checksum,
      storageKey: object.key,
      createdAt,
    },
  };
}
