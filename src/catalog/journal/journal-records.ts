// What a journal segment or a snapshot holds: one BSON document per frame (frames.ts).
import { plugins } from '@push.rocks/smartmongo/dist_ts/congodb/index.js';

export type Doc = Record<string, unknown> & { _id?: unknown };
export interface IndexSpec {
  name: string;
  key: Record<string, unknown>;
  [option: string]: unknown;
}

/** Journal record kinds (field `o`). */
export type JournalRecord =
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

export const SNAPSHOT_VERSION = 1;

export const encodeRecord = (record: JournalRecord): Uint8Array => plugins.bson.serialize(record);
export const decodeRecord = (payload: Buffer): JournalRecord => plugins.bson.deserialize(payload) as JournalRecord;
