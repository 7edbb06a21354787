// Storage on the local filesystem: object `a/b.jpg` is the file `<root>/a/b.jpg`, so the root can
// also be served as static files. Two hidden top-level folders belong to the driver and are never
// listed: `.tmp/` (writes in progress) and `.meta/` (one JSON sidecar per object version).
//
// Writes are atomic: bytes go to a temp file in `.tmp/` (same filesystem), then rename(2) swaps it
// in, so readers see the old or the new object, never a torn one. The sidecar is named after the
// inode of the data file it describes (`.meta/a/b.jpg@<inode>.json`) and is renamed into place
// BEFORE the data file. rename keeps the inode, so whichever data file wins a race of concurrent
// puts always finds its own sidecar: content type, metadata and etag can never come from another
// writer, without any cross-process lock.
import { createHash, randomUUID } from 'node:crypto';
import { constants as fsConstants, type BigIntStats } from 'node:fs';
import { lstat, open, readdir, realpath, rm, rmdir, stat, statfs, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import { durableFiles, mkdirDurably, syncCreatedFolders, writeAll } from '../durable-files.js';
import { describeWritten, directIo, type LocalFileIo, type WrittenFile } from './local-file-io.js';
import { clampLimit, walkKeys } from './local-key-walk.js';
import { contentEtag, DEFAULT_CONTENT_TYPE, parseSidecar, SHA256_HEX, sidecarPath, type Sidecar } from './local-sidecar.js';
import {
  assertSafeKey,
  assertSafePrefix,
  assertValidRange,
  InvalidStorageKeyError,
  joinPublicUrl,
  StorageFullError,
  StorageNotFoundError,
  StorageRangeError,
  StorageUnavailableError,
  type ByteRange,
  type ListOptions,
  type ListPage,
  type PutOptions,
  type Storage,
  type StoredObject,
} from './storage.js';

export interface LocalStorageOptions {
  rootDir: string;
  publicBaseUrl: string;
  /** check() fails below this much free space (the largest upload): the disk counts as full. */
  minFreeBytes?: number;
}

const TEMP_DIR = '.tmp';
const META_DIR = '.meta';
const RESERVED_TOP_LEVEL = new Set([TEMP_DIR, META_DIR]);
/** Temp files older than this are leftovers of a crashed process. */
const STALE_TEMP_MS = 60 * 60 * 1000;
/**
 * How long a folder found inside the root (after following links) is trusted without another
 * realpath. Every put, read and stat checks its folder; a link swapped in meanwhile was never
 * covered (see resolveInsideRoot), and the root belongs to Pictor alone.
 */
const VERIFIED_FOLDER_TTL_MS = 5_000;
const VERIFIED_FOLDERS_MAX = 10_000;
/** fs errors that mean "the disk/process is in trouble, try again later" rather than a bad request (a full disk: StorageFullError). */
const TRANSIENT_FS_CODES = new Set(['EIO', 'EMFILE', 'ENFILE', 'EAGAIN', 'EBUSY', 'EROFS', 'EACCES', 'EPERM']);

export class LocalStorage implements Storage {
  readonly driver = 'local';
  private readonly root: string;
  private readonly publicBaseUrl: string;
  private readonly minFreeBytes: number;
  /** Small file operations as direct system calls (see local-file-io.ts). */
  private readonly io: LocalFileIo = directIo;
  private realRoot: Promise<string> | undefined;
  /** Folders recently resolved inside the root. */
  private readonly verifiedFolders = new LRUCache<string, true>({ max: VERIFIED_FOLDERS_MAX, ttl: VERIFIED_FOLDER_TTL_MS });

  constructor(options: LocalStorageOptions) {
    this.root = path.resolve(options.rootDir);
    this.publicBaseUrl = options.publicBaseUrl.replace(/\/+$/, '');
    this.minFreeBytes = options.minFreeBytes ?? 0;
  }

  async put(key: string, body: Buffer | Readable, options: PutOptions = {}): Promise<StoredObject> {
    const target = await this.resolveInsideRoot(key);
    const tempDir = path.join(this.root, TEMP_DIR);
    const tempName = randomUUID();
    const tempData = path.join(tempDir, `${tempName}.data`);
    const tempSidecar = path.join(tempDir, `${tempName}.meta`);
    let placedSidecar: string | undefined;
    let placedData = false;
    try {
      // Data and sidecar are always fsynced before they are renamed into place: a name that
      // survives a power cut never shows torn or empty bytes. The folders are synced after the
      // renames only when the caller cannot re-create the object.
      const syncNames = options.durable !== false;
      if (options.sha256 !== undefined && !(Buffer.isBuffer(body) && SHA256_HEX.test(options.sha256))) {
        throw new TypeError('put: sha256 must be the hex SHA-256 of a Buffer body');
      }
      const hashed = await this.writeNewFile(tempData, body, options.sha256).catch(async (err: unknown) => {
        // The temp folder is made at start; made again if it was removed since.
        if (!isFsError(err, 'ENOENT')) throw err;
        await this.io.mkdirp(tempDir);
        return this.writeNewFile(tempData, body, options.sha256);
      });
      const written = hashed.file;
      const sidecar: Sidecar = {
        contentType: options.contentType ?? DEFAULT_CONTENT_TYPE,
        metadata: { ...(options.metadata ?? {}) },
        cacheControl: options.cacheControl,
        etag: contentEtag(hashed.sha256),
        size: written.size,
      };
      placedSidecar = this.sidecarPath(key, written.inode);
      const sidecarPlaced = this.io.writeNew(tempSidecar, Buffer.from(JSON.stringify(sidecar)), false).then(() =>
        this.moveIntoPlace(key, tempSidecar, placedSidecar!, syncNames),
      );
      const [replaced] = await Promise.all([this.io.lstat(target).catch(() => undefined), sidecarPlaced]);
      await this.moveIntoPlace(key, tempData, target, syncNames);
      placedData = true;
      // The replaced version's sidecar is garbage now. (Under concurrent puts of one key a
      // sidecar can be missed here; it is never read, since no live file has its inode.)
      if (replaced?.isFile() && replaced.ino !== written.inode) {
        await this.io.remove(this.sidecarPath(key, replaced.ino));
      }
      return {
        key,
        size: written.size,
        contentType: sidecar.contentType,
        etag: sidecar.etag,
        updatedAt: written.modifiedAt,
        metadata: sidecar.metadata,
        ...(sidecar.cacheControl !== undefined ? { cacheControl: sidecar.cacheControl } : {}),
      };
    } catch (err) {
      await this.io.remove(tempData).catch(() => undefined);
      await this.io.remove(tempSidecar).catch(() => undefined);
      if (placedSidecar && !placedData) await this.io.remove(placedSidecar).catch(() => undefined);
      throw this.translateError(err, key);
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    if (range) assertValidRange(key, range);
    const handle = await this.openForReading(key);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new StorageNotFoundError(key);
      if (range && range.start >= info.size) throw new StorageRangeError(key, range, info.size);
      if (info.size === 0) return handle.createReadStream({ autoClose: true });
      const start = range?.start ?? 0;
      const end = Math.min(range?.end ?? info.size - 1, info.size - 1);
      // The stream reads the inode opened above: a concurrent overwrite cannot mix versions.
      return handle.createReadStream({ start, end, autoClose: true });
    } catch (err) {
      await handle.close();
      throw this.translateError(err, key);
    }
  }

  async read(key: string): Promise<Buffer> {
    const target = await this.resolveInsideRoot(key);
    let bytes: Buffer | null;
    try {
      bytes = await this.io.readRegularFile(target);
    } catch (err) {
      throw this.translateError(err, key);
    }
    if (!bytes) throw new StorageNotFoundError(key);
    return bytes;
  }

  async stat(key: string): Promise<StoredObject | null> {
    const target = await this.resolveInsideRoot(key);
    const info = await this.lstatObject(key, target);
    return info ? this.describe(key, info) : null;
  }

  async delete(key: string): Promise<boolean> {
    const target = await this.resolveInsideRoot(key);
    const info = await this.lstatObject(key, target);
    if (!info) return false;
    try {
      await unlink(target);
    } catch (err) {
      if (isFsError(err, 'ENOENT')) return false;
      throw this.translateError(err, key);
    }
    // An acknowledged delete must not come back after a power cut.
    await durableFiles.syncDirectory(path.dirname(target));
    const sidecar = this.sidecarPath(key, info.ino);
    await rm(sidecar, { force: true });
    await this.pruneEmptyFolders(path.dirname(target), this.root);
    await this.pruneEmptyFolders(path.dirname(sidecar), path.join(this.root, META_DIR));
    return true;
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    assertSafePrefix(prefix);
    const limit = clampLimit(options.limit);
    const cursor = options.cursor ?? '';
    const realRoot = await this.ensureReady();

    // Start the walk at the deepest folder the prefix names entirely ('a/b/c' → 'a/b').
    const folderKey = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    if (folderKey && RESERVED_TOP_LEVEL.has(folderKey.split('/')[0])) return { items: [], nextCursor: null };
    const startFolder = folderKey ? path.join(this.root, ...folderKey.split('/')) : this.root;
    if (folderKey) {
      const real = await realpath(startFolder).catch(() => undefined);
      if (!real || !isInside(real, realRoot)) return { items: [], nextCursor: null };
    }

    const items: StoredObject[] = [];
    let hasMore = false;
    for await (const key of walkKeys(startFolder, folderKey ? `${folderKey}/` : '', prefix, cursor, RESERVED_TOP_LEVEL)) {
      if (items.length === limit) {
        hasMore = true;
        break;
      }
      const info = await lstat(path.join(this.root, ...key.split('/')), { bigint: true }).catch(() => undefined);
      if (info?.isFile()) items.push(await this.describe(key, info)); // vanished meanwhile: skip
    }
    return { items, nextCursor: hasMore && items.length > 0 ? items[items.length - 1].key : null };
  }

  publicUrl(key: string): string {
    assertSafeKey(key);
    return joinPublicUrl(this.publicBaseUrl, key);
  }

  async check(): Promise<void> {
    try {
      await this.ensureReady();
      const probe = path.join(this.root, TEMP_DIR, `check-${randomUUID()}`);
      await this.io.writeNew(probe, Buffer.from('ok'), false);
      await rm(probe, { force: true });
    } catch (err) {
      const full = (err as NodeJS.ErrnoException).code === 'ENOSPC';
      throw new (full ? StorageFullError : StorageUnavailableError)(`Local storage at ${this.root} is not writable: ${(err as Error).message}`, { cause: err });
    }
    const { bavail, bsize } = await statfs(this.root);
    if (bavail * bsize < this.minFreeBytes) throw new StorageFullError(`Local storage at ${this.root} is full: ${bavail * bsize} bytes free, less than one upload of ${this.minFreeBytes} bytes (MAX_UPLOAD_BYTES)`);
  }

  // -------------------------------------------------------------------------------------------

  /** Creates the root and driver folders once, sweeps crash leftovers, and remembers the root's real path. */
  private ensureReady(): Promise<string> {
    if (!this.realRoot) {
      this.realRoot = (async () => {
        // Durably: an object's sidecar lives under .meta, and losing the folder loses them all.
        await mkdirDurably(path.join(this.root, TEMP_DIR));
        await mkdirDurably(path.join(this.root, META_DIR));
        await this.sweepStaleTempFiles();
        return realpath(this.root);
      })();
      // A failed start (e.g. disk not mounted yet) is retried by the next call.
      this.realRoot.catch(() => {
        this.realRoot = undefined;
      });
    }
    return this.realRoot;
  }

  /**
   * Maps a key to its absolute path and refuses anything that would land outside the root:
   * unsafe keys, the driver's own folders, and paths whose existing folders resolve through a
   * symbolic link to somewhere else. (A link swapped in between this check and the file
   * operation is not covered; the root is expected to be writable by Pictor only.)
   */
  private async resolveInsideRoot(key: string): Promise<string> {
    assertSafeKey(key);
    const segments = key.split('/');
    if (RESERVED_TOP_LEVEL.has(segments[0])) throw new InvalidStorageKeyError(key, `"${segments[0]}" is reserved by the local driver`);
    const target = path.join(this.root, ...segments);
    if (!isInside(target, this.root)) throw new InvalidStorageKeyError(key, 'outside the storage root');
    const realRoot = await this.ensureReady();
    let folder = path.dirname(target);
    if (this.verifiedFolders.get(folder)) return target;
    for (;;) {
      try {
        const real = await this.io.realpath(folder);
        if (!isInside(real, realRoot) && real !== realRoot) {
          throw new InvalidStorageKeyError(key, 'resolves outside the storage root through a symbolic link');
        }
        if (folder === path.dirname(target)) this.verifiedFolders.set(folder, true);
        return target;
      } catch (err) {
        if (err instanceof InvalidStorageKeyError) throw err;
        // Not created yet: check the nearest existing ancestor instead.
        if (isFsError(err, 'ENOENT') && folder !== this.root) {
          folder = path.dirname(folder);
          continue;
        }
        // ENOTDIR: a path component is a regular file, which cannot lead anywhere else.
        if (isFsError(err, 'ENOTDIR')) return target;
        throw this.translateError(err, key);
      }
    }
  }

  /** Opens the object's file without following a symbolic link in its last component. */
  private async openForReading(key: string): Promise<FileHandle> {
    const target = await this.resolveInsideRoot(key);
    try {
      return await open(target, fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0));
    } catch (err) {
      throw this.translateError(err, key);
    }
  }

  /** lstat of the object's file; null when there is no regular file for the key. */
  private async lstatObject(key: string, target: string): Promise<BigIntStats | null> {
    let info: BigIntStats;
    try {
      info = await this.io.lstat(target);
    } catch (err) {
      if (isFsError(err, 'ENOENT') || isFsError(err, 'ENOTDIR')) return null;
      throw this.translateError(err, key);
    }
    if (info.isSymbolicLink()) throw new InvalidStorageKeyError(key, 'is a symbolic link');
    return info.isFile() ? info : null;
  }

  private async describe(key: string, info: BigIntStats): Promise<StoredObject> {
    const sidecar = await this.io
      .readText(this.sidecarPath(key, info.ino))
      .then(parseSidecar)
      .catch(() => undefined); // missing or unreadable: fall back to what the file itself tells
    const size = Number(info.size);
    const trusted = sidecar !== undefined && sidecar.size === size;
    return {
      key,
      size,
      contentType: sidecar?.contentType ?? DEFAULT_CONTENT_TYPE,
      // Without a matching sidecar (file copied in by hand) the etag still changes with the bytes' version.
      etag: trusted ? sidecar.etag : createHash('sha1').update(`${info.ino}:${info.size}:${info.mtimeNs}`).digest('hex'),
      updatedAt: new Date(Number(info.mtimeMs)),
      metadata: sidecar?.metadata ?? {},
      ...(sidecar?.cacheControl !== undefined ? { cacheControl: sidecar.cacheControl } : {}),
    };
  }

  private sidecarPath(key: string, inode: bigint): string {
    return sidecarPath(path.join(this.root, META_DIR), key, inode);
  }

  /**
   * Writes a new file (never an existing one); returns what the sidecar needs and the bytes'
   * SHA-256 (`knownSha256` when the caller has it, or hashed here).
   */
  private async writeNewFile(file: string, body: Buffer | Readable, knownSha256?: string): Promise<{ file: WrittenFile; sha256: string }> {
    if (Buffer.isBuffer(body)) {
      const sha256 = knownSha256 ?? createHash('sha256').update(body).digest('hex');
      return { file: (await this.io.writeNew(file, body, true))!, sha256 };
    }
    const handle = await durableFiles.open(file, 'wx', 0o644);
    try {
      const hash = createHash('sha256');
      let size = 0;
      // Chunk by chunk: a large upload never sits in memory as a whole.
      for await (const chunk of body as AsyncIterable<unknown>) {
        const bytes = toBuffer(chunk);
        hash.update(bytes);
        size += bytes.length;
        await writeAll(handle, bytes);
      }
      await durableFiles.sync(handle);
      return { file: describeWritten(size, await handle.stat({ bigint: true })), sha256: hash.digest('hex') };
    } finally {
      await handle.close();
    }
  }

  /**
   * rename() into place, creating folders when missing (tried first without: folders usually
   * exist); retries when a concurrent delete pruned a folder meanwhile. `durable`: the new name
   * (and any folder created for it) survives a power cut before this resolves.
   */
  private async moveIntoPlace(key: string, from: string, to: string, durable: boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const created = attempt > 1 ? await this.io.mkdirp(path.dirname(to)) : undefined;
        await this.io.rename(from, to);
        if (durable) {
          await syncCreatedFolders(created, path.dirname(to));
          await durableFiles.syncDirectory(path.dirname(to));
        }
        return;
      } catch (err) {
        if (isFsError(err, 'ENOENT') && attempt < 6) continue;
        if (isFsError(err, 'EISDIR') || isFsError(err, 'ENOTDIR') || isFsError(err, 'EEXIST') || isFsError(err, 'ENOTEMPTY')) {
          // Filesystems cannot hold both "a" and "a/b"; object stores can. Refuse rather than lose either.
          throw new InvalidStorageKeyError(key, 'collides with an existing object or folder of the same name');
        }
        throw err;
      }
    }
  }

  /** Removes now-empty folders from `folder` up to (not including) `stopAt`. */
  private async pruneEmptyFolders(folder: string, stopAt: string): Promise<void> {
    while (folder !== stopAt && isInside(folder, stopAt)) {
      try {
        await rmdir(folder);
      } catch {
        return; // not empty (or already gone, or in use by a concurrent put): stop here
      }
      folder = path.dirname(folder);
    }
  }

  private async sweepStaleTempFiles(): Promise<void> {
    const tempDir = path.join(this.root, TEMP_DIR);
    const names = await readdir(tempDir).catch(() => [] as string[]);
    const cutoff = Date.now() - STALE_TEMP_MS;
    for (const name of names) {
      const file = path.join(tempDir, name);
      const info = await stat(file).catch(() => undefined);
      if (info && info.mtimeMs < cutoff) await rm(file, { force: true, recursive: true }).catch(() => undefined);
    }
  }

  private translateError(err: unknown, key: string): unknown {
    if (err instanceof InvalidStorageKeyError || err instanceof StorageNotFoundError) return err;
    if (err instanceof StorageRangeError || err instanceof StorageUnavailableError) return err;
    if (isFsError(err, 'ENOENT') || isFsError(err, 'ENOTDIR') || isFsError(err, 'EISDIR')) return new StorageNotFoundError(key);
    if (isFsError(err, 'ELOOP')) return new InvalidStorageKeyError(key, 'is a symbolic link');
    if (isFsError(err, 'ENAMETOOLONG')) return new InvalidStorageKeyError(key, 'a path segment is too long for the filesystem');
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'ENOSPC' || code === 'EDQUOT') return new StorageFullError(`Local storage is full, ${key} not stored: ${(err as Error).message}`, { cause: err });
    if (code && TRANSIENT_FS_CODES.has(code)) {
      return new StorageUnavailableError(`Local storage failed for ${key}: ${(err as Error).message}`, { cause: err });
    }
    return err;
  }
}

function isFsError(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).code === code;
}

function isInside(candidate: string, folder: string): boolean {
  return candidate.startsWith(folder.endsWith(path.sep) ? folder : folder + path.sep);
}

function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError('put() streams must yield Buffers, Uint8Arrays or strings');
}


