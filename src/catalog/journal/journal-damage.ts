// Reading journal files with damage told apart from a torn tail. A record that fails its CRC
// with valid records after it is damage (a flipped bit, a bad sector, a file cut short by
// something other than a crash), wherever it is: the catalog refuses to start and names the
// file, the offset and how many records follow, and `npm run catalog -- salvage` recovers what is
// readable. Only a bad record at the very end of the last segment, with nothing valid after it,
// is a torn append of a crash (never acknowledged): that one is cut off.
import { scanAllFrames, type DamagedRange } from './frames.js';
import { decodeRecord, SNAPSHOT_VERSION, type JournalRecord } from './journal-records.js';

export class JournalDamageError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    readonly reason: string,
    readonly recordsAfter: number,
  ) {
    super(
      `catalog journal file ${file} is damaged at byte ${offset} (${reason}); ${recordsAfter} readable records follow it. ` +
        'The catalog does not start on a journal with a hole in it: run `npm run catalog -- salvage` to keep every readable record, ' +
        'set the damaged bytes aside and see what was lost, or restore the catalog directory from a backup.',
    );
  }
}

function damageError(file: string, scan: ReturnType<typeof scanAllFrames>, damage: DamagedRange): JournalDamageError {
  return new JournalDamageError(file, damage.offset, damage.reason, scan.records.filter((r) => r.offset > damage.offset).length);
}

export interface SnapshotContents {
  records: JournalRecord[];
  documents: number;
}

/**
 * The records of a snapshot, after checking all of it: every frame's CRC, the header (version,
 * and `seq` when given), the end record, and that the end record's document count is the number
 * of documents the file holds. Throws JournalDamageError otherwise.
 */
export function checkSnapshot(buf: Buffer, file: string, seq?: number): SnapshotContents {
  const scan = scanAllFrames(buf);
  if (scan.damage.length > 0) throw damageError(file, scan, scan.damage[0]);
  const records = scan.records.map((r) => decodeRecord(r.payload));
  const head = records[0];
  const tail = records.at(-1);
  if (head?.o !== 'snapshot' || Number(head.v) !== SNAPSHOT_VERSION || (seq !== undefined && Number(head.seq) !== seq)) {
    throw new JournalDamageError(file, 0, 'no snapshot header of this version', records.length);
  }
  if (tail?.o !== 'end') throw new JournalDamageError(file, buf.length, 'no end record: the snapshot is incomplete', 0);
  const documents = records.filter((r) => r.o === 'put').length;
  if (documents !== Number(tail.documents)) {
    throw new JournalDamageError(file, scan.records.at(-1)!.offset, `the end record counts ${Number(tail.documents)} documents, the file holds ${documents}`, 0);
  }
  return { records, documents };
}

export interface SegmentContents {
  records: JournalRecord[];
  /** A torn append at the end of the last segment: cut off at `offset`. */
  tornTail: { offset: number; bytes: number; reason: string } | null;
}

/** The records of a segment; throws JournalDamageError on damage (anything but a torn tail of the last segment). */
export function checkSegment(buf: Buffer, file: string, last: boolean): SegmentContents {
  const scan = scanAllFrames(buf);
  const records = scan.records.map((r) => decodeRecord(r.payload));
  if (scan.damage.length === 0) return { records, tornTail: null };
  const [first] = scan.damage;
  if (last && scan.damage.length === 1 && first.end === buf.length) {
    return { records, tornTail: { offset: first.offset, bytes: buf.length - first.offset, reason: first.reason } };
  }
  throw damageError(file, scan, first);
}
