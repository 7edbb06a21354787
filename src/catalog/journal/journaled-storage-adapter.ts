// CongoDB's memory storage with a write-ahead journal. Every mutation appends a PHYSICAL record
// (the document's post-image, a delete by _id, or a collection/index change) right after it is
// applied in memory; replaying physical records is deterministic (server-made _ids, timestamps
// and upsert results are in the record, not recomputed). DurableCongoServer holds each reply
// until the journal is synced past the command, so nothing is acknowledged before it is on disk.
//
// Start-up = newest snapshot + the segments numbered from it. Compaction rotates to a new segment,
// then writes a snapshot by walking the live maps in small slices. The walk is fuzzy (documents
// are read at different moments), which is safe because every change after the rotation is also
// in the new segment as a full post-image or delete, replayed over the snapshot in order.
import { mkdir, open, readFile, rename, rm, truncate } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises';
import { MemoryStorageAdapter, plugins } from '@push.rocks/smartmongo/dist_ts/congodb/index.js';
import { idKey } from '@push.rocks/smartmongo/dist_ts/congodb/engine/BsonKeys.js';
import { encodeFrame, scanFrames } from './frames.js';
import { durableFiles, renameDurably, writeFileSynced } from '../../durable-files.js';
import { inDir, listJournalDir, segmentName, snapshotName } from './journal-files.js';
import { JournalWriter } from './journal-writer.js';

const { serialize, deserialize } = plugins.bson;
type Doc = Record<string, unknown> & { _id?: unknown };
interface IndexSpec {
  name: string;
  key: Record<string, unknown>;
  [option: string]: unknown;
}

/** The parts of the (patched) MemoryStorageAdapter this subclass builds on; see patches/. */
interface MemoryAdapterInternals {
  databases: Map<string, Map<string, Map<string, Doc>>>;
  indexes: Map<string, Map<string, IndexSpec[]>>;
  uniqueState: Map<string, unknown>;
  ensureCollection(db: string, coll: string): Map<string, Doc>;
  findAll(db: string, coll: string): Promise<Doc[]>;
  findById(db: string, coll: string, id: unknown): Promise<Doc | null>;
  findCandidates(db: string, coll: string, filter: unknown): Doc[] | null;
  count(db: string, coll: string): Promise<number>;
  getUniqueState(db: string, coll: string): unknown[];
  initialize(): Promise<void>;
  close(): Promise<void>;
  createDatabase(db: string): Promise<void>;
  dropDatabase(db: string): Promise<boolean>;
  createCollection(db: string, coll: string): Promise<void>;
  dropCollection(db: string, coll: string): Promise<boolean>;
  renameCollection(db: string, from: string, to: string): Promise<void>;
  insertOne(db: string, coll: string, doc: Doc): Promise<Doc>;
  updateById(db: string, coll: string, id: unknown, doc: Doc): Promise<boolean>;
  deleteById(db: string, coll: string, id: unknown): Promise<boolean>;
  saveIndex(db: string, coll: string, name: string, spec: Omit<IndexSpec, 'name'>): Promise<void>;
  dropIndex(db: string, coll: string, name: string): Promise<boolean>;
}
const MemoryAdapterBase = MemoryStorageAdapter as unknown as new () => MemoryAdapterInternals;

/** Journal record kinds (field `o`). */
type JournalRecord =
  | { o: 'put'; db: string; c: string; d: Doc }
  | { o: 'del'; db: string; c: string; id: unknown }
  | { o: 'cd' | 'dd'; db: string }
  | { o: 'cc' | 'dc'; db: string; c: string }
  | { o: 'rc'; db: string; c: string; to: string }
  | { o: 'si'; db: string; c: string; spec: IndexSpec }
  | { o: 'di'; db: string; c: string; name: string }
  | { o: 'ix'; db: string; c: string; specs: IndexSpec[] }
  | { o: 'snapshot'; v: number; seq: number }
  | { o: 'end'; documents: number };

const SNAPSHOT_VERSION = 1;

export interface JournalLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface JournaledStorageOptions {
  dir: string;
  log: JournalLogger;
  /** Compact once the segments since the last snapshot exceed max(this, the snapshot's size). */
  compactMinBytes?: number;
  /** Longest synchronous slice of snapshot writing before yielding to commands. */
  compactSliceMs?: number;
}

export interface JournalLoadReport {
  snapshot: { file: string; documents: number } | null;
  segments: number;
  records: number;
  bytes: number;
  /** Bytes cut off the end of the last segment (a torn append from a crash), with the reason. */
  droppedTail: { file: string; offset: number; bytes: number; reason: string } | null;
  /** Damage before the end of the journal; the named files were set aside, not deleted. */
  corruption: { file: string; offset: number; reason: string; setAside: string[] } | null;
  ms: number;
}

export interface CompactionReport {
  seq: number;
  documents: number;
  bytes: number;
  ms: number;
  /** Longest synchronous stretch of the compaction on the event loop (what a command could wait). */
  longestSliceMs: number;
  /**
   * The same stretch in CPU time of this process: on a machine with more runnable processes
   * than cores the wall time also counts time the process was not scheduled at all.
   */
  longestSliceCpuMs: number;
  segmentsRemoved: number;
}

export class JournaledStorageAdapter extends MemoryAdapterBase {
  private writer: JournalWriter | null = null;
  private readonly dir: string;
  private readonly log: JournalLogger;
  private readonly compactMinBytes: number;
  private readonly compactSliceMs: number;
  /** Journal position at the start of the segments the newest snapshot does not cover. */
  private uncoveredFrom = 0;
  private snapshotBytes = 0;
  private compaction: Promise<CompactionReport> | null = null;
  private closing = false;
  loadReport: JournalLoadReport | null = null;
  lastCompaction: CompactionReport | null = null;
  // What a read-only command must wait for: the journal positions of the data it looked at.
  // (A write waits for everything up to its own records.) Positions are "appended up to".
  private readonly docPositions = new WeakMap<object, number>();
  /** Last put/delete per namespace: a full scan or count sees all of the collection. */
  private readonly changePositions = new Map<string, number>();
  /** Last delete per namespace: a key lookup that finds nothing may be looking at one. */
  private readonly removalPositions = new Map<string, number>();
  /** Last database/collection/index change: seen by every read. */
  private structuralPosition = 0;
  private readHorizon = 0;

  constructor(options: JournaledStorageOptions) {
    super();
    this.dir = options.dir;
    this.log = options.log;
    this.compactMinBytes = options.compactMinBytes ?? 64 * 1024 * 1024;
    this.compactSliceMs = options.compactSliceMs ?? 2;
  }

  /** The journal position a reply must wait for (everything applied so far). */
  get journalPosition(): number {
    return this.writer?.position ?? 0;
  }

  whenDurable(position: number): Promise<void> | null {
    return this.writer ? this.writer.whenDurable(position) : null;
  }

  /** Called before each command; readPosition() afterwards tells what its reads depended on. */
  beginCommand(): void {
    this.readHorizon = this.structuralPosition;
  }

  readPosition(): number {
    return this.readHorizon;
  }

  private sawNamespace(db: string, c: string): void {
    this.readHorizon = Math.max(this.readHorizon, this.changePositions.get(ns(db, c)) ?? 0);
  }

  private sawDocuments(db: string, c: string, docs: Doc[]): void {
    let horizon = Math.max(this.readHorizon, this.removalPositions.get(ns(db, c)) ?? 0);
    for (const doc of docs) horizon = Math.max(horizon, this.docPositions.get(doc) ?? 0);
    this.readHorizon = horizon;
  }

  override async findAll(db: string, c: string): Promise<Doc[]> {
    this.sawNamespace(db, c);
    return super.findAll(db, c);
  }

  override async count(db: string, c: string): Promise<number> {
    this.sawNamespace(db, c);
    return super.count(db, c);
  }

  override findCandidates(db: string, c: string, filter: unknown): Doc[] | null {
    const docs = super.findCandidates(db, c, filter);
    if (docs) this.sawDocuments(db, c, docs);
    return docs;
  }

  override async findById(db: string, c: string, id: unknown): Promise<Doc | null> {
    const doc = await super.findById(db, c, id);
    this.sawDocuments(db, c, doc ? [doc] : []);
    return doc;
  }

  journalStats() {
    return { ...this.writer!.stats(), uncoveredBytes: this.journalPosition - this.uncoveredFrom, snapshotBytes: this.snapshotBytes };
  }

  // ------------------------------------------------------------------------------------------
  // Start and stop

  override async initialize(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    this.loadReport = await this.load();
    const { segments, snapshots } = await listJournalDir(this.dir);
    const next = Math.max(0, ...segments, ...snapshots) + 1;
    this.writer = new JournalWriter(this.dir, next, (err) => this.log.error({ err }, 'catalog journal failed; the catalog stops acknowledging commands'));
    this.uncoveredFrom = -this.loadReport.bytes; // replayed segment bytes count towards compaction
    this.maybeCompact();
  }

  override async close(): Promise<void> {
    this.closing = true;
    await this.compaction?.catch(() => undefined);
    await this.writer?.close();
  }

  // ------------------------------------------------------------------------------------------
  // Mutations: apply in memory (the base class), then journal the physical result

  override async createDatabase(db: string): Promise<void> {
    const existed = this.databases.has(db);
    await super.createDatabase(db);
    if (!existed) this.append({ o: 'cd', db });
  }

  override async dropDatabase(db: string): Promise<boolean> {
    const existed = await super.dropDatabase(db);
    if (existed) this.append({ o: 'dd', db });
    return existed;
  }

  override async createCollection(db: string, c: string): Promise<void> {
    const existed = this.databases.get(db)?.has(c) ?? false;
    await super.createCollection(db, c);
    if (!existed) this.append({ o: 'cc', db, c });
  }

  // CongoDB creates collections implicitly, also on reads (findAll, count)
  override ensureCollection(db: string, c: string): Map<string, Doc> {
    const existed = this.databases.get(db)?.has(c) ?? false;
    const collection = super.ensureCollection(db, c);
    if (!existed) this.append({ o: 'cc', db, c });
    return collection;
  }

  override async dropCollection(db: string, c: string): Promise<boolean> {
    const existed = await super.dropCollection(db, c);
    if (existed) this.append({ o: 'dc', db, c });
    return existed;
  }

  override async renameCollection(db: string, from: string, to: string): Promise<void> {
    await super.renameCollection(db, from, to);
    this.append({ o: 'rc', db, c: from, to });
  }

  // insertMany and deleteByIds go through these two per document
  override async insertOne(db: string, c: string, doc: Doc): Promise<Doc> {
    const stored = await super.insertOne(db, c, doc);
    this.append({ o: 'put', db, c, d: stored });
    return stored;
  }

  override async deleteById(db: string, c: string, id: unknown): Promise<boolean> {
    const deleted = await super.deleteById(db, c, id);
    if (deleted) this.append({ o: 'del', db, c, id });
    return deleted;
  }

  override async updateById(db: string, c: string, id: unknown, doc: Doc): Promise<boolean> {
    const updated = await super.updateById(db, c, id, doc);
    if (updated) this.append({ o: 'put', db, c, d: doc });
    return updated;
  }

  override async saveIndex(db: string, c: string, name: string, spec: Omit<IndexSpec, 'name'>): Promise<void> {
    await super.saveIndex(db, c, name, spec);
    this.append({ o: 'si', db, c, spec: { name, ...spec } as IndexSpec });
  }

  override async dropIndex(db: string, c: string, name: string): Promise<boolean> {
    const dropped = await super.dropIndex(db, c, name);
    if (dropped) this.append({ o: 'di', db, c, name });
    return dropped;
  }

  private append(record: JournalRecord): void {
    if (!this.writer) return; // replaying at start: the records are already on disk
    let frame: Buffer;
    try {
      frame = encodeFrame(serialize(record));
    } catch (err) {
      // Applied in memory but not journaled: stop acknowledging rather than diverge silently.
      this.writer.abort(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
    this.writer.append(frame);
    const position = this.writer.position;
    switch (record.o) {
      case 'put':
        this.docPositions.set(record.d, position);
        this.changePositions.set(ns(record.db, record.c), position);
        break;
      case 'del':
        this.changePositions.set(ns(record.db, record.c), position);
        this.removalPositions.set(ns(record.db, record.c), position);
        break;
      default:
        this.structuralPosition = position;
    }
    this.maybeCompact();
  }

  // ------------------------------------------------------------------------------------------
  // Replay

  private apply(record: JournalRecord): void {
    switch (record.o) {
      case 'put':
        super.ensureCollection(record.db, record.c).set(idKey(record.d._id), record.d);
        break;
      case 'del':
        this.databases.get(record.db)?.get(record.c)?.delete(idKey(record.id));
        break;
      case 'cd':
        if (!this.databases.has(record.db)) {
          this.databases.set(record.db, new Map());
          this.indexes.set(record.db, new Map());
        }
        break;
      case 'dd':
        this.databases.delete(record.db);
        this.indexes.delete(record.db);
        break;
      case 'cc':
        super.ensureCollection(record.db, record.c);
        break;
      case 'dc':
        this.databases.get(record.db)?.delete(record.c);
        this.indexes.get(record.db)?.delete(record.c);
        break;
      case 'rc': {
        const colls = this.databases.get(record.db);
        const docs = colls?.get(record.c);
        if (!colls || !docs) break;
        colls.set(record.to, docs);
        colls.delete(record.c);
        const specs = this.indexes.get(record.db)!;
        specs.set(record.to, specs.get(record.c) ?? [{ name: '_id_', key: { _id: 1 }, unique: true }]);
        specs.delete(record.c);
        break;
      }
      case 'si': {
        super.ensureCollection(record.db, record.c);
        const specs = this.indexes.get(record.db)!.get(record.c)!;
        const at = specs.findIndex((s) => s.name === record.spec.name);
        if (at >= 0) specs[at] = record.spec;
        else specs.push(record.spec);
        break;
      }
      case 'di': {
        const specs = this.indexes.get(record.db)?.get(record.c);
        const at = specs?.findIndex((s) => s.name === record.name) ?? -1;
        if (at >= 0) specs!.splice(at, 1);
        break;
      }
      case 'ix':
        super.ensureCollection(record.db, record.c);
        this.indexes.get(record.db)!.set(record.c, record.specs);
        break;
      default:
        break;
    }
  }

  private async load(): Promise<JournalLoadReport> {
    const started = performance.now();
    const listing = await listJournalDir(this.dir);
    for (const name of listing.temporary) await rm(inDir(this.dir, name), { force: true });
    const report: JournalLoadReport = { snapshot: null, segments: 0, records: 0, bytes: 0, droppedTail: null, corruption: null, ms: 0 };

    const snapshotSeq = listing.snapshots.at(-1);
    if (snapshotSeq !== undefined) {
      const file = inDir(this.dir, snapshotName(snapshotSeq));
      const buf = await readFile(file);
      const scan = scanFrames(buf);
      const records = scan.payloads.map((p) => deserialize(p) as JournalRecord);
      const head = records[0];
      const tail = records.at(-1);
      if (scan.problem || head?.o !== 'snapshot' || Number(head.v) !== SNAPSHOT_VERSION || tail?.o !== 'end') {
        // Written to a temporary name, synced and renamed: damage here is not a crash artefact.
        throw new Error(`catalog snapshot ${file} is damaged (${scan.problem ?? 'missing header or end record'}); restore it from a backup or move it away to start from the journal`);
      }
      for (const record of records) this.apply(record);
      report.snapshot = { file, documents: Number(tail.documents) };
      this.snapshotBytes = buf.length;
    }

    const segments = listing.segments.filter((seq) => snapshotSeq === undefined || seq >= snapshotSeq);
    for (let i = 0; i < segments.length; i++) {
      const file = inDir(this.dir, segmentName(segments[i]));
      const buf = await readFile(file);
      const scan = scanFrames(buf);
      for (const payload of scan.payloads) this.apply(deserialize(payload) as JournalRecord);
      report.segments++;
      report.records += scan.payloads.length;
      report.bytes += scan.validLength;
      if (!scan.problem) continue;
      const last = i === segments.length - 1;
      if (last) {
        // Cut the segment at its last whole record, so a later start does not read past it again.
        await truncate(file, scan.validLength);
        await syncFile(file);
        report.droppedTail = { file, offset: scan.validLength, bytes: buf.length - scan.validLength, reason: scan.problem };
        this.log.warn(report.droppedTail, 'catalog journal: dropped a torn record at the end (an append cut off by a crash; it was never acknowledged)');
      } else {
        // A synced, complete segment damaged afterwards: keep what follows out of the replay
        // (its records may depend on the lost ones) but keep the files for inspection.
        const setAside: string[] = [];
        await writeFileSynced(`${file}.damaged-tail`, buf.subarray(scan.validLength));
        setAside.push(`${file}.damaged-tail`);
        await truncate(file, scan.validLength);
        await syncFile(file);
        for (const later of segments.slice(i + 1)) {
          const from = inDir(this.dir, segmentName(later));
          await rename(from, `${from}.set-aside`);
          setAside.push(`${from}.set-aside`);
        }
        await durableFiles.syncDirectory(this.dir);
        report.corruption = { file, offset: scan.validLength, reason: scan.problem, setAside };
        this.log.error(report.corruption, 'catalog journal: damaged record before the end of the journal; replay stopped there');
        break;
      }
    }

    // Segments and snapshots an interrupted compaction left behind.
    for (const seq of listing.segments) if (snapshotSeq !== undefined && seq < snapshotSeq) await rm(inDir(this.dir, segmentName(seq)), { force: true });
    for (const seq of listing.snapshots) if (seq !== snapshotSeq) await rm(inDir(this.dir, snapshotName(seq)), { force: true });

    // Unique-index state is derived; rebuild it now so a problem shows at start, not on a write.
    this.uniqueState.clear();
    for (const [db, colls] of this.databases) {
      for (const c of colls.keys()) {
        try {
          this.getUniqueState(db, c);
        } catch (err) {
          this.log.error({ err, db, collection: c }, 'catalog journal: replayed data violates a unique index');
        }
      }
    }
    report.ms = performance.now() - started;
    return report;
  }

  // ------------------------------------------------------------------------------------------
  // Compaction

  private maybeCompact(): void {
    if (this.compaction || this.closing || !this.writer || this.writer.failed) return;
    const uncovered = this.writer.position - this.uncoveredFrom;
    if (uncovered < Math.max(this.compactMinBytes, this.snapshotBytes)) return;
    this.compact().catch((err: unknown) => this.log.error({ err }, 'catalog journal: compaction failed (will retry later)'));
  }

  /** Writes a new snapshot and removes the segments it covers; runs alongside commands. */
  compact(): Promise<CompactionReport> {
    // Started on a later turn of the event loop, never inside the command that crossed the limit.
    this.compaction ??= yieldToEventLoop()
      .then(() => this.runCompaction())
      .finally(() => {
        this.compaction = null;
      });
    return this.compaction;
  }

  private async runCompaction(): Promise<CompactionReport> {
    const writer = this.writer!;
    const started = performance.now();
    // Everything appended from here on goes to segment `seq`, which the snapshot does not cover.
    const seq = writer.rotate();
    const coveredUpTo = writer.position;
    const plan = [...this.databases].map(([db, colls]) => ({
      db,
      collections: [...colls].map(([c, docs]) => ({ c, docs, specs: (this.indexes.get(db)?.get(c) ?? []).slice() })),
    }));
    let longestSliceMs = performance.now() - started; // rotation and the plan: one synchronous step
    const final = inDir(this.dir, snapshotName(seq));
    const tmp = `${final}.tmp`;
    const handle = await open(tmp, 'w', 0o600);
    let sliceStart = performance.now();
    let sliceCpu = process.cpuUsage();
    let longestSliceCpuMs = 0;
    let chunks: Buffer[] = [];
    let chunkBytes = 0;
    let bytes = 0;
    let documents = 0;
    const endSlice = () => {
      longestSliceMs = Math.max(longestSliceMs, performance.now() - sliceStart);
      const cpu = process.cpuUsage(sliceCpu);
      longestSliceCpuMs = Math.max(longestSliceCpuMs, (cpu.user + cpu.system) / 1000);
    };
    // Records are added synchronously; only every compactSliceMs (or 1 MiB) the buffered part is
    // written and commands get the event loop, so they wait at most about one slice.
    const add = (record: JournalRecord) => {
      const frame = encodeFrame(serialize(record));
      chunks.push(frame);
      chunkBytes += frame.length;
    };
    const sliceDue = () => chunkBytes >= 1 << 20 || performance.now() - sliceStart >= this.compactSliceMs;
    const writeAndYield = async () => {
      const data = Buffer.concat(chunks);
      chunks = [];
      chunkBytes = 0;
      endSlice();
      await handle.write(data);
      bytes += data.length;
      // As long a pause as the slice took: compaction gets at most about half of the event
      // loop, commands the rest (measured: with only a setImmediate between slices, writes
      // during a compaction of 100,000 documents were ~10x slower at p50 on a busy machine).
      await sleep(this.compactSliceMs);
      sliceStart = performance.now();
      sliceCpu = process.cpuUsage();
    };
    try {
      add({ o: 'snapshot', v: SNAPSHOT_VERSION, seq });
      for (const { db, collections } of plan) {
        add({ o: 'cd', db });
        for (const { c, docs, specs } of collections) {
          add({ o: 'cc', db, c });
          add({ o: 'ix', db, c, specs });
          // Live iteration: documents changed meanwhile are also in segment `seq` (see top).
          for (const d of docs.values()) {
            add({ o: 'put', db, c, d });
            documents++;
            if (sliceDue()) {
              await writeAndYield();
              if (this.closing) throw new Error('catalog closing');
            }
          }
        }
      }
      add({ o: 'end', documents });
      await writeAndYield();
      // What the snapshot shows must be durable in the journal too, or a crash could bring back
      // a state no acknowledged history led to.
      await writer.whenDurable(writer.position);
      await durableFiles.datasync(handle);
      await handle.close();
      await renameDurably(tmp, final);
    } catch (err) {
      await handle.close().catch(() => undefined);
      await rm(tmp, { force: true });
      throw err;
    }
    const listing = await listJournalDir(this.dir);
    let segmentsRemoved = 0;
    for (const old of listing.segments.filter((s) => s < seq)) {
      await rm(inDir(this.dir, segmentName(old)), { force: true });
      segmentsRemoved++;
    }
    for (const old of listing.snapshots.filter((s) => s < seq)) await rm(inDir(this.dir, snapshotName(old)), { force: true });
    await durableFiles.syncDirectory(this.dir);
    this.uncoveredFrom = coveredUpTo;
    this.snapshotBytes = bytes;
    const report: CompactionReport = { seq, documents, bytes, ms: performance.now() - started, longestSliceMs, longestSliceCpuMs, segmentsRemoved };
    this.lastCompaction = report;
    this.log.info({ ...report }, 'catalog journal: compacted');
    return report;
  }
}

const ns = (db: string, c: string): string => `${db}\u0000${c}`;

async function syncFile(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await durableFiles.sync(handle);
  } finally {
    await handle.close();
  }
}
