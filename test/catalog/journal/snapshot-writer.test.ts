// Compaction cannot lose data: a short write is continued; a write that loses bytes while
// reporting them written (as a failing disk or a buggy file system can) is caught when the
// snapshot is read back, and a write that fails (ENOSPC) fails the compaction — in both cases
// no segment is deleted, the journal stays as it was, commands go on, and the next start has
// every document. The snapshot's writes are intercepted through durableFiles.open.
import { expect } from 'chai';
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { durableFiles, type DurableFiles } from '../../../src/durable-files.js';
import { ids, insertRange, journalFiles, range, startCatalog } from './journal-helpers.js';

type Write = (data: Buffer, offset: number, length: number) => Promise<{ bytesWritten: number }>;

/** Snapshot files (`snapshot-*.bson.tmp`) get `write` in place of their own. */
function interceptSnapshotWrites(original: DurableFiles, write: (handle: FileHandle) => Write): void {
  durableFiles.open = async (file, flags, mode) => {
    const handle = await original.open(file, flags, mode);
    if (!/snapshot-\d+\.bson\.tmp$/.test(file)) return handle;
    const replaced = write(handle);
    return new Proxy(handle, {
      get: (target, prop) => {
        if (prop === 'write') return replaced;
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
}

describe('compaction (snapshot writer)', function () {
  this.timeout(60_000);
  let dir: string;
  const original: DurableFiles = { ...durableFiles };

  beforeEach(() => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-compact-')), 'catalog');
  });
  afterEach(() => {
    Object.assign(durableFiles, original);
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  });

  /** Compacts with the given writes; returns the error (or null) and what changed. */
  async function compactWith(write: ((handle: FileHandle) => Write) | null) {
    const server = await startCatalog(dir, 2 ** 40);
    await insertRange(server.url, 0, 300);
    const segmentsBefore = journalFiles(dir, 'journal');
    if (write) interceptSnapshotWrites(original, write);
    const error = await server.journal!.compact().then(
      () => null,
      (err: unknown) => err as Error,
    );
    Object.assign(durableFiles, original);
    // Commands go on after a failed compaction.
    await insertRange(server.url, 300, 310);
    await server.stop();
    const again = await startCatalog(dir, 2 ** 40);
    const docs = await ids(again.url);
    await again.stop();
    return { error, segmentsBefore, docs };
  }

  it('continues short writes until the snapshot is complete', async () => {
    let calls = 0;
    const { error, segmentsBefore, docs } = await compactWith((handle) => (data, offset, length) => {
      calls++;
      return handle.write(data, offset, Math.min(length, 1000));
    });
    expect(error).to.equal(null);
    expect(calls).to.be.above(10);
    expect(journalFiles(dir, 'snapshot')).to.have.length(1);
    expect(journalFiles(dir, 'journal').some((f) => segmentsBefore.includes(f))).to.equal(false);
    expect(docs).to.deep.equal(range(0, 310));
  });

  it('a snapshot that lost bytes is caught when read back: no segment deleted, every document kept', async () => {
    const { error, segmentsBefore, docs } = await compactWith((handle) => async (data, offset, length) => {
      // Reports every byte written but writes only half of each call's bytes.
      await handle.write(data, offset, Math.ceil(length / 2));
      return { bytesWritten: length };
    });
    expect(String(error)).to.match(/snapshot .* holds \d+ bytes, \d+ were written|damaged/);
    expect(journalFiles(dir, 'snapshot')).to.deep.equal([]);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'))).to.deep.equal([]);
    for (const segment of segmentsBefore) expect(fs.existsSync(segment), segment).to.equal(true);
    expect(docs).to.deep.equal(range(0, 310));
  });

  it('a write that fails (no space) fails the compaction and leaves the journal as it was', async () => {
    const { error, segmentsBefore, docs } = await compactWith(() => async () => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    expect(String(error)).to.match(/ENOSPC/);
    expect(journalFiles(dir, 'snapshot')).to.deep.equal([]);
    for (const segment of segmentsBefore) expect(fs.existsSync(segment), segment).to.equal(true);
    expect(docs).to.deep.equal(range(0, 310));
  });
});
