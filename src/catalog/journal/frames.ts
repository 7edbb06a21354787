// Record framing shared by journal segments and snapshots: [u32 length][u32 crc32][payload],
// little endian. The CRC makes a torn or bit-flipped record detectable; the length prefix lets a
// reader stop exactly at the last whole record.
import { crc32 } from 'node:zlib';

const HEADER_BYTES = 8;
/** Larger than any record we write (BSON documents are ≤ 16 MiB); a longer prefix is garbage. */
const MAX_PAYLOAD_BYTES = 32 * 1024 * 1024;

export function encodeFrame(payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeUInt32LE(crc32(payload), 4);
  frame.set(payload, HEADER_BYTES);
  return frame;
}

type FrameAt = { payload: Buffer; end: number } | { problem: string };

/** The whole, valid record starting at `offset`, or why there is none. */
function frameAt(buf: Buffer, offset: number): FrameAt {
  if (buf.length - offset < HEADER_BYTES) return { problem: `partial record header at byte ${offset}` };
  const length = buf.readUInt32LE(offset);
  if (length === 0 || length > MAX_PAYLOAD_BYTES) return { problem: `implausible record length ${length} at byte ${offset}` };
  const end = offset + HEADER_BYTES + length;
  if (end > buf.length) return { problem: `record at byte ${offset} cut off (${buf.length - offset - HEADER_BYTES} of ${length} bytes)` };
  const payload = buf.subarray(offset + HEADER_BYTES, end);
  if (crc32(payload) !== buf.readUInt32LE(offset + 4)) return { problem: `checksum mismatch in record at byte ${offset}` };
  return { payload, end };
}

export interface FrameScan {
  payloads: Buffer[];
  /** Bytes from the start that hold whole, valid records. */
  validLength: number;
  /** Why reading stopped before the end of the buffer; undefined when every byte was valid. */
  problem?: string;
}

/** The valid records from the start up to the first bad one. */
export function scanFrames(buf: Buffer, from = 0): FrameScan {
  const payloads: Buffer[] = [];
  let offset = from;
  while (offset < buf.length) {
    const frame = frameAt(buf, offset);
    if ('problem' in frame) return { payloads, validLength: offset, problem: frame.problem };
    payloads.push(frame.payload);
    offset = frame.end;
  }
  return { payloads, validLength: offset };
}

/** Bytes that hold no valid record: [offset, end). */
export interface DamagedRange {
  offset: number;
  end: number;
  reason: string;
}

export interface FullFrameScan {
  /** Every valid record, in file order, with where it starts. */
  records: { offset: number; payload: Buffer }[];
  /** Runs of bytes between valid records (or before the end) that are not valid records. */
  damage: DamagedRange[];
}

/**
 * Every valid record of the buffer, also after damage: past a bad record, reading resumes at the
 * next byte where a whole record with a matching CRC starts. A damaged range that reaches the end
 * of the buffer has no valid record after it (what a torn append leaves).
 */
export function scanAllFrames(buf: Buffer): FullFrameScan {
  const records: FullFrameScan['records'] = [];
  const damage: DamagedRange[] = [];
  let offset = 0;
  while (offset < buf.length) {
    const frame = frameAt(buf, offset);
    if (!('problem' in frame)) {
      records.push({ offset, payload: frame.payload });
      offset = frame.end;
      continue;
    }
    let next = offset + 1;
    while (next < buf.length && 'problem' in frameAt(buf, next)) next++;
    damage.push({ offset, end: next, reason: frame.problem });
    offset = next;
  }
  return { records, damage };
}
