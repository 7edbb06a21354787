// Replay of journal records onto CongoDB's memory storage (the adapter's maps), and the parts of
// the (patched) MemoryStorageAdapter the journaled adapter builds on; see patches/.
import { MemoryStorageAdapter } from '@push.rocks/smartmongo/dist_ts/congodb/index.js';
import { idKey } from '@push.rocks/smartmongo/dist_ts/congodb/engine/BsonKeys.js';
import type { Doc, IndexSpec, JournalRecord } from './journal-records.js';

/** The parts of the (patched) MemoryStorageAdapter this subclass builds on; see patches/. */
export interface MemoryAdapterInternals {
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
export const MemoryAdapterBase = MemoryStorageAdapter as unknown as new () => MemoryAdapterInternals;

type ReplayTarget = Pick<MemoryAdapterInternals, 'databases' | 'indexes'>;

/** Applies one record as it was journaled (physical: post-images and deletes by _id), without journaling it again. */
export function applyRecord(state: ReplayTarget, ensureCollection: (db: string, c: string) => Map<string, Doc>, record: JournalRecord): void {
  switch (record.o) {
    case 'put':
      ensureCollection(record.db, record.c).set(idKey(record.d._id), record.d);
      break;
    case 'del':
      state.databases.get(record.db)?.get(record.c)?.delete(idKey(record.id));
      break;
    case 'cd':
      if (!state.databases.has(record.db)) {
        state.databases.set(record.db, new Map());
        state.indexes.set(record.db, new Map());
      }
      break;
    case 'dd':
      state.databases.delete(record.db);
      state.indexes.delete(record.db);
      break;
    case 'cc':
      ensureCollection(record.db, record.c);
      break;
    case 'dc':
      state.databases.get(record.db)?.delete(record.c);
      state.indexes.get(record.db)?.delete(record.c);
      break;
    case 'rc': {
      const colls = state.databases.get(record.db);
      const docs = colls?.get(record.c);
      if (!colls || !docs) break;
      colls.set(record.to, docs);
      colls.delete(record.c);
      const specs = state.indexes.get(record.db)!;
      specs.set(record.to, specs.get(record.c) ?? [{ name: '_id_', key: { _id: 1 }, unique: true }]);
      specs.delete(record.c);
      break;
    }
    case 'si': {
      ensureCollection(record.db, record.c);
      const specs = state.indexes.get(record.db)!.get(record.c)!;
      const at = specs.findIndex((s) => s.name === record.spec.name);
      if (at >= 0) specs[at] = record.spec;
      else specs.push(record.spec);
      break;
    }
    case 'di': {
      const specs = state.indexes.get(record.db)?.get(record.c);
      const at = specs?.findIndex((s) => s.name === record.name) ?? -1;
      if (at >= 0) specs!.splice(at, 1);
      break;
    }
    case 'ix':
      ensureCollection(record.db, record.c);
      state.indexes.get(record.db)!.set(record.c, record.specs);
      break;
    default:
      break;
  }
}
