// A power-cut file system, in the spirit of SQLite's crash-test VFS and LazyFS: the real files are
// written as usual (the processes see their own writes), and next to them a *durable image* keeps
// only what fsync made durable — a file's bytes when the file is fsynced (fsync or fdatasync), a
// directory's entries (creations, renames, deletions) when the directory is fsynced. At a
// simulated power cut (after SIGKILL of every process) `rebuildFromImage` replaces the data
// directory with the image: everything written but not fsynced is gone, as after a real cut on a
// file system that keeps nothing it was not told to.
//
// Installed in every Node process of a tree with `--import <this file>` (NODE_OPTIONS) and the
// image's directory in PICTOR_POWER_CUT_IMAGE. It wraps FileHandle.prototype.sync/datasync — the
// system calls themselves, below src/durable-files.ts — so removing any fsync from the source is
// seen. Files are keyed by inode number and birth time; the image of a file is its bytes at its
// last fsync.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

interface DirEntry {
  name: string;
  /** Inode number and birth time: inode numbers are reused as soon as a file is deleted. */
  id: string;
  dir: boolean;
}

const fileId = (info: fs.BigIntStats) => `${info.ino}.${info.birthtimeNs}`;

const inodesDir = (image: string) => path.join(image, 'inodes');
const dirsDir = (image: string) => path.join(image, 'dirs');
const dirRecord = (image: string, dir: string) => path.join(dirsDir(image), `${Buffer.from(dir).toString('base64url')}.json`);

/** Atomic within this machine (the image itself never sees a power cut). */
function writeAtomically(file: string, data: Buffer | string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

const pause = new Int32Array(new SharedArrayBuffer(4));

function withLock(lock: string, fn: () => void): void {
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      Atomics.wait(pause, 0, 0, 1); // another process holds it for a few microseconds
    }
  }
  try {
    fn();
  } finally {
    fs.rmdirSync(lock);
  }
}

/** Bytes of each file this process already copied: an fsync of an appended file copies only the new part. */
const copied = new Map<string, number>();

/**
 * A directory's entries as an fsync of it now makes them durable. Listing and recording happen
 * under a lock: two processes syncing one directory must not record their listings out of order.
 */
function recordDirectory(image: string, dir: string): void {
  withLock(`${dirRecord(image, dir)}.lock`, () => {
    const entries: DirEntry[] = [];
    for (const name of fs.readdirSync(dir)) {
      const entry = fs.lstatSync(path.join(dir, name), { throwIfNoEntry: false, bigint: true });
      if (entry && (entry.isFile() || entry.isDirectory())) entries.push({ name, id: fileId(entry), dir: entry.isDirectory() });
    }
    writeAtomically(dirRecord(image, dir), JSON.stringify({ dir, entries }));
  });
}

/** What an fsync of the open file `fd` makes durable, recorded. */
export function recordSync(image: string, fd: number): void {
  const info = fs.fstatSync(fd, { bigint: true });
  if (info.isDirectory()) {
    recordDirectory(image, fs.readlinkSync(`/proc/self/fd/${fd}`));
    return;
  }
  if (!info.isFile()) return;
  const id = fileId(info);
  const target = path.join(inodesDir(image), id);
  const before = copied.get(id);
  const imageSize = fs.statSync(target, { throwIfNoEntry: false })?.size;
  const bytes = fs.readFileSync(`/proc/self/fd/${fd}`);
  if (before !== undefined && imageSize === before && bytes.length >= before) fs.appendFileSync(target, bytes.subarray(before));
  else writeAtomically(target, bytes);
  copied.set(id, bytes.length);
}

/** Wraps FileHandle's fsync and fdatasync in this process. */
export async function installPowerCutFs(image: string): Promise<void> {
  fs.mkdirSync(inodesDir(image), { recursive: true });
  fs.mkdirSync(dirsDir(image), { recursive: true });
  const probe = await fsp.open(image, 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void>; datasync: () => Promise<void>; fd: number };
  await probe.close();
  for (const method of ['sync', 'datasync'] as const) {
    const original = proto[method];
    proto[method] = async function (this: { fd: number }) {
      await original.call(this);
      recordSync(image, this.fd);
    };
  }
}

/** The image as it stands: every recorded directory with its entries. */
function readImage(image: string): Map<string, DirEntry[]> {
  const dirs = new Map<string, DirEntry[]>();
  for (const name of fs.existsSync(dirsDir(image)) ? fs.readdirSync(dirsDir(image)) : []) {
    if (!name.endsWith('.json')) continue;
    const record = JSON.parse(fs.readFileSync(path.join(dirsDir(image), name), 'utf8')) as { dir: string; entries: DirEntry[] };
    dirs.set(record.dir, record.entries);
  }
  return dirs;
}

export interface CutReport {
  files: number;
  /** Files whose entry was durable but whose bytes were never fsynced (left empty). */
  emptied: number;
}

/**
 * The power cut: `root` (whose own entry is taken as durable) is replaced by what the image holds,
 * then the image is reset to exactly that, so the next run can be cut again.
 */
export function rebuildFromImage(root: string, image: string): CutReport {
  const dirs = readImage(image);
  const report: CutReport = { files: 0, emptied: 0 };
  const rebuilt = `${root}.power-cut`;
  fs.rmSync(rebuilt, { recursive: true, force: true });
  const build = (dir: string, into: string) => {
    fs.mkdirSync(into);
    for (const entry of dirs.get(dir) ?? []) {
      if (entry.dir) {
        build(path.join(dir, entry.name), path.join(into, entry.name));
        continue;
      }
      const bytes = path.join(inodesDir(image), entry.id);
      if (fs.existsSync(bytes)) fs.copyFileSync(bytes, path.join(into, entry.name));
      else {
        fs.writeFileSync(path.join(into, entry.name), '');
        report.emptied++;
      }
      report.files++;
    }
  };
  build(root, rebuilt);
  fs.rmSync(root, { recursive: true, force: true });
  fs.renameSync(rebuilt, root);
  resetImage(root, image);
  return report;
}

/** Makes the image say that everything under `root` now is durable. */
export function resetImage(root: string, image: string): void {
  fs.rmSync(image, { recursive: true, force: true });
  fs.mkdirSync(inodesDir(image), { recursive: true });
  fs.mkdirSync(dirsDir(image), { recursive: true });
  const walk = (dir: string) => {
    const entries: DirEntry[] = [];
    for (const name of fs.readdirSync(dir)) {
      const full = path.join(dir, name);
      const info = fs.lstatSync(full, { bigint: true });
      if (info.isDirectory()) walk(full);
      else if (info.isFile()) fs.copyFileSync(full, path.join(inodesDir(image), fileId(info)));
      else continue;
      entries.push({ name, id: fileId(info), dir: info.isDirectory() });
    }
    writeAtomically(dirRecord(image, dir), JSON.stringify({ dir, entries }));
  };
  walk(root);
}

const imageDir = process.env.PICTOR_POWER_CUT_IMAGE;
if (imageDir) await installPowerCutFs(imageDir);
