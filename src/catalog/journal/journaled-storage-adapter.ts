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
import { open, readFile, rm, truncate } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { durableFiles, mkdirDurably } from '../../durable-files.js';
import { encodeFrame } from './frames.js';
import { checkSegment, checkSnapshot } from './journal-damage.js';
import { inDir, listJournalDir, segmentName, snapshotName } from './journal-files.js';
import { encodeRecord, type Doc, type IndexSpec, type JournalRecord } from './journal-records.js';
import { JournalWriter } from './journal-writer.js';
import { applyRecord, MemoryAdapterBase } from './replay.js';
import { writeSnapshot } from './snapshot-writer.js';



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
  /** Called once the journal has stopped for good (a write or sync failed): the process should exit and start again from the journal. */
  onFailure?: (err: Error) => void;
}

export interface JournalLoadReport {
  snapshot: { file: string; documents: number } | null;
  segments: number;
  records: number;
  bytes: number;
  /** Bytes cut off the end of the last segment (a torn append from a crash), with the reason. */
  droppedTail: { file: string; offset: number; bytes: number; reason: string } | null;
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
  private readonly onFailure: ((err: Error) => void) | undefined;
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
    this.onFailure = options.onFailure;
  }

  /** The journal position a reply must wait for (everything applied so far). */
  get journalPosition(): number {
    return this.writer?.position ?? 0;
  }

  /** Set once the journal has stopped for good (a write or sync failed). */
  get failed(): Error | null {
    return this.writer?.failed ?? null;
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
    await mkdirDurably(this.dir, 0o700);
    this.loadReport = await this.load();
    const { segments, snapshots } = await listJournalDir(this.dir);
    const next = Math.max(0, ...segments, ...snapshots) + 1;
    this.writer = new JournalWriter(this.dir, next, (err) => {
      this.log.error({ err }, 'catalog journal failed; the catalog stops acknowledging commands');
      this.onFailure?.(err);
    });
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
      frame = encodeFrame(encodeRecord(record));
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
    applyRecord(this, (db, c) => super.ensureCollection(db, c), record);
  }

  /** Newest snapshot, then the segments from it; damage anywhere (but a torn tail) stops the start (journal-damage.ts). */
  private async load(): Promise<JournalLoadReport> {
    const started = performance.now();
    const listing = await listJournalDir(this.dir);
    for (const name of listing.temporary) await rm(inDir(this.dir, name), { force: true });
    const report: JournalLoadReport = { snapshot: null, segments: 0, records: 0, bytes: 0, droppedTail: null, ms: 0 };

    const snapshotSeq = listing.snapshots.at(-1);
    if (snapshotSeq !== undefined) {
      const file = inDir(this.dir, snapshotName(snapshotSeq));
      const buf = await readFile(file);
      const { records, documents } = checkSnapshot(buf, file);
      for (const record of records) this.apply(record);
      report.snapshot = { file, documents };
      this.snapshotBytes = buf.length;
    }

    const segments = listing.segments.filter((seq) => snapshotSeq === undefined || seq >= snapshotSeq);
    const contents = [];
    // Every file is checked before anything is applied or cut: a refused start changes nothing.
    for (let i = 0; i < segments.length; i++) {
      const file = inDir(this.dir, segmentName(segments[i]));
      const buf = await readFile(file);
      contents.push({ file, buf, ...checkSegment(buf, file, i === segments.length - 1) });
    }
    for (const { file, buf, records, tornTail } of contents) {
      for (const record of records) this.apply(record);
      report.segments++;
      report.records += records.length;
      report.bytes += buf.length;
      if (!tornTail) continue;
      // Cut the segment at its last whole record, so a later start does not read past it again.
      await truncate(file, tornTail.offset);
      await syncFile(file);
      report.bytes -= tornTail.bytes;
      report.droppedTail = { file, ...tornTail };
      this.log.warn(report.droppedTail, 'catalog journal: dropped a torn record at the end (an append cut off by a crash; it was never acknowledged)');
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
    const planMs = performance.now() - started; // rotation and the plan: one synchronous step
    const written = await writeSnapshot({
      dir: this.dir,
      seq,
      plan,
      sliceMs: this.compactSliceMs,
      closing: () => this.closing,
      // What the snapshot shows must be durable in the journal too, or a crash could bring back
      // a state no acknowledged history led to.
      beforeCommit: async () => {
        await writer.whenDurable(writer.position);
      },
    });
    // The snapshot is on disk and checked: only now are the files it covers deleted.
    const listing = await listJournalDir(this.dir);
    let segmentsRemoved = 0;
    for (const old of listing.segments.filter((s) => s < seq)) {
      await rm(inDir(this.dir, segmentName(old)), { force: true });
      segmentsRemoved++;
    }
    for (const old of listing.snapshots.filter((s) => s < seq)) await rm(inDir(this.dir, snapshotName(old)), { force: true });
    // No directory sync here: nothing acknowledged depends on the new snapshot's name or on the
    // deletions. Until the next sync of this folder (the writer syncs it before anything in a new
    // segment is acknowledged) a power cut brings back the old snapshot and segments, which hold
    // the same state; any sync records the rename together with the deletions made before it.
    this.uncoveredFrom = coveredUpTo;
    this.snapshotBytes = written.bytes;
    const report: CompactionReport = {
      seq,
      documents: written.documents,
      bytes: written.bytes,
      ms: performance.now() - started,
      longestSliceMs: Math.max(planMs, written.longestSliceMs),
      longestSliceCpuMs: written.longestSliceCpuMs,
      segmentsRemoved,
    };
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
