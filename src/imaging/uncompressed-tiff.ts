// An 8-bit RGB image as an uncompressed baseline TIFF (little-endian, strips of 256 rows, the
// layout sharp's own uncompressed tiff() output has), written around the pixels with one copy:
// libvips reads it sequentially, strip by strip, as it reads a JPEG (see DecodedSource).

const ROWS_PER_STRIP = 256;
const SHORT = 3;
const LONG = 4;

export function uncompressedRgbTiff(width: number, height: number, pixels: Uint8Array): Buffer {
  const rowBytes = width * 3;
  const strips = Math.ceil(height / ROWS_PER_STRIP);
  const entries: [tag: number, type: number, count: number, value: number][] = [];
  const ifdAt = 8 + pixels.length + (pixels.length % 2); // word-aligned
  const entryCount = 10;
  const extraAt = ifdAt + 2 + entryCount * 12 + 4; // out-of-line values: bits per sample, strip offsets and sizes
  const offsetsAt = extraAt + 6;
  const countsAt = offsetsAt + strips * 4;
  entries.push([256, LONG, 1, width], [257, LONG, 1, height], [258, SHORT, 3, extraAt], [259, SHORT, 1, 1], [262, SHORT, 1, 2]);
  entries.push([273, LONG, strips, strips === 1 ? 8 : offsetsAt], [277, SHORT, 1, 3], [278, LONG, 1, ROWS_PER_STRIP]);
  entries.push([279, LONG, strips, strips === 1 ? pixels.length : countsAt], [284, SHORT, 1, 1]);
  // Not zero-filled (the pixels are most of it): only the part after them is.
  const tiff = Buffer.allocUnsafe(countsAt + strips * 4);
  tiff.fill(0, 8 + pixels.length);
  tiff.write('II', 0, 'latin1');
  tiff.writeUInt16LE(42, 2);
  tiff.writeUInt32LE(ifdAt, 4);
  tiff.set(pixels, 8);
  tiff.writeUInt16LE(entryCount, ifdAt);
  entries.forEach(([tag, type, count, value], i) => {
    const at = ifdAt + 2 + i * 12;
    tiff.writeUInt16LE(tag, at);
    tiff.writeUInt16LE(type, at + 2);
    tiff.writeUInt32LE(count, at + 4);
    if (type === SHORT && count === 1) tiff.writeUInt16LE(value, at + 8);
    else tiff.writeUInt32LE(value, at + 8);
  });
  for (let i = 0; i < 3; i++) tiff.writeUInt16LE(8, extraAt + i * 2);
  for (let s = 0; s < strips; s++) {
    const rows = Math.min(ROWS_PER_STRIP, height - s * ROWS_PER_STRIP);
    tiff.writeUInt32LE(8 + s * ROWS_PER_STRIP * rowBytes, offsetsAt + s * 4);
    tiff.writeUInt32LE(rows * rowBytes, countsAt + s * 4);
  }
  return tiff;
}
