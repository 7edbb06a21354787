// Sidecars of the local storage driver: one JSON file per object version under `.meta/`, named
// after the inode of the data file it describes (`.meta/a/b.jpg@<inode>.json`), holding what a
// file system cannot (content type, metadata, cache control, the content etag).
import { createHash } from 'node:crypto';
import path from 'node:path';

export interface Sidecar {
  contentType: string;
  metadata: Record<string, string>;
  cacheControl?: string;
  /** Content etag: the first 128 bits of the bytes' SHA-256, hex. */
  etag: string;
  size: number;
}

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
/** Longest file name segment we append "@<inode>.json" to before hashing it (NAME_MAX is 255 bytes). */
const MAX_PLAIN_SIDECAR_BASE_BYTES = 200;

export const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The etag of stored bytes, from their SHA-256 (hex): SHA-256 runs ~2x faster than MD5 here (SHA extensions). */
export function contentEtag(sha256Hex: string): string {
  return sha256Hex.slice(0, 32);
}

export function sidecarPath(metaRoot: string, key: string, inode: bigint): string {
  const segments = key.split('/');
  const base = segments.pop()!;
  const safeBase = Buffer.byteLength(base) <= MAX_PLAIN_SIDECAR_BASE_BYTES ? base : `#${createHash('sha256').update(base).digest('hex')}`;
  return path.join(metaRoot, ...segments, `${safeBase}@${inode}.json`);
}

/** The sidecar's text parsed; undefined when it is not one (missing fields: the file tells the rest). */
export function parseSidecar(text: string): Sidecar | undefined {
  const parsed = JSON.parse(text) as Partial<Sidecar>;
  const etag = parsed.etag;
  if (typeof etag !== 'string' || typeof parsed.size !== 'number') return undefined;
  return {
    contentType: typeof parsed.contentType === 'string' ? parsed.contentType : DEFAULT_CONTENT_TYPE,
    metadata: parsed.metadata && typeof parsed.metadata === 'object' ? parsed.metadata : {},
    cacheControl: typeof parsed.cacheControl === 'string' ? parsed.cacheControl : undefined,
    etag,
    size: parsed.size,
  };
}
