// Small generated JPEGs for load tests and benchmarks: each index gives different pixels (and so a
// different checksum), made in ~1 ms with sharp.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

/** A photo-like gradient with structure, so encoders and effects have something to work on. */
export async function gradientJpeg(width: number, height: number, quality = 85): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = (x * 255) / width;
      raw[i + 1] = (y * 255) / height;
      raw[i + 2] = ((x ^ y) & 0xff) / 2 + 64;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality }).toBuffer();
}

export async function smallJpeg(index: number, size = 24): Promise<Buffer> {
  const raw = Buffer.alloc(size * size * 3);
  for (let p = 0; p < raw.length; p += 3) {
    raw[p] = (index * 37 + p) & 0xff;
    raw[p + 1] = (index >> 3) & 0xff;
    raw[p + 2] = (p * 7 + (index >> 11)) & 0xff;
  }
  return sharp(raw, { raw: { width: size, height: size, channels: 3 } }).jpeg({ quality: 80 }).toBuffer();
}

/** Writes `count` distinct small JPEGs as dir/<n/100>/<n>.jpg (100 per sub-folder). Returns total bytes. */
export async function writeImageFolder(dir: string, count: number, size = 24): Promise<number> {
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const sub = path.join(dir, String(Math.floor(i / 100)).padStart(3, '0'));
    if (i % 100 === 0) fs.mkdirSync(sub, { recursive: true });
    const image = await smallJpeg(i, size);
    fs.writeFileSync(path.join(sub, `${String(i).padStart(5, '0')}.jpg`), image);
    bytes += image.length;
  }
  return bytes;
}
