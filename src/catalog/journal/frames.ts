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

export interface FrameScan {
  payloads: Buffer[];
  /** Bytes from the start that hold whole, valid records. */
  validLength: number;
  /** Why reading stopped before the end of the buffer; undefined when every byte was valid. */
  problem?: string;
}

export function scanFrames(buf: Buffer): FrameScan {
  const payloads: Buffer[] = [];
  let offset = 0;
  while (offset < buf.length) {
    if (buf.length - offset < HEADER_BYTES) return { payloads, validLength: offset, problem: `partial record header at byte ${offset}` };
    const length = buf.readUInt32LE(offset);
    if (length === 0 || length > MAX_PAYLOAD_BYTES) return { payloads, validLength: offset, problem: `implausible record length ${length} at byte ${offset}` };
    const end = offset + HEADER_BYTES + length;
    if (end > buf.length) return { payloads, validLength: offset, problem: `record at byte ${offset} cut off (${buf.length - offset - HEADER_BYTES} of ${length} bytes)` };
    const payload = buf.subarray(offset + HEADER_BYTES, end);
    if (crc32(payload) !== buf.readUInt32LE(offset + 4)) return { payloads, validLength: offset, problem: `checksum mismatch in record at byte ${offset}` };
    payloads.push(payload);
    offset = end;
  }
  return { payloads, validLength: offset };
}
