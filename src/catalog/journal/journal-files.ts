// File layout of a journaled catalog directory:
//   journal-<seq>.log      append-only segments, replayed in sequence order
//   snapshot-<seq>.bson    the whole catalog; covers every segment numbered below <seq>
//   *.tmp                  a snapshot being written (removed at start: never renamed into place)
import { readdir } from 'node:fs/promises';
import path from 'node:path';

const SEGMENT = /^journal-(\d{12})\.log$/;
const SNAPSHOT = /^snapshot-(\d{12})\.bson$/;

export const segmentName = (seq: number): string => `journal-${String(seq).padStart(12, '0')}.log`;
export const snapshotName = (seq: number): string => `snapshot-${String(seq).padStart(12, '0')}.bson`;

export interface JournalDirListing {
  segments: number[];
  snapshots: number[];
  temporary: string[];
}

export async function listJournalDir(dir: string): Promise<JournalDirListing> {
  const listing: JournalDirListing = { segments: [], snapshots: [], temporary: [] };
  for (const name of await readdir(dir)) {
    const seg = SEGMENT.exec(name);
    const snap = SNAPSHOT.exec(name);
    if (seg) listing.segments.push(Number(seg[1]));
    else if (snap) listing.snapshots.push(Number(snap[1]));
    else if (name.endsWith('.tmp')) listing.temporary.push(name);
  }
  listing.segments.sort((a, b) => a - b);
  listing.snapshots.sort((a, b) => a - b);
  return listing;
}

export const inDir = (dir: string, name: string): string => path.join(dir, name);
