// Shared by the journal tests: a journaled catalog started in this process, its documents, and
// the record boundaries of a journal file.
import fs from 'node:fs';
import path from 'node:path';
import mongoose from 'mongoose';
import { startEmbeddedCatalogServer, type EmbeddedCatalogServer } from '../../../src/catalog/embedded-catalog-server.js';
import type { JournalLogger } from '../../../src/catalog/journal/journaled-storage-adapter.js';

const { MongoClient } = mongoose.mongo;

export const quietLog: JournalLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function startCatalog(dataDir: string, compactMinBytes?: number): Promise<EmbeddedCatalogServer> {
  return startEmbeddedCatalogServer({ dataDir, log: quietLog, compactMinBytes });
}

export async function withDb<T>(url: string, fn: (db: mongoose.mongo.Db) => Promise<T>): Promise<T> {
  const client = new MongoClient(url);
  await client.connect();
  try {
    return await fn(client.db());
  } finally {
    await client.close();
  }
}

/** Inserts documents `{_id: i}` for every i in [from, to), one command each (one record each). */
export async function insertRange(url: string, from: number, to: number): Promise<void> {
  await withDb(url, async (db) => {
    for (let i = from; i < to; i++) await db.collection('t').insertOne({ _id: i as never, v: `value-${i}` });
  });
}

/** The _ids of collection t, sorted. */
export async function ids(url: string): Promise<number[]> {
  return withDb(url, async (db) => (await db.collection('t').find({}).toArray()).map((d) => Number(d._id)).sort((a, b) => a - b));
}

export const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

/** Start offsets of the records of a journal file, and its length at the end. */
export function boundaries(bytes: Buffer): number[] {
  const out = [0];
  while (out.at(-1)! < bytes.length) out.push(out.at(-1)! + 8 + bytes.readUInt32LE(out.at(-1)!));
  return out;
}

export const journalFiles = (dir: string, kind: 'journal' | 'snapshot'): string[] =>
  fs
    .readdirSync(dir)
    .filter((n) => new RegExp(`^${kind}-\\d+\\.(log|bson)$`).test(n))
    .sort()
    .map((n) => path.join(dir, n));
