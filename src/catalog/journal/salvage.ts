// `npm run catalog -- salvage`: recovers a journal directory the catalog refuses to start on
// (journal-damage.ts). Every readable record of the newest snapshot and of the segments after it
// is kept, in order; each damaged run of bytes is set aside in a file next to its source
// (`<file>.damaged-at-<offset>`) and reported; a snapshot gets its header and end record again
// (the end record counting the documents kept). Files without damage are not touched.
import { readFile } from 'node:fs/promises';
import { renameDurably, writeFileSynced } from '../../durable-files.js';
import { encodeFrame, scanAllFrames } from './frames.js';
import { inDir, listJournalDir, segmentName, snapshotName } from './journal-files.js';
import { decodeRecord, encodeRecord, SNAPSHOT_VERSION, type JournalRecord } from './journal-records.js';

export interface SalvagedFile {
  file: string;
  /** Readable records kept (a snapshot's header and end record not counted). */
  kept: number;
  /** Damaged runs of bytes, each set aside in `setAsideAs`. */
  damage: { offset: number; bytes: number; reason: string; setAsideAs: string }[];
  /** Snapshot only: documents its end record counted that are not among the kept ones (null: the end record was lost). */
  documentsLost?: number | null;
}

export interface SalvageReport {
  dir: string;
  /** Every file read; untouched ones have no damage. */
  files: SalvagedFile[];
}

export async function salvageJournal(dir: string): Promise<SalvageReport> {
  const listing = await listJournalDir(dir);
  const snapshotSeq = listing.snapshots.at(-1);
  const report: SalvageReport = { dir, files: [] };
  if (snapshotSeq !== undefined) report.files.push(await salvageFile(inDir(dir, snapshotName(snapshotSeq)), snapshotSeq));
  for (const seq of listing.segments.filter((s) => snapshotSeq === undefined || s >= snapshotSeq)) {
    report.files.push(await salvageFile(inDir(dir, segmentName(seq))));
  }
  return report;
}

/** `snapshotSeq` when the file is a snapshot. */
async function salvageFile(file: string, snapshotSeq?: number): Promise<SalvagedFile> {
  const buf = await readFile(file);
  const scan = scanAllFrames(buf);
  const records = scan.records.map((r) => ({ frame: buf.subarray(r.offset, r.offset + 8 + r.payload.length), record: decodeRecord(r.payload) }));
  const result: SalvagedFile = { file, kept: records.length, damage: [] };
  const isSnapshot = snapshotSeq !== undefined;
  let frames: Buffer[] = records.map((r) => r.frame);
  let rewrite = scan.damage.length > 0;
  if (isSnapshot) {
    const body = records.filter((r) => r.record.o !== 'snapshot' && r.record.o !== 'end');
    const end = records.find((r) => r.record.o === 'end')?.record as Extract<JournalRecord, { o: 'end' }> | undefined;
    const documents = body.filter((r) => r.record.o === 'put').length;
    const head = records[0]?.record;
    const whole = head?.o === 'snapshot' && Number(head.v) === SNAPSHOT_VERSION && records.at(-1)?.record.o === 'end' && Number(end?.documents) === documents;
    rewrite ||= !whole;
    result.kept = body.length;
    result.documentsLost = end ? Math.max(0, Number(end.documents) - documents) : rewrite ? null : 0;
    frames = [
      encodeFrame(encodeRecord({ o: 'snapshot', v: SNAPSHOT_VERSION, seq: snapshotSeq })),
      ...body.map((r) => r.frame),
      encodeFrame(encodeRecord({ o: 'end', documents })),
    ];
  }
  if (!rewrite) return result;
  for (const range of scan.damage) {
    const setAsideAs = `${file}.damaged-at-${range.offset}`;
    await writeFileSynced(setAsideAs, buf.subarray(range.offset, range.end));
    result.damage.push({ offset: range.offset, bytes: range.end - range.offset, reason: range.reason, setAsideAs });
  }
  const tmp = `${file}.salvage.tmp`;
  await writeFileSynced(tmp, Buffer.concat(frames));
  await renameDurably(tmp, file);
  return result;
}

/** The report as lines for a person: what was kept, what was set aside, what is lost. */
export function describeSalvage(report: SalvageReport): string[] {
  const lines: string[] = [];
  for (const f of report.files) {
    const lost = f.documentsLost === null ? '; the end record was lost, so how many documents the snapshot held is unknown' : f.documentsLost ? `; ${f.documentsLost} documents the snapshot counted are lost` : '';
    if (f.damage.length === 0 && !f.documentsLost && f.documentsLost !== null) {
      lines.push(`intact    ${f.file}: ${f.kept} records`);
      continue;
    }
    lines.push(`salvaged  ${f.file}: kept ${f.kept} readable records${lost}`);
    for (const d of f.damage) lines.push(`          ${d.bytes} damaged bytes at byte ${d.offset} (${d.reason}) set aside in ${d.setAsideAs}; the records in them are lost`);
  }
  const damaged = report.files.filter((f) => f.damage.length > 0 || f.documentsLost !== 0);
  lines.push(damaged.length === 0 ? `nothing to salvage in ${report.dir}` : `${damaged.length} file(s) rewritten with their readable records; the catalog starts on them now`);
  return lines;
}
