// What the pipeline needs from a JPEG's header, read in JS: sample precision, component count and
// the embedded ICC profile (APP2 "ICC_PROFILE" chunks, reassembled). libvips' own header read
// (sharp.metadata) costs ~0.35 ms of CPU per 1 MB original; this walks the markers before the
// scan in microseconds. Anything it does not fully understand gives null, and the caller asks
// libvips instead.

export interface JpegHeader {
  precision: number;
  components: number;
  icc?: Buffer;
}

const ICC_SIGNATURE = 'ICC_PROFILE\0';

/** Start-of-frame markers (C0-CF except DHT C4, JPG C8 and DAC CC). */
export function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

export function readJpegHeader(bytes: Buffer): JpegHeader | null {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return null;
  let offset = 2;
  let frame: { precision: number; components: number } | null = null;
  const iccChunks = new Map<number, Buffer>();
  let iccCount = 0;
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) return null;
    const marker = bytes[offset + 1];
    if (marker === 0xff) {
      offset++; // fill byte
      continue;
    }
    if (marker === 0xda) break; // start of scan: the header is complete
    if (marker === 0xd8 || marker === 0xd9 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) return null;
    const length = bytes.readUInt16BE(offset + 2);
    const end = offset + 2 + length;
    if (length < 2 || end > bytes.length) return null;
    const body = offset + 4;
    if (isStartOfFrame(marker)) {
      if (frame || length < 8) return null;
      frame = { precision: bytes[body], components: bytes[body + 5] };
    } else if (marker === 0xe2 && length >= 16 && bytes.toString('latin1', body, body + 12) === ICC_SIGNATURE) {
      const sequence = bytes[body + 12];
      const count = bytes[body + 13];
      if (sequence === 0 || sequence > count || (iccCount && count !== iccCount) || iccChunks.has(sequence)) return null;
      iccCount = count;
      iccChunks.set(sequence, bytes.subarray(body + 14, end));
    }
    offset = end;
  }
  if (!frame || offset + 4 > bytes.length) return null;
  if (iccChunks.size !== iccCount) return null;
  const icc = iccCount ? Buffer.concat(Array.from({ length: iccCount }, (_, i) => iccChunks.get(i + 1)!)) : undefined;
  return { precision: frame.precision, components: frame.components, ...(icc ? { icc } : {}) };
}
