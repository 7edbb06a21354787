// The embedded catalog's journal (src/catalog/journal/): acknowledged writes survive SIGKILL,
// torn tails are dropped and reported (damage elsewhere: journal-damage.test.ts), compaction loses nothing, replay reproduces the live state
// with its BSON types and unique indexes, and an old JSON snapshot is migrated once.
// These tests start their own journaled servers (also when MONGO_URL names a real MongoDB: they
// are about the embedded server itself).
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import mongoose from 'mongoose';
import {
  exportCatalogSnapshot,
  startEmbeddedCatalogServer,
  type EmbeddedCatalogServer,
} from '../../../src/catalog/embedded-catalog-server.js';
import type { JournalLogger } from '../../../src/catalog/journal/journaled-storage-adapter.js';

const { MongoClient, ObjectId, Binary, Int32, Long, Double, Decimal128 } = mongoose.mongo;
type Client = InstanceType<typeof MongoClient>;
type Doc = mongoose.mongo.Document;

const here = path.dirname(fileURLToPath(import.meta.url));
const CATALOG_PROCESS = path.resolve(here, '../../harness/journaled-catalog-process.js');
const RAW = { promoteValues: false, promoteLongs: false, promoteBuffers: false } as const;

interface LogLine {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg: string;
}

function captureLog(): { log: JournalLogger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log: JournalLogger = {
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  };
  return { log, lines };
}

async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new MongoClient(url, { maxPoolSize: 20 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** Every document of every collection, raw BSON types, in _id order per collection. */
async function dump(url: string): Promise<Record<string, Doc[]>> {
  return withClient(url, async (client) => {
    const db = client.db();
    const out: Record<string, Doc[]> = {};
    for (const info of await db.listCollections({}, { nameOnly: true }).toArray()) {
      out[info.name] = await db.collection(info.name).find({}, RAW).sort({ _id: 1 }).toArray();
    }
    return out;
  });
}

async function indexNames(url: string, collection: string): Promise<string[]> {
  return withClient(url, async (client) => (await client.db().collection(collection).listIndexes().toArray()).map((i) => String(i.name)).sort());
}

function segments(dir: string): string[] {
  return fs.readdirSync(dir).filter((n) => /^journal-\d+\.log$/.test(n)).sort();
}

function startCatalogProcess(dataDir: string, compactMinBytes?: number): Promise<{ child: ChildProcess; url: string }> {
  const args = [CATALOG_PROCESS, dataDir, ...(compactMinBytes ? [String(compactMinBytes)] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LOG_LEVEL: 'warn' } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.once('exit', (code) => reject(new Error(`catalog process exited (${code}) before it was up: ${out}`)));
  });
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('embedded catalog journal', function () {
  let tmp: string;
  const servers: EmbeddedCatalogServer[] = [];

  async function start(dataDir: string, extra: { compactMinBytes?: number; legacySnapshotFile?: string; log?: JournalLogger } = {}) {
    const server = await startEmbeddedCatalogServer({ dataDir, log: extra.log ?? captureLog().log, ...extra });
    servers.push(server);
    return server;
  }

  beforeEach(function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-journal-'));
  });

  afterEach(async function () {
    for (const server of servers.splice(0)) await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('keeps every acknowledged write through a SIGKILL of the server process, also mid-compaction', async function () {
    this.timeout(60_000);
    const dataDir = path.join(tmp, 'catalog');
    // A tiny compaction threshold: snapshots are written all the time, so the kill lands in or
    // between compactions.
    const first = await startCatalogProcess(dataDir, 16 * 1024);
    const ackedInserts = new Map<string, number>();
    const ackedDeletes = new Set<string>();
    // A delete sent but not answered before the kill may or may not have been made durable.
    const attemptedDeletes = new Set<string>();
    const ackedIncs = new Map<string, number>();
    const attemptedIncs = new Map<string, number>();
    const client = new MongoClient(first.url, { maxPoolSize: 16, serverSelectionTimeoutMS: 2000 });
    await client.connect();
    const coll = client.db().collection<{ _id: string; writer?: number; i?: number; n?: number; pad?: string }>('items');
    await coll.createIndex({ writer: 1, i: 1 }, { unique: true, sparse: true });
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const id = `w${w}-${i}`;
        try {
          await coll.insertOne({ _id: id, writer: w, i, pad: 'p'.repeat(200) });
          ackedInserts.set(id, i);
          attemptedIncs.set(`c${w}`, (attemptedIncs.get(`c${w}`) ?? 0) + 1);
          await coll.updateOne({ _id: `c${w}` }, { $inc: { n: 1 } }, { upsert: true });
          ackedIncs.set(`c${w}`, (ackedIncs.get(`c${w}`) ?? 0) + 1);
          if (i % 4 === 3) {
            const victim = `w${w}-${i - 2}`;
            attemptedDeletes.add(victim);
            await coll.deleteOne({ _id: victim });
            ackedDeletes.add(victim);
          }
        } catch {
          return; // the server is gone
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await killHard(first.child);
    stop = true;
    await Promise.all(writers);
    await client.close(true);
    expect(ackedInserts.size).to.be.greaterThan(50);

    const { log, lines } = captureLog();
    const second = await start(dataDir, { log });
    expect(lines.filter((l) => l.level === 'error')).to.deep.equal([]);
    const rows = new Map((await dump(second.url)).items.map((d) => [String(d._id), d]));
    const missing = [...ackedInserts.keys()].filter((id) => !attemptedDeletes.has(id) && !rows.has(id));
    expect(missing, 'acknowledged inserts lost').to.deep.equal([]);
    const resurrected = [...ackedDeletes].filter((id) => rows.has(id));
    expect(resurrected, 'acknowledged deletes back').to.deep.equal([]);
    for (const [id, acked] of ackedIncs) {
      const n = Number(rows.get(id)?.n);
      expect(n, id).to.be.at.least(acked);
      expect(n, id).to.be.at.most(attemptedIncs.get(id)!);
    }
    // Replayed state is whole: the unique index holds and the server takes writes again.
    let duplicate: unknown;
    const someInsert = [...ackedInserts.entries()].find(([id]) => !attemptedDeletes.has(id))!;
    await withClient(second.url, async (c) => {
      await c.db().collection('items').insertOne({ _id: 'x' as never, writer: Number(someInsert[0].slice(1).split('-')[0]), i: someInsert[1] }).catch((err: unknown) => (duplicate = err));
      await c.db().collection('items').insertOne({ _id: 'after-restart' as never });
    });
    expect((duplicate as { code?: number })?.code).to.equal(11000);
    console.log(`      [figure] ${ackedInserts.size} inserts, ${ackedDeletes.size} deletes acknowledged before SIGKILL; all present/absent after replay (${second.journal!.loadReport.records} journal records, ${Math.round(second.journal!.loadReport.ms)} ms)`);
  });

  it('drops a torn or corrupt last record at any cut point, reports it, and keeps the rest', async function () {
    this.timeout(60_000);
    const base = path.join(tmp, 'base');
    const server = await start(base);
    const N = 40;
    await withClient(server.url, async (c) => {
      for (let i = 0; i < N; i++) await c.db().collection('t').insertOne({ _id: i as never, v: `value-${i}`, at: new Date(1_700_000_000_000 + i) });
    });
    await server.stop();
    servers.pop();
    const [segment] = segments(base);
    const bytes = fs.readFileSync(path.join(base, segment));
    // Record boundaries: [u32 length][u32 crc][payload]
    const boundaries = [0];
    while (boundaries.at(-1)! < bytes.length) boundaries.push(boundaries.at(-1)! + 8 + bytes.readUInt32LE(boundaries.at(-1)!));
    expect(boundaries.at(-1)).to.equal(bytes.length);
    const records = boundaries.length - 1; // database and collection creation, then N inserts
    expect(records).to.equal(N + 2);
    const leading = records - N;

    const cuts = new Set<number>();
    for (let k = 0; k < 25; k++) cuts.add(Math.floor((bytes.length * k) / 25) + (k % 7));
    for (const b of boundaries.slice(-3)) for (const d of [-1, 0, 1, 5, 9]) cuts.add(Math.max(0, Math.min(bytes.length, b + d)));
    for (const cut of [...cuts].sort((a, b) => a - b)) {
      const dir = path.join(tmp, `cut-${cut}`);
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, segment), bytes.subarray(0, cut));
      const { log, lines } = captureLog();
      const s = await start(dir, { log });
      const whole = boundaries.filter((b) => b > 0 && b <= cut).length;
      const expectedDocs = Math.max(0, whole - leading);
      const docs = (await dump(s.url)).t ?? [];
      expect(docs.map((d) => Number(d._id)), `cut at ${cut}`).to.deep.equal(Array.from({ length: expectedDocs }, (_, i) => i));
      const torn = !boundaries.includes(cut);
      expect(s.journal!.loadReport.droppedTail !== null, `cut at ${cut}`).to.equal(torn);
      expect(lines.some((l) => l.level === 'warn' && /torn record/.test(l.msg)), `cut at ${cut}`).to.equal(torn);
      if (torn) expect(fs.statSync(path.join(dir, segment)).size).to.equal(boundaries.filter((b) => b <= cut).at(-1));
      await s.stop();
      servers.pop();
    }

    // A flipped byte anywhere in the last record: nothing valid follows it, so it is a torn tail.
    // (A flip earlier, with valid records after it, is damage: journal-damage.test.ts.)
    for (const offset of [boundaries.at(-2)! + 3, boundaries.at(-2)! + 20, bytes.length - 1]) {
      const dir = path.join(tmp, `flip-${offset}`);
      fs.mkdirSync(dir);
      const damaged = Buffer.from(bytes);
      damaged[offset] ^= 0x5a;
      fs.writeFileSync(path.join(dir, segment), damaged);
      const { log, lines } = captureLog();
      const s = await start(dir, { log });
      const damagedRecord = boundaries.filter((b) => b <= offset).length - 1; // records before it stay
      const docs = (await dump(s.url)).t ?? [];
      expect(docs, `flip at ${offset}`).to.have.length(Math.max(0, damagedRecord - leading));
      expect(s.journal!.loadReport.droppedTail?.reason, `flip at ${offset}`).to.match(/checksum|length|cut off/);
      expect(lines.some((l) => l.level === 'warn')).to.equal(true);
      // the server goes on journaling in a new segment, and the next start is clean
      await withClient(s.url, (c) => c.db().collection('t').insertOne({ _id: 'later' as never }));
      await s.stop();
      servers.pop();
      const again = await start(dir);
      expect(again.journal!.loadReport.droppedTail).to.equal(null);
      expect(((await dump(again.url)).t ?? []).some((d) => d._id === 'later')).to.equal(true);
      await again.stop();
      servers.pop();
    }
  });

  it('compacts under concurrent writes without losing any, and truncates the journal', async function () {
    this.timeout(60_000);
    const dataDir = path.join(tmp, 'catalog');
    const server = await start(dataDir, { compactMinBytes: 2 ** 40 }); // compaction only when asked
    const reports: { longestSliceMs: number; longestSliceCpuMs: number; segmentsRemoved: number; documents: number }[] = [];
    await withClient(server.url, async (c) => {
      const coll = c.db().collection<{ _id: number; n: number; tag?: string }>('docs');
      await coll.insertMany(Array.from({ length: 3000 }, (_, i) => ({ _id: i, n: 0 })));
      let writing = true;
      const writers = Array.from({ length: 6 }, async (_, w) => {
        for (let k = 0; writing; k++) {
          const id = (w * 7919 + k * 31) % 3000;
          await coll.updateOne({ _id: id }, { $inc: { n: 1 } });
          await coll.insertOne({ _id: 10_000 + w * 100_000 + k, n: -1, tag: 'new' });
          if (k % 3 === 0) await coll.deleteOne({ _id: 10_000 + w * 100_000 + k });
        }
      });
      for (let round = 0; round < 4; round++) reports.push(await server.journal!.compact());
      writing = false;
      await Promise.all(writers);
    });
    expect(reports.every((r) => r.segmentsRemoved >= 1)).to.equal(true);
    const live = await dump(server.url);
    const journalBytes = segments(dataDir).reduce((sum, n) => sum + fs.statSync(path.join(dataDir, n)).size, 0);
    expect(fs.readdirSync(dataDir).filter((n) => n.startsWith('snapshot-'))).to.have.length(1);
    // Only what was written after the last snapshot started remains in the journal.
    expect(journalBytes).to.be.below(server.journal!.stats().appendedBytes / 2);
    await server.stop();
    servers.pop();
    const replayed = await start(dataDir);
    expect(await dump(replayed.url)).to.deep.equal(live);
    console.log(`      [figure] 4 compactions of ~${reports[0].documents} documents under 6 writers: longest slice ${Math.max(...reports.map((r) => r.longestSliceMs)).toFixed(1)} ms wall, ${Math.max(...reports.map((r) => r.longestSliceCpuMs)).toFixed(1)} ms CPU`);
  });

  it('replays a snapshot plus journal into exactly the live state, BSON types and indexes included', async function () {
    this.timeout(30_000);
    const dataDir = path.join(tmp, 'catalog');
    const server = await start(dataDir);
    const owner = new ObjectId();
    await withClient(server.url, async (c) => {
      const db = c.db();
      await db.collection('typed').createIndex({ handle: 1 }, { unique: true });
      await db.collection('typed').createIndex({ at: -1 }, { name: 'by_time' });
      await db.collection('typed').insertMany([
        {
          _id: new ObjectId(),
          owner,
          at: new Date('2024-05-06T07:08:09.123Z'),
          data: new Binary(Buffer.from([0, 1, 2, 250, 255])),
          uuid: new Binary(Buffer.alloc(16, 7), 4),
          i32: new Int32(7),
          big: Long.fromString('9007199254740993'),
          dbl: new Double(2.5),
          dec: Decimal128.fromString('1.10'),
          nested: { list: [1, 'two', { three: new Date(3) }], empty: {} },
          handle: 'a',
        },
        { _id: 'string-id' as never, handle: 'b', n: 1 },
        { _id: { composite: 1, key: 'x' } as never, handle: 'c' },
      ]);
      await db.collection('typed').updateOne({ _id: 'string-id' as never }, { $inc: { n: 41 }, $set: { when: new Date(5) } });
      await server.journal!.compact(); // part of the state comes from the snapshot ...
      await db.collection('typed').updateOne({ handle: 'a' }, { $push: { 'nested.list': new Int32(4) } as never });
      await db.collection('typed').deleteOne({ handle: 'c' });
      await db.collection('gone').insertOne({ x: 1 });
      await db.collection('gone').drop();
      await db.collection('renamed-from').insertOne({ y: 1 });
      await db.collection('renamed-from').rename('renamed-to');
      await db.collection('typed').dropIndex('by_time'); // ... and part from the journal
      await c.db('second').collection('other').insertOne({ z: new Date(9) });
    });
    const live = await dump(server.url);
    const liveSecond = await dump(server.url.replace('/pictor?', '/second?'));
    const liveIndexes = await indexNames(server.url, 'typed');
    await server.stop();
    servers.pop();

    const replayed = await start(dataDir);
    expect(replayed.journal!.loadReport.snapshot?.documents).to.equal(3);
    expect(await dump(replayed.url)).to.deep.equal(live);
    expect(await dump(replayed.url.replace('/pictor?', '/second?'))).to.deep.equal(liveSecond);
    expect(await indexNames(replayed.url, 'typed')).to.deep.equal(liveIndexes);
    const a = live.typed.find((d) => d.handle === 'a')!;
    expect(a.at).to.be.instanceOf(Date);
    expect(a.owner).to.be.instanceOf(ObjectId);
    expect(a.data).to.be.instanceOf(Binary);
    expect(a.i32).to.be.instanceOf(Int32);
    expect(a.big).to.be.instanceOf(Long);
    expect(String(a.big)).to.equal('9007199254740993');
    expect(a.dec).to.be.instanceOf(Decimal128);
    // The unique index is enforced after replay.
    let err: unknown;
    await withClient(replayed.url, (c) => c.db().collection('typed').insertOne({ handle: 'b' }).catch((e: unknown) => (err = e)));
    expect((err as { code?: number })?.code).to.equal(11000);
  });

  it('migrates an old JSON snapshot into an empty journal once', async function () {
    this.timeout(30_000);
    const memory = await startEmbeddedCatalogServer();
    servers.push(memory);
    await withClient(memory.url, async (c) => {
      await c.db().collection('images').createIndex({ userId: 1, publicId: 1 }, { unique: true });
      await c.db().collection('images').insertMany([
        { userId: 'u1', publicId: 'p1', bytes: 10, at: new Date(1) },
        { userId: 'u1', publicId: 'p2', bytes: 20, at: new Date(2) },
      ]);
    });
    const legacy = path.join(tmp, 'catalog-snapshot.json');
    await exportCatalogSnapshot(memory.url, legacy);
    const before = await dump(memory.url);

    const dataDir = path.join(tmp, 'catalog');
    const first = await start(dataDir, { legacySnapshotFile: legacy });
    expect(first.journal!.migrated?.documents).to.equal(2);
    expect(fs.existsSync(legacy)).to.equal(false);
    expect(fs.existsSync(`${legacy}.migrated`)).to.equal(true);
    expect(await dump(first.url)).to.deep.equal(before);
    await withClient(first.url, (c) => c.db().collection('images').insertOne({ userId: 'u1', publicId: 'p3' }));
    await first.stop();
    servers.pop();

    // A stale JSON file next to a journal that has data is not imported again.
    fs.copyFileSync(`${legacy}.migrated`, legacy);
    const second = await start(dataDir, { legacySnapshotFile: legacy });
    expect(second.journal!.migrated).to.equal(null);
    expect((await dump(second.url)).images.map((d) => d.publicId)).to.deep.equal(['p1', 'p2', 'p3']);
    let err: unknown;
    await withClient(second.url, (c) => c.db().collection('images').insertOne({ userId: 'u1', publicId: 'p1' }).catch((e: unknown) => (err = e)));
    expect((err as { code?: number })?.code).to.equal(11000);
  });
});
