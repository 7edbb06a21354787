// The one home of the calls that make a write durable: a file's fsync/fdatasync and a directory's
// fsync (a file's own fsync does not make its creation, rename or deletion durable; its
// directory's does). Every write an acknowledgement depends on — catalog journal and snapshots,
// stored originals and their sidecars, job records, staged uploads — reaches the disk through
// `durableFiles`. It is a mutable object so that a test can substitute the calls: the power-cut
// tests replace them with ones that also record what a power cut would keep.
import fsp, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';

export interface DurableFiles {
  /** open(2) of a file a durable write goes to (a test can make its writes short or failing). */
  open(file: string, flags: string | number, mode?: number): Promise<FileHandle>;
  /** fsync(2): the file's bytes and metadata are on disk. */
  sync(handle: FileHandle): Promise<void>;
  /** fdatasync(2): the file's bytes (and its size) are on disk. */
  datasync(handle: FileHandle): Promise<void>;
  /** fsync(2) of a directory: the creations, renames and deletions in it so far are on disk. */
  syncDirectory(dir: string): Promise<void>;
}

export const durableFiles: DurableFiles = {
  open: (file, flags, mode) => fsp.open(file, flags, mode),
  sync: (handle) => handle.sync(),
  datasync: (handle) => handle.datasync(),
  async syncDirectory(dir) {
    const handle = await fsp.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

/** Writes all of `data` at the handle's position: a short write (a nearly full disk) is continued, never ignored. */
export async function writeAll(handle: FileHandle, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset);
    if (bytesWritten === 0) throw new Error(`write made no progress after ${offset} of ${data.length} bytes`);
    offset += bytesWritten;
  }
}

/** Creates (or replaces) `file` with `data`, synced; its directory entry is made durable by the caller (renameDurably or syncDirectory). */
export async function writeFileSynced(file: string, data: Buffer, mode = 0o600): Promise<void> {
  const handle = await durableFiles.open(file, 'w', mode);
  try {
    await writeAll(handle, data);
    await durableFiles.sync(handle);
  } finally {
    await handle.close();
  }
}

/** rename(2) within one folder, then the folder is synced: the new name survives a power cut. */
export async function renameDurably(from: string, to: string): Promise<void> {
  await fsp.rename(from, to);
  await durableFiles.syncDirectory(path.dirname(to));
}

/**
 * mkdir -p whose new folders survive a power cut: each created folder's parent is synced (a
 * folder's entry lives in its parent). `firstCreated` is what mkdir({recursive}) returned.
 */
export async function syncCreatedFolders(firstCreated: string | undefined, deepest: string): Promise<void> {
  if (firstCreated === undefined) return;
  let folder = path.resolve(deepest);
  const top = path.resolve(firstCreated);
  const parents: string[] = [];
  for (;;) {
    parents.push(path.dirname(folder));
    if (folder === top || folder === path.dirname(folder)) break;
    folder = path.dirname(folder);
  }
  for (const parent of parents.reverse()) await durableFiles.syncDirectory(parent);
}

/** mkdir -p with the new folders made durable. */
export async function mkdirDurably(dir: string, mode?: number): Promise<void> {
  await syncCreatedFolders(await fsp.mkdir(dir, { recursive: true, mode }), dir);
}
