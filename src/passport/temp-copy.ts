// Temporary copies of an input for libvips load options that only a file name can carry
// (`photo.jpg[shrink=2]`: image.ts, regionAtDctScale). Each copy lives for one decode and is
// deleted after it; a process killed meanwhile leaves its copy, which the next passport worker
// to start removes (sweepStaleTempCopies).
import { randomUUID } from 'node:crypto';
import { access, constants, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const PREFIX = 'pictor-region-';

/** A copy older than this belongs to no decode in progress (one takes well under a second). */
export const STALE_TEMP_COPY_MS = 10 * 60_000;

/**
 * Runs `use` with the path of a temporary copy of `bytes` and deletes the copy after it; null
 * (without running `use`) when the copy cannot be written: no room, no temporary directory.
 */
export async function withTempCopy<T>(bytes: Buffer, extension: string, use: (file: string) => Promise<T>): Promise<T | null> {
  const file = path.join(tmpdir(), `${PREFIX}${randomUUID()}.${extension}`);
  try {
    await writeFile(file, bytes);
  } catch {
    await rm(file, { force: true }).catch(() => undefined);
    return null;
  }
  try {
    return await use(file);
  } finally {
    await rm(file, { force: true }).catch(() => undefined);
  }
}

/** Removes copies left by processes killed during a decode; returns how many. */
export async function sweepStaleTempCopies(maxAgeMs = STALE_TEMP_COPY_MS, now = Date.now()): Promise<number> {
  const dir = tmpdir();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const file = path.join(dir, name);
    try {
      if (now - (await stat(file)).mtimeMs < maxAgeMs) continue;
      await rm(file, { force: true });
      removed++;
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}

/** The temporary directory when copies cannot be written there (the worker warns once at start), else null. */
export async function unwritableTempDir(): Promise<string | null> {
  const dir = tmpdir();
  try {
    await access(dir, constants.W_OK);
    return null;
  } catch {
    return dir;
  }
}
