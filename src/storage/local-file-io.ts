// The small file operations of the local storage driver, in two flavours. `threadPool` is Node's
// fs/promises: every call is a round trip through libuv's thread pool. `direct` makes the same
// system calls on the calling thread. Measured on the 2-core VM of scripts/bench: an fs/promises
// call costs ~36 µs of CPU against ~8 µs for the direct call, and each round trip wakes a pool
// thread and then the event loop, which at 10-20 calls per transform showed as ~1 ms of the
// front door's and the worker's time per cache miss. Direct calls block the event loop for the
// length of one system call on a local disk; bodies above DIRECT_MAX_BYTES (and streams, which
// the driver writes itself) stay on the thread pool, and so does every write: each is fsynced, and
// an fsync waits for the disk.
import fs, { constants as fsConstants, type BigIntStats } from 'node:fs';
import fsp from 'node:fs/promises';
import { promisify } from 'node:util';
import { durableFiles, writeAll } from '../durable-files.js';

/** Largest body read or written with direct calls (1 MiB: ~0.1-0.3 ms on a local disk). */
export const DIRECT_MAX_BYTES = 1024 * 1024;
const readFd = promisify(fs.readFile) as (fd: number) => Promise<Buffer>;

export interface WrittenFile {
  size: number;
  inode: bigint;
  modifiedAt: Date;
}

export interface LocalFileIo {
  realpath(file: string): Promise<string>;
  lstat(file: string): Promise<BigIntStats>;
  readText(file: string): Promise<string>;
  rename(from: string, to: string): Promise<void>;
  /** mkdir -p; returns the first folder it created (undefined when all existed). */
  mkdirp(folder: string): Promise<string | undefined>;
  /** rm -f of one file. */
  remove(file: string): Promise<void>;
  /** The whole file, opened without following a link in its last component; null when not a regular file. */
  readRegularFile(file: string): Promise<Buffer | null>;
  /** Creates `file` (never overwrites) with `bytes`, fsynced; described (size, inode, mtime) when asked. */
  writeNew(file: string, bytes: Buffer, describe: boolean): Promise<WrittenFile | undefined>;
}

/** What the sidecar and etag need of a file just written. */
export function describeWritten(size: number, info: BigIntStats): WrittenFile {
  return { size, inode: info.ino, modifiedAt: new Date(Number(info.mtimeMs)) };
}

const READ_NOFOLLOW = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0);

export const threadPoolIo: LocalFileIo = {
  realpath: (file) => fsp.realpath(file),
  lstat: (file) => fsp.lstat(file, { bigint: true }),
  readText: (file) => fsp.readFile(file, 'utf8'),
  rename: (from, to) => fsp.rename(from, to),
  mkdirp: (folder) => fsp.mkdir(folder, { recursive: true }),
  remove: (file) => fsp.rm(file, { force: true }),
  async readRegularFile(file) {
    const handle = await fsp.open(file, READ_NOFOLLOW);
    try {
      if (!(await handle.stat()).isFile()) return null;
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  },
  async writeNew(file, bytes, describe) {
    const handle = await durableFiles.open(file, 'wx', 0o644);
    try {
      await writeAll(handle, bytes);
      await durableFiles.sync(handle);
      if (!describe) return undefined;
      return describeWritten(bytes.length, await handle.stat({ bigint: true }));
    } finally {
      await handle.close();
    }
  },
};

export const directIo: LocalFileIo = {
  realpath: async (file) => fs.realpathSync.native(file),
  lstat: async (file) => fs.lstatSync(file, { bigint: true }),
  readText: async (file) => fs.readFileSync(file, 'utf8'),
  rename: async (from, to) => fs.renameSync(from, to),
  mkdirp: async (folder) => fs.mkdirSync(folder, { recursive: true }),
  remove: async (file) => fs.rmSync(file, { force: true }),
  async readRegularFile(file) {
    const fd = fs.openSync(file, READ_NOFOLLOW);
    try {
      const info = fs.fstatSync(fd);
      if (!info.isFile()) return null;
      if (info.size > DIRECT_MAX_BYTES) return await readFd(fd);
      const out = Buffer.allocUnsafe(info.size);
      let offset = 0;
      while (offset < out.length) {
        const n = fs.readSync(fd, out, offset, out.length - offset, offset);
        if (n === 0) break; // truncated meanwhile: what was read
        offset += n;
      }
      return offset === out.length ? out : out.subarray(0, offset);
    } finally {
      fs.closeSync(fd);
    }
  },
  // fsync waits for the disk: never on the event loop.
  writeNew: (file, bytes, describe) => threadPoolIo.writeNew(file, bytes, describe),
};
