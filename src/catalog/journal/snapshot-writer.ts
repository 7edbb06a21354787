// Writes a compaction's snapshot: the live maps walked in small slices (commands run between
// them), every byte written (a short write is continued, a failed one fails the compaction), the
// file synced, then read back and checked — every frame's CRC, header, end record, document
// count — before it is renamed into place. Only a snapshot that passed is ever a snapshot: the
// segments it covers are deleted by the caller after this resolves.
import { readFile, rename, rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { durableFiles, writeAll } from '../../durable-files.js';
import { encodeFrame } from './frames.js';
import { checkSnapshot } from './journal-damage.js';
import { inDir, snapshotName } from './journal-files.js';
import { encodeRecord, SNAPSHOT_VERSION, type Doc, type IndexSpec, type JournalRecord } from './journal-records.js';

/** What the snapshot holds, taken synchronously at the rotation; `docs` are the live maps. */
export type SnapshotPlan = { db: string; collections: { c: string; docs: Map<string, Doc>; specs: IndexSpec[] }[] }[];

export interface SnapshotWriteOptions {
  dir: string;
  seq: number;
  plan: SnapshotPlan;
  /** Longest synchronous slice before yielding to commands. */
  sliceMs: number;
  closing: () => boolean;
  /** Awaited before the snapshot is synced and renamed (the journal must be durable that far). */
  beforeCommit: () => Promise<void>;
}

export interface SnapshotWritten {
  file: string;
  documents: number;
  bytes: number;
  longestSliceMs: number;
  longestSliceCpuMs: number;
}

export async function writeSnapshot(options: SnapshotWriteOptions): Promise<SnapshotWritten> {
  const { dir, seq, plan, sliceMs } = options;
  const final = inDir(dir, snapshotName(seq));
  const tmp = `${final}.tmp`;
  const handle = await durableFiles.open(tmp, 'w', 0o600);
  let sliceStart = performance.now();
  let sliceCpu = process.cpuUsage();
  let longestSliceMs = 0;
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
  // Records are added synchronously; only every sliceMs (or 1 MiB) the buffered part is written
  // and commands get the event loop, so they wait at most about one slice.
  const add = (record: JournalRecord) => {
    const frame = encodeFrame(encodeRecord(record));
    chunks.push(frame);
    chunkBytes += frame.length;
  };
  const sliceDue = () => chunkBytes >= 1 << 20 || performance.now() - sliceStart >= sliceMs;
  const writeAndYield = async () => {
    const data = Buffer.concat(chunks);
    chunks = [];
    chunkBytes = 0;
    endSlice();
    await writeAll(handle, data);
    bytes += data.length;
    // As long a pause as the slice took: compaction gets at most about half of the event
    // loop, commands the rest (measured: with only a setImmediate between slices, writes
    // during a compaction of 100,000 documents were ~10x slower at p50 on a busy machine).
    await sleep(sliceMs);
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
        // Live iteration: documents changed meanwhile are also in segment `seq` (see the adapter).
        for (const d of docs.values()) {
          add({ o: 'put', db, c, d });
          documents++;
          if (sliceDue()) {
            await writeAndYield();
            if (options.closing()) throw new Error('catalog closing');
          }
        }
      }
    }
    add({ o: 'end', documents });
    await writeAndYield();
    await options.beforeCommit();
    await durableFiles.datasync(handle);
    await handle.close();
    // Read back: what the disk holds is what a start will read.
    const written = await readFile(tmp);
    if (written.length !== bytes) throw new Error(`snapshot ${tmp} holds ${written.length} bytes, ${bytes} were written`);
    const check = checkSnapshot(written, tmp, seq);
    if (check.documents !== documents) throw new Error(`snapshot ${tmp} holds ${check.documents} documents, ${documents} were written`);
    // Its name becomes durable with the folder's next sync (see the adapter's compaction): a cut
    // before that leaves the old snapshot and segments (and the .tmp is removed at start).
    await rename(tmp, final);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  return { file: final, documents, bytes, longestSliceMs, longestSliceCpuMs };
}
