// Listing of the local storage driver: the keys under a folder in the flat key order of object
// stores (UTF-8 bytes), walked lazily so a page reads only the folders it needs.
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

const DEFAULT_LIST_LIMIT = 1000;
const MAX_LIST_LIMIT = 1000;

export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

export function clampLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`list limit must be a positive integer, got ${limit}`);
  return Math.min(limit, MAX_LIST_LIMIT);
}

function isMissingFolder(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Yields keys under `folder` in lexicographic (UTF-8 byte) order, lazily. Folders sort as
 * "name/" so "a-b" comes before everything in "a/", exactly like the flat key order.
 * Symbolic links, the driver's folders (`reserved`, at the top level) and subtrees that cannot
 * match are skipped.
 */
export async function* walkKeys(folder: string, keyPrefix: string, prefix: string, cursor: string, reserved: ReadonlySet<string>): AsyncGenerator<string> {
  let entries: Dirent[];
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch (err) {
    if (isMissingFolder(err)) return;
    throw err;
  }
  const candidates = entries
    .filter((entry) => entry.isFile() || entry.isDirectory())
    .filter((entry) => !(keyPrefix === '' && reserved.has(entry.name)))
    .map((entry) => {
      const sortKey = `${keyPrefix}${entry.name}${entry.isDirectory() ? '/' : ''}`;
      return { entry, sortKey, bytes: Buffer.from(sortKey) };
    })
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes));
  for (const { entry, sortKey } of candidates) {
    if (entry.isDirectory()) {
      if (!sortKey.startsWith(prefix) && !prefix.startsWith(sortKey)) continue;
      // Every key in this subtree sorts before the cursor: nothing to yield there.
      if (cursor && compareUtf8(cursor, sortKey) >= 0 && !cursor.startsWith(sortKey)) continue;
      yield* walkKeys(path.join(folder, entry.name), sortKey, prefix, cursor, reserved);
    } else if (sortKey.startsWith(prefix) && (!cursor || compareUtf8(sortKey, cursor) > 0)) {
      yield sortKey;
    }
  }
}
