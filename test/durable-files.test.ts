// The durability calls: which directories are synced after a durable put, a delete, a rename and
// a mkdir -p, recorded by substituting durableFiles' calls (the real ones run too). Each
// expectation names a sync whose removal would let an acknowledged write vanish in a power cut.
import { expect } from 'chai';
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { durableFiles, mkdirDurably, renameDurably, writeAll, type DurableFiles } from '../src/durable-files.js';
import { LocalStorage } from '../src/storage/local-storage.js';

describe('durable files', () => {
  let root: string;
  let synced: string[];
  const original: DurableFiles = { ...durableFiles };

  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-durable-')));
    synced = [];
    durableFiles.syncDirectory = async (dir) => {
      synced.push(path.relative(root, dir) || '.');
      await original.syncDirectory(dir);
    };
  });
  afterEach(() => {
    Object.assign(durableFiles, original);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('mkdirDurably syncs the parent of every folder it creates, outermost first', async () => {
    fs.mkdirSync(path.join(root, 'a'));
    await mkdirDurably(path.join(root, 'a', 'b', 'c'));
    expect(synced).to.deep.equal(['a', 'a/b']);
    synced = [];
    await mkdirDurably(path.join(root, 'a', 'b', 'c'));
    expect(synced).to.deep.equal([]);
  });

  it('renameDurably syncs the folder', async () => {
    fs.mkdirSync(path.join(root, 'x'));
    fs.writeFileSync(path.join(root, 'x', 'f'), 'f');
    await renameDurably(path.join(root, 'x', 'f'), path.join(root, 'x', 'g'));
    expect(synced).to.deep.equal(['x']);
  });

  it('writeAll continues a short write and refuses one that makes no progress', async () => {
    const chunks: number[] = [];
    const shortWriter = {
      write: async (_data: Buffer, _offset: number, length: number) => {
        chunks.push(length);
        return { bytesWritten: Math.min(length, 3) };
      },
    } as unknown as FileHandle;
    await writeAll(shortWriter, Buffer.alloc(10));
    expect(chunks).to.deep.equal([10, 7, 4, 1]);
    const stuck = { write: async () => ({ bytesWritten: 0 }) } as unknown as FileHandle;
    let error: unknown;
    await writeAll(stuck, Buffer.alloc(4)).catch((err: unknown) => (error = err));
    expect(String(error)).to.match(/no progress after 0 of 4 bytes/);
  });

  describe('local storage', () => {
    it('a durable put syncs the new folders, the sidecar folder and the object folder; a delete syncs the object folder', async () => {
      const storage = new LocalStorage({ rootDir: root, publicBaseUrl: 'http://x' });
      await storage.put('u/p/a.jpg', Buffer.from('bytes'));
      // The driver's folders (made at the first call), the object's and the sidecar's new folders.
      expect([...new Set(synced)].sort()).to.deep.equal(['.', '.meta', '.meta/u', '.meta/u/p', 'u', 'u/p'].sort());
      synced = [];
      await storage.put('u/p/a.jpg', Buffer.from('other'));
      expect(synced.sort()).to.deep.equal(['.meta/u/p', 'u/p']);
      synced = [];
      await storage.delete('u/p/a.jpg');
      expect(synced).to.deep.equal(['u/p']);
    });

    it('a put the caller can re-create (durable: false) syncs no folder', async () => {
      const storage = new LocalStorage({ rootDir: root, publicBaseUrl: 'http://x' });
      await storage.check(); // makes the driver's own folders
      synced = [];
      await storage.put('u/d/a.webp', Buffer.from('bytes'), { durable: false });
      expect(synced).to.deep.equal([]);
    });
  });
});
