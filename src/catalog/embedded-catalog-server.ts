// Embedded MongoDB-wire-compatible catalog server for machines without mongod (dev, CI, the
// single-box demo). It is CongoDB from @push.rocks/smartmongo, patched in patches/ (unique
// indexes, E11000, polling monitor, string _ids, key lookups). Production uses real MongoDB.
//
// With `dataDir` every acknowledged write is journaled to disk first (src/catalog/journal/, see
// docs/durability.md); without it the catalog lives in memory (tests). exportCatalogSnapshot() /
// importCatalogSnapshot() copy a catalog through the ordinary driver (also against real
// MongoDB); start-up migrates the JSON snapshot that older versions wrote instead of a journal.
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import mongoose from 'mongoose';
import { CongoServer } from '@push.rocks/smartmongo/dist_ts/congodb/index.js';
import { durableFiles, renameDurably, writeAll, writeFileSynced } from '../durable-files.js';
import { createLogger } from '../logger.js';
import { DurableCongoServer } from './journal/durable-congo-server.js';
import type { CompactionReport, JournalLoadReport, JournalLogger } from './journal/journaled-storage-adapter.js';

// The driver and BSON library mongoose itself uses: documents parsed here serialize without
// cross-version surprises (mongodb is not a direct dependency of ours).
const { MongoClient, BSON } = mongoose.mongo;
const { EJSON } = BSON;
type MongoClientT = InstanceType<typeof MongoClient>;
type Document = mongoose.mongo.Document;

export interface EmbeddedCatalogServerOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; loopback only by default (the server has no authentication). */
  host?: string;
  /** Database name put into the returned URL. */
  dbName?: string;
  /** Directory of the journal and snapshots; the catalog is memory-only without it. */
  dataDir?: string;
  /**
   * A JSON snapshot written by an older version (exportCatalogSnapshot); imported once into an
   * empty `dataDir`, then renamed to `<file>.migrated`.
   */
  legacySnapshotFile?: string;
  /** Compaction threshold in bytes of journal since the last snapshot (tests use small ones). */
  compactMinBytes?: number;
  /** Where the journal reports torn records, damage and compactions (default: a pino logger). */
  log?: JournalLogger;
  /** The journal stopped for good after a failed write or sync (see JournaledStorageOptions.onFailure). */
  onJournalFailure?: (err: Error) => void;
}

export interface EmbeddedCatalogServer {
  /** Connection string for mongoose/the driver, including the options the emulator needs. */
  url: string;
  host: string;
  port: number;
  /** Present when started with `dataDir`. */
  journal?: {
    loadReport: JournalLoadReport;
    migrated: CatalogSnapshotSummary | null;
    compact(): Promise<CompactionReport>;
    stats(): { appendedBytes: number; records: number; syncs: number; uncoveredBytes: number; snapshotBytes: number };
  };
  stop(): Promise<void>;
}

export interface CatalogSnapshotSummary {
  file: string;
  collections: number;
  documents: number;
}

/**
 * Starts CongoDB in this process (memory storage, ~250 ms).
 * URL options: `directConnection=true` (a standalone, never a replica-set discovery) and
 * `serverMonitoringMode=poll` (never the streaming hello protocol, which CongoDB does not
 * implement; the patch also hides topologyVersion, so either alone suffices).
 */
export async function startEmbeddedCatalogServer(options: EmbeddedCatalogServerOptions = {}): Promise<EmbeddedCatalogServer> {
  const host = options.host ?? '127.0.0.1';
  const dbName = options.dbName ?? 'pictor';
  const port0 = options.port ?? 0;
  const migrating = options.dataDir && options.legacySnapshotFile ? await prepareMigration(options.dataDir, options.legacySnapshotFile) : false;
  const durable = options.dataDir
    ? new DurableCongoServer({ host, port: port0, dir: options.dataDir, log: options.log ?? createLogger('catalog-journal'), compactMinBytes: options.compactMinBytes, onFailure: options.onJournalFailure })
    : null;
  const server = durable ?? new CongoServer({ host, port: port0, storage: 'memory' });
  await server.start();
  // The patched server reports the bound port; fall back to the listening socket otherwise.
  let port = server.port;
  if (!port) {
    const address = (server as unknown as { server?: { address(): unknown } }).server?.address();
    port = typeof address === 'object' && address !== null ? (address as { port: number }).port : 0;
  }
  if (!port) {
    await server.stop();
    throw new Error('embedded catalog server: could not determine the listening port');
  }
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const url = `mongodb://${urlHost}:${port}/${dbName}?directConnection=true&serverMonitoringMode=poll`;
  let migrated: CatalogSnapshotSummary | null = null;
  if (migrating && options.dataDir && options.legacySnapshotFile) {
    try {
      migrated = await finishMigration(url, options.dataDir, options.legacySnapshotFile);
    } catch (err) {
      await server.stop();
      throw err;
    }
  }
  let stopped: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    journal: durable
      ? {
          loadReport: durable.journal.loadReport!,
          migrated,
          compact: () => durable.journal.compact(),
          stats: () => durable.journal.journalStats(),
        }
      : undefined,
    stop: () => (stopped ??= server.stop()),
  };
}

const MIGRATION_MARKER = 'migrating-from-json-snapshot';

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === 'ENOENT';
}

/**
 * Decides before the server starts whether a legacy JSON snapshot is to be imported: only into an
 * empty journal directory, or again from scratch when a previous import was interrupted (the
 * marker file is still there). Returns true when finishMigration must run after the start.
 */
async function prepareMigration(dataDir: string, legacyFile: string): Promise<boolean> {
  try {
    await stat(legacyFile);
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const entries = await readdir(dataDir);
  if (entries.includes(MIGRATION_MARKER)) {
    for (const name of entries) if (name !== MIGRATION_MARKER) await rm(path.join(dataDir, name), { recursive: true, force: true });
  } else if (entries.length > 0) {
    return false; // the journal already holds the catalog; the JSON file is stale
  }
  // Its name is durable before any imported record is: the journal syncs this folder when it
  // creates its first segment, before anything in it is acknowledged.
  await writeFileSynced(path.join(dataDir, MIGRATION_MARKER), Buffer.from(`${legacyFile}\n`));
  return true;
}

async function finishMigration(url: string, dataDir: string, legacyFile: string): Promise<CatalogSnapshotSummary | null> {
  // Imported through the driver, so every document is journaled like any other write.
  const summary = await importCatalogSnapshot(url, legacyFile);
  await renameDurably(legacyFile, `${legacyFile}.migrated`);
  // Once the JSON file is renamed the marker is never read again: its removal need not be durable.
  await rm(path.join(dataDir, MIGRATION_MARKER));
  return summary;
}

const SNAPSHOT_FORMAT = 'pictor-catalog-snapshot';
const SNAPSHOT_VERSION = 1;
const INSERT_BATCH = 500;
const WRITE_CHUNK = 1 << 20;

async function withClient<T>(mongoUrl: string, fn: (client: MongoClientT) => Promise<T>): Promise<T> {
  const client = new MongoClient(mongoUrl, { serverSelectionTimeoutMS: 10_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

// Index specs as createIndexes accepts them (listIndexes adds v/ns).
function restorableIndexes(indexes: Document[]): Document[] {
  return indexes
    .filter((idx) => idx.name !== '_id_')
    .map((idx) => {
      const spec: Document = { ...idx };
      delete spec.v;
      delete spec.ns;
      return spec;
    });
}

/**
 * Writes every collection of the URL's database (documents and index definitions) to `file` as
 * EJSON lines (canonical mode, so ObjectId/Date/Binary/Int32/Long/Double keep their types).
 * Written to a temp file, fsynced and renamed over `file`: a crash never leaves a torn snapshot.
 * Each collection is read by one query; collections are not captured at one common instant, so
 * take the snapshot when writers are quiet (at shutdown) or accept that skew.
 */
export async function exportCatalogSnapshot(mongoUrl: string, file: string): Promise<CatalogSnapshotSummary> {
  const target = path.resolve(file);
  const dir = path.dirname(target);
  await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(tmp, 'w', 0o600);
  let pending: string[] = [];
  let pendingSize = 0;
  const flush = async () => {
    if (pending.length === 0) return;
    const chunk = pending.join('');
    pending = [];
    pendingSize = 0;
    await writeAll(handle, Buffer.from(chunk));
  };
  const line = async (value: unknown) => {
    const text = EJSON.stringify(value, { relaxed: false }) + '\n';
    pending.push(text);
    pendingSize += text.length;
    if (pendingSize >= WRITE_CHUNK) await flush();
  };
  try {
    const summary = await withClient(mongoUrl, async (client) => {
      const db = client.db();
      await line({ format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, database: db.databaseName, exportedAt: new Date() });
      const infos = await db.listCollections({}, { nameOnly: false }).toArray();
      let collections = 0;
      let documents = 0;
      for (const info of infos) {
        // Views have no documents of their own; system collections belong to the server.
        if ((info.type && info.type !== 'collection') || info.name.startsWith('system.')) continue;
        const coll = db.collection(info.name);
        const indexes = restorableIndexes(await coll.listIndexes().toArray());
        const collOptions = info.options && Object.keys(info.options).length > 0 ? info.options : undefined;
        await line({ collection: info.name, options: collOptions, indexes });
        collections++;
        // promoteValues false: keep Int32/Double/Long distinct instead of JS numbers
        for await (const doc of coll.find({}, { promoteValues: false, promoteLongs: false })) {
          await line({ c: info.name, d: doc });
          documents++;
        }
      }
      await line({ end: true, collections, documents });
      return { file: target, collections, documents };
    });
    await flush();
    await durableFiles.sync(handle);
    await handle.close();
    await renameDurably(tmp, target);
    return summary;
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}

async function lastLine(file: string): Promise<string> {
  const { size } = await stat(file);
  const length = Math.min(size, 64 * 1024);
  const handle = await open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    await handle.read(buf, 0, length, size - length);
    const lines = buf.toString('utf8').split('\n').filter((l) => l.trim() !== '');
    return lines[lines.length - 1] ?? '';
  } finally {
    await handle.close();
  }
}

function isMissingFile(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === 'ENOENT';
}

/**
 * Restores a snapshot written by exportCatalogSnapshot into the URL's database. Returns null
 * when `file` does not exist (first start). Refuses (throws) when the database already holds
 * documents, so it never merges into or duplicates live data; index definitions the current
 * code already created with other options are left as they are (code 85/86).
 */
export async function importCatalogSnapshot(mongoUrl: string, file: string): Promise<CatalogSnapshotSummary | null> {
  const source = path.resolve(file);
  let trailer: string;
  try {
    trailer = await lastLine(source);
  } catch (err) {
    if (isMissingFile(err)) return null;
    throw err;
  }
  // Check completeness before touching the database.
  let end: Document | undefined;
  try {
    end = EJSON.parse(trailer, { relaxed: false }) as Document;
  } catch {
    end = undefined; // a cut-off line
  }
  if (!end?.end) throw new Error(`catalog snapshot ${source} is incomplete (no end record)`);

  return withClient(mongoUrl, async (client) => {
    const db = client.db();
    for (const info of await db.listCollections({}, { nameOnly: true }).toArray()) {
      if (info.name.startsWith('system.')) continue;
      if ((await db.collection(info.name).countDocuments({}, { limit: 1 })) > 0) {
        throw new Error(`refusing to import catalog snapshot: database ${db.databaseName} is not empty (collection ${info.name})`);
      }
    }
    const lines = createInterface({ input: createReadStream(source, { encoding: 'utf8' }), crlfDelay: Infinity });
    let header: Document | undefined;
    let batch: Document[] = [];
    let batchCollection = '';
    let collections = 0;
    let documents = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      await db.collection(batchCollection).insertMany(batch, { ordered: true });
      documents += batch.length;
      batch = [];
    };
    for await (const text of lines) {
      if (text.trim() === '') continue;
      const record = EJSON.parse(text, { relaxed: false }) as Document;
      if (!header) {
        // canonical EJSON parses numbers as Int32/Double wrappers, hence Number()
        if (record.format !== SNAPSHOT_FORMAT || Number(record.version) !== SNAPSHOT_VERSION) {
          throw new Error(`${source} is not a catalog snapshot (format ${String(record.format)} v${String(record.version)})`);
        }
        header = record;
      } else if (typeof record.c === 'string') {
        if (record.c !== batchCollection) await flush();
        batchCollection = record.c;
        batch.push(record.d as Document);
        if (batch.length >= INSERT_BATCH) await flush();
      } else if (typeof record.collection === 'string') {
        await flush();
        await restoreCollection(db, record.collection, record.options as Document | undefined, (record.indexes ?? []) as Document[]);
        collections++;
      } else if (record.end) {
        break;
      }
    }
    await flush();
    return { file: source, collections, documents };
  });
}

async function restoreCollection(db: mongoose.mongo.Db, name: string, options: Document | undefined, indexes: Document[]): Promise<void> {
  try {
    await db.createCollection(name, options ?? {});
  } catch (err) {
    if ((err as { code?: number }).code !== 48) throw err; // NamespaceExists: created empty by the app
  }
  // Indexes before documents, so unique constraints hold for the restored data too.
  for (const spec of indexes) {
    try {
      await db.collection(name).createIndexes([spec as mongoose.mongo.IndexDescription]);
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code !== 85 && code !== 86) throw err; // option conflicts: keep the app's definition
    }
  }
}
