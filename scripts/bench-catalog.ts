// `npm run bench:catalog`: figures of the embedded catalog's journal (docs/durability.md).
//   1. catalog write latency p50/p99, journaled vs memory-only, side by side (alternating rounds)
//   2. start-up time with 100,000 image documents: journal replay only, and snapshot + replay
//   3. compaction of that catalog under writers: its longest synchronous slice, write latency
//      while it runs vs before
//   4. journal bytes per 1,000 real uploads through `npm start` (POST /upload)
// env: BENCH_CATALOG_IMAGES (100000), BENCH_CATALOG_UPLOADS (1000), BENCH_CATALOG_ONLY (1,2,3,4)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import mongoose from 'mongoose';
import sharp from 'sharp';
import { startEmbeddedCatalogServer, type EmbeddedCatalogServer } from '../src/catalog/embedded-catalog-server.js';
import type { JournalLogger } from '../src/catalog/journal/journaled-storage-adapter.js';
import { startService } from './lib/bench-service.js';

const { MongoClient, ObjectId } = mongoose.mongo;
type Client = InstanceType<typeof MongoClient>;

const IMAGES = Number(process.env.BENCH_CATALOG_IMAGES ?? 100_000);
const UPLOADS = Number(process.env.BENCH_CATALOG_UPLOADS ?? 1000);
const ONLY = new Set((process.env.BENCH_CATALOG_ONLY ?? '1,2,3,4').split(','));
const CLIENTS = 8;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-bench-catalog-'));
const quiet: JournalLogger = { info: () => undefined, warn: () => undefined, error: (obj, msg) => console.error(msg, obj) };

const say = (line = '') => process.stdout.write(line + '\n');
const fmt = (n: number, digits = 2) => n.toFixed(digits);

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

function imageDoc(userId: string, i: number) {
  const now = new Date();
  return {
    _id: new ObjectId(),
    userId,
    publicId: `folder/photo-${i}`,
    projectId: null,
    format: 'jpeg',
    contentType: 'image/jpeg',
    width: 4000,
    height: 3000,
    bytes: 1_048_576 + i,
    checksum: 'c'.repeat(64),
    storageKey: `${userId}/images/folder/photo-${i}.jpg`,
    version: `v${i.toString(36)}`,
    uploadId: `up-${i.toString(36)}-${userId}`,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The catalog writes of one upload, shaped after src/catalog/images.ts + usage.ts: storage hold,
 * image insert with its pending usage, usage settle (ledger with the last 500 op ids), pending
 * usage cleared, the worker's read. Returns each operation's latency in ms.
 */
let uploadSeq = 0;
async function uploadLikeWrites(client: Client, user: string, latencies: number[]): Promise<void> {
  const db = client.db();
  const n = 1_000_000_000 + uploadSeq++; // clear of the bulk-loaded images' public ids
  const timed = async <T>(op: () => Promise<T>) => {
    const t = performance.now();
    await op();
    latencies.push(performance.now() - t);
  };
  const doc = { ...imageDoc(user, n), pendingUsage: { opId: `op-${n}`, storageBytes: 1_048_576, imageCount: 1 } };
  await timed(() => db.collection('usage').updateOne({ _id: `${user}:total` as never }, { $inc: { heldBytes: 1_048_576 } }, { upsert: true }));
  await timed(() => db.collection('images').insertOne(doc));
  await timed(() =>
    db.collection('usage').updateOne(
      { _id: `${user}:total` as never, ops: { $ne: `op-${n}` } },
      { $inc: { storageBytes: 1_048_576, imageCount: 1, heldBytes: -1_048_576 }, $push: { ops: { $each: [`op-${n}`], $slice: -500 } } } as never,
    ),
  );
  await timed(() => db.collection('images').updateOne({ _id: doc._id }, { $unset: { pendingUsage: '' } }));
  await timed(() => db.collection('images').findOne({ _id: doc._id }));
}

async function drive(url: string, uploads: number, latencies: number[], stop?: () => boolean): Promise<void> {
  const client = new MongoClient(url, { maxPoolSize: CLIENTS });
  await client.connect();
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      while (next++ < uploads && !stop?.()) await uploadLikeWrites(client, `user${c}`, latencies);
    }),
  );
  await client.close();
}

async function fresh(label: string, dataDir?: string): Promise<EmbeddedCatalogServer> {
  return startEmbeddedCatalogServer({ dataDir: dataDir ?? (label === 'memory' ? undefined : path.join(tmp, `${label}-${Date.now()}`)), log: quiet });
}

async function latencyFigures(): Promise<void> {
  say('1. catalog write latency (upload-like sequence of 5 operations, 8 concurrent clients), alternating rounds');
  const results: Record<string, number[]> = { memory: [], journaled: [] };
  const throughput: Record<string, number[]> = { memory: [], journaled: [] };
  for (let round = 0; round < 3; round++) {
    for (const label of ['memory', 'journaled']) {
      const server = await fresh(label);
      const latencies: number[] = [];
      const t = performance.now();
      await drive(server.url, 400, latencies);
      throughput[label].push(400 / ((performance.now() - t) / 1000));
      results[label].push(...latencies);
      await server.stop();
    }
  }
  say('   side              p50 ms   p99 ms   upload-sequences/s');
  for (const label of ['memory', 'journaled']) {
    const sorted = results[label].sort((a, b) => a - b);
    const rate = throughput[label].reduce((a, b) => a + b, 0) / throughput[label].length;
    say(`   ${label.padEnd(16)} ${fmt(percentile(sorted, 50)).padStart(7)} ${fmt(percentile(sorted, 99)).padStart(8)} ${fmt(rate, 0).padStart(12)}`);
  }
}

async function bulkLoad(url: string, count: number): Promise<void> {
  const client = new MongoClient(url);
  await client.connect();
  const images = client.db().collection('images');
  await images.createIndex({ userId: 1, publicId: 1 }, { unique: true });
  await images.createIndex({ userId: 1, _id: -1 });
  for (let i = 0; i < count; i += 1000) {
    await images.insertMany(Array.from({ length: Math.min(1000, count - i) }, (_, k) => imageDoc(`user${(i + k) % 50}`, i + k)));
  }
  await client.close();
}

function dirBytes(dir: string, pattern: RegExp): number {
  return fs
    .readdirSync(dir)
    .filter((n) => pattern.test(n))
    .reduce((sum, n) => sum + fs.statSync(path.join(dir, n)).size, 0);
}

async function startupAndCompaction(): Promise<void> {
  const dir = path.join(tmp, 'large');
  let server = await fresh('large', dir);
  await bulkLoad(server.url, IMAGES);
  await server.stop();
  const journalMb = dirBytes(dir, /^journal-/) / 1e6;

  say();
  say(`2. start-up with ${IMAGES} image documents`);
  let t = performance.now();
  server = await fresh('large', dir);
  let wall = performance.now() - t;
  say(`   journal replay only (${fmt(journalMb, 1)} MB of journal): ${fmt(wall, 0)} ms until accepting connections (load ${fmt(server.journal!.loadReport.ms, 0)} ms)`);
  const report = await server.journal!.compact();
  // a further 1,000 upload-like sequences in the journal after the snapshot
  await drive(server.url, 1000, []);
  await server.stop();
  t = performance.now();
  server = await fresh('large', dir);
  wall = performance.now() - t;
  say(
    `   snapshot (${fmt(dirBytes(dir, /^snapshot-/) / 1e6, 1)} MB) + replay of ${server.journal!.loadReport.records} records (${fmt(dirBytes(dir, /^journal-/) / 1e6, 1)} MB): ` +
      `${fmt(wall, 0)} ms until accepting connections (load ${fmt(server.journal!.loadReport.ms, 0)} ms)`,
  );

  say();
  say(`3. compaction of ${report.documents} documents while 8 clients write`);
  const baseline: number[] = [];
  await drive(server.url, 300, baseline);
  const during: number[] = [];
  let compacting = true;
  const compaction = server.journal!.compact().finally(() => (compacting = false));
  await drive(server.url, 1_000_000, during, () => !compacting);
  const done = await compaction;
  baseline.sort((a, b) => a - b);
  during.sort((a, b) => a - b);
  say(`   compaction: ${fmt(done.ms, 0)} ms, ${fmt(done.bytes / 1e6, 1)} MB snapshot, longest synchronous slice ${fmt(done.longestSliceMs, 1)} ms wall, ${fmt(done.longestSliceCpuMs, 1)} ms CPU (process, all threads)`);
  say(`   write latency before: p50 ${fmt(percentile(baseline, 50))} ms, p99 ${fmt(percentile(baseline, 99))} ms, max ${fmt(baseline.at(-1)!)} ms (${baseline.length} ops)`);
  say(`   write latency during: p50 ${fmt(percentile(during, 50))} ms, p99 ${fmt(percentile(during, 99))} ms, max ${fmt(during.at(-1)!)} ms (${during.length} ops)`);
  await server.stop();
}

async function uploadsFigure(): Promise<void> {
  say();
  say(`4. journal growth per ${UPLOADS} uploads through npm start (POST /upload, 4 at a time, 64 KB JPEGs)`);
  const dataDir = path.join(tmp, 'service');
  const service = await startService({ workers: 1, dataDir });
  try {
    const catalogDir = path.join(dataDir, 'catalog');
    const before = dirBytes(catalogDir, /^journal-/);
    const jpeg = await sharp({ create: { width: 256, height: 256, channels: 3, background: { r: 90, g: 120, b: 200 } } })
      .jpeg({ quality: 90 })
      .toBuffer();
    let next = 0;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < UPLOADS) {
          const n = next++;
          const form = new FormData();
          form.append('file', new Blob([jpeg], { type: 'image/jpeg' }), `p${n}.jpg`);
          const res = await fetch(`${service.baseUrl}/upload?public_id=bench/p${n}`, { method: 'POST', headers: { 'X-API-Key': service.key }, body: form });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`upload ${n}: ${res.status}`);
        }
      }),
    );
    const seconds = (performance.now() - t) / 1000;
    const snapshots = fs.readdirSync(catalogDir).filter((n) => n.startsWith('snapshot-')).length;
    const grown = dirBytes(catalogDir, /^journal-/) - before;
    say(`   ${fmt(grown / 1e6, 2)} MB of journal for ${UPLOADS} uploads (${fmt(grown / UPLOADS / 1024, 1)} KB per upload; ${fmt(UPLOADS / seconds, 0)} uploads/s)` + (snapshots ? ' — a compaction ran meanwhile; figure is a lower bound' : ''));
  } finally {
    await service.stop();
  }
}

async function main() {
  say(`bench:catalog (${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}), temp dir ${tmp}`);
  if (ONLY.has('1')) await latencyFigures();
  if (ONLY.has('2') || ONLY.has('3')) await startupAndCompaction();
  if (ONLY.has('4')) await uploadsFigure();
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => fs.rmSync(tmp, { recursive: true, force: true }));
