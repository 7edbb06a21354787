// The one walk over a JPEG's marker segments, shared by the header reader (jpeg-header.ts: stops
// at the first scan) and the completeness check (jpeg-structure.ts: walks every scan to EOI).

export const SOI = 0xd8;
export const EOI = 0xd9;
export const SOS = 0xda;

/** A marker segment: its marker, where its payload starts (after the length) and where it ends. */
export interface JpegSegment {
  marker: number;
  body: number;
  end: number;
}

/** eoi: reached EOI. stopped: `visit` asked to stop. truncated: the bytes end first. invalid: not a JPEG, or junk where a marker belongs. */
export type JpegWalkEnd = 'eoi' | 'stopped' | 'truncated' | 'invalid';

/** Start-of-frame markers (C0-CF except DHT C4, JPG C8 and DAC CC). */
export function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function isRestart(marker: number): boolean {
  return marker >= 0xd0 && marker <= 0xd7;
}

/**
 * Offset of the marker that ends the entropy-coded data starting at `from` (0xFF00 is a stuffed
 * data byte, 0xFFD0-D7 restart markers belong to the scan, extra 0xFF are fill), or -1 when the
 * bytes end first.
 */
function endOfEntropyData(bytes: Buffer, from: number): number {
  let at = from;
  for (;;) {
    const ff = bytes.indexOf(0xff, at);
    if (ff < 0 || ff + 1 >= bytes.length) return -1;
    const next = bytes[ff + 1];
    if (next === 0x00 || isRestart(next)) at = ff + 2;
    else if (next === 0xff) at = ff + 1;
    else return ff;
  }
}

/**
 * Calls `visit` for every marker segment after SOI, in order (a scan's SOS segment too, whose
 * entropy-coded data is then skipped), until EOI; `visit` returns true to stop the walk there.
 */
export function walkJpegSegments(bytes: Buffer, visit: (segment: JpegSegment) => boolean | void): JpegWalkEnd {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== SOI) return 'invalid';
  let offset = 2;
  for (;;) {
    if (offset >= bytes.length) return 'truncated';
    if (bytes[offset] !== 0xff) return 'invalid';
    if (offset + 1 >= bytes.length) return 'truncated';
    const marker = bytes[offset + 1];
    if (marker === 0xff) {
      offset++; // fill byte before a marker
      continue;
    }
    if (marker === EOI) return 'eoi';
    if (marker === SOI || marker === 0x00 || marker === 0x01 || isRestart(marker)) return 'invalid';
    if (offset + 4 > bytes.length) return 'truncated';
    const length = bytes.readUInt16BE(offset + 2);
    if (length < 2) return 'invalid';
    const end = offset + 2 + length;
    if (end > bytes.length) return 'truncated';
    if (visit({ marker, body: offset + 4, end })) return 'stopped';
    if (marker !== SOS) {
      offset = end;
      continue;
    }
    const next = endOfEntropyData(bytes, end);
    if (next < 0) return 'truncated';
    offset = next;
  }
}
