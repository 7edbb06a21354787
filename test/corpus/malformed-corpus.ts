// The malformed-input corpus: several hundred files, every one made here from
// sharp output or by editing bytes, deterministically (a seeded generator): valid images in
// every accepted format and variant (CMYK, 16-bit, grey, alpha, animated, huge EXIF / ICC / text
// blocks), each truncated at many points, bit-flipped and with a damaged header; polyglots;
// non-images sent with image names and types; a pixel bomb per accepted format.
//
// As a script: `node dist/test/corpus/malformed-corpus.js <dir>` writes the files to <dir>.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { gradientJpeg } from '../../scripts/lib/generated-images.js';

export interface CorpusFile {
  /** File name sent with the upload (its extension is what a careless client would claim). */
  name: string;
  /** Declared Content-Type of the part. */
  mime: string;
  bytes: Buffer;
  /** What the file is, for reports. */
  kind: 'valid' | 'truncated' | 'bit-flip' | 'damaged-header' | 'polyglot' | 'non-image' | 'pixel-bomb';
}

/** A small seeded generator (xorshift32): the same corpus on every run. */
export class Seeded {
  private x: number;
  constructor(seed: number) {
    this.x = seed >>> 0 || 0x9e3779b9;
  }
  next(): number {
    this.x ^= this.x << 13;
    this.x ^= this.x >>> 17;
    this.x ^= this.x << 5;
    return (this.x >>> 0) / 0x100000000;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

const MIME: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp', avif: 'image/avif' };

/** A JPEG with an APP1 segment of `bytes` (EXIF-like) or a chain of APP2 ICC_PROFILE segments. */
function withSegments(jpeg: Buffer, marker: number, payloads: Buffer[]): Buffer {
  const segments = payloads.map((payload) => {
    const head = Buffer.alloc(4);
    head.writeUInt16BE(0xff00 | marker, 0);
    head.writeUInt16BE(payload.length + 2, 2);
    return Buffer.concat([head, payload]);
  });
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

function hugeExif(jpeg: Buffer, rng: Seeded): Buffer {
  // One APP1 segment at its maximum (65,533 bytes): "Exif\0\0", a TIFF header, then noise.
  const payload = Buffer.concat([Buffer.from('Exif\0\0II*\0\x08\0\0\0', 'latin1'), rng.bytes(65533 - 14)]);
  return withSegments(jpeg, 0xe1, [payload]);
}

function hugeIcc(jpeg: Buffer, rng: Seeded): Buffer {
  // 20 ICC_PROFILE chunks of ~64 kB (1.3 MB of profile that is not a profile).
  const count = 20;
  const payloads = Array.from({ length: count }, (_, i) => Buffer.concat([Buffer.from('ICC_PROFILE\0', 'latin1'), Buffer.from([i + 1, count]), rng.bytes(65000)]));
  return withSegments(jpeg, 0xe2, payloads);
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** A PNG with a 2 MB text chunk before its image data. */
function hugePngText(png: Buffer, rng: Seeded): Buffer {
  const text = pngChunk('tEXt', Buffer.concat([Buffer.from('Comment\0', 'latin1'), Buffer.from(rng.bytes(2 * 1024 * 1024).toString('base64').slice(0, 2 * 1024 * 1024), 'latin1')]));
  return Buffer.concat([png.subarray(0, 33), text, png.subarray(33)]);
}

async function validBases(rng: Seeded): Promise<{ name: string; bytes: Buffer }[]> {
  const photo = await gradientJpeg(320, 240, 85);
  const s = () => sharp(photo);
  const alpha = () => sharp({ create: { width: 160, height: 120, channels: 4, background: { r: 20, g: 120, b: 220, alpha: 0.5 } } });
  const frames = (format: 'webp' | 'gif') =>
    sharp(
      Buffer.concat([0, 1, 2].map((i) => Buffer.alloc(48 * 32 * 4, i * 80))),
      { raw: { width: 48, height: 96, channels: 4 } },
    )
      .toFormat(format, { loop: 0 })
      .toBuffer();
  const bases: { name: string; bytes: Buffer }[] = [
    { name: 'baseline.jpg', bytes: photo },
    { name: 'progressive.jpg', bytes: await s().jpeg({ progressive: true }).toBuffer() },
    { name: 'cmyk.jpg', bytes: await s().toColourspace('cmyk').jpeg().toBuffer() },
    { name: 'grey.jpg', bytes: await s().greyscale().jpeg().toBuffer() },
    { name: 'exif-rotated.jpg', bytes: await s().withMetadata({ orientation: 6 }).jpeg().toBuffer() },
    { name: 'p3.jpg', bytes: await s().withIccProfile('p3').jpeg().toBuffer() },
    { name: 'huge-exif.jpg', bytes: hugeExif(photo, rng) },
    { name: 'huge-icc.jpg', bytes: hugeIcc(photo, rng) },
    { name: 'rgb.png', bytes: await s().png().toBuffer() },
    { name: 'alpha.png', bytes: await alpha().png().toBuffer() },
    { name: 'rgb16.png', bytes: await s().toColourspace('rgb16').png().toBuffer() },
    { name: 'grey.png', bytes: await s().greyscale().png().toBuffer() },
    { name: 'palette.png', bytes: await s().png({ palette: true }).toBuffer() },
    { name: 'huge-text.png', bytes: hugePngText(await s().resize(64).png().toBuffer(), rng) },
    { name: 'lossy.webp', bytes: await s().webp().toBuffer() },
    { name: 'lossless-alpha.webp', bytes: await alpha().webp({ lossless: true }).toBuffer() },
    { name: 'animated.webp', bytes: await frames('webp') },
    { name: 'photo.avif', bytes: await s().avif({ effort: 0 }).toBuffer() },
    { name: 'alpha.avif', bytes: await alpha().avif({ effort: 0 }).toBuffer() },
    { name: 'one-pixel.png', bytes: await sharp({ create: { width: 1, height: 1, channels: 3, background: '#123456' } }).png().toBuffer() },
  ];
  return bases;
}

const TRUNCATE_FRACTIONS = [0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98];
const TRUNCATE_BYTES = [1, 3, 12, 40, 120, 600];

function variants(base: { name: string; bytes: Buffer }, rng: Seeded): CorpusFile[] {
  const ext = base.name.split('.').pop()!;
  const stem = base.name.replace(/\.[^.]+$/, '');
  const mime = MIME[ext];
  const out: CorpusFile[] = [{ name: base.name, mime, bytes: base.bytes, kind: 'valid' }];
  const cut = (n: number) => ({ name: `${stem}-cut${n}.${ext}`, mime, bytes: base.bytes.subarray(0, n), kind: 'truncated' as const });
  const points = new Set([...TRUNCATE_FRACTIONS.map((f) => Math.max(1, Math.floor(base.bytes.length * f))), ...TRUNCATE_BYTES.filter((n) => n < base.bytes.length)]);
  for (const n of [...points].sort((a, b) => a - b)) out.push(cut(n));
  for (let i = 0; i < 4; i++) {
    const flipped = Buffer.from(base.bytes);
    const flips = 1 + rng.int(8);
    for (let j = 0; j < flips; j++) {
      // Half the flips land in the first 1 kB, where the headers are.
      const at = j % 2 === 0 ? rng.int(Math.min(1024, flipped.length)) : rng.int(flipped.length);
      flipped[at] ^= 1 << rng.int(8);
    }
    out.push({ name: `${stem}-flip${i}.${ext}`, mime, bytes: flipped, kind: 'bit-flip' });
  }
  const zeroed = Buffer.from(base.bytes);
  zeroed.fill(0, 0, Math.min(16, zeroed.length));
  out.push({ name: `${stem}-zero-head.${ext}`, mime, bytes: zeroed, kind: 'damaged-header' });
  const scrambled = Buffer.from(base.bytes);
  rng.bytes(Math.min(200, scrambled.length)).copy(scrambled, 0);
  out.push({ name: `${stem}-noise-head.${ext}`, mime, bytes: scrambled, kind: 'damaged-header' });
  const afterMagic = Buffer.from(base.bytes);
  rng.bytes(Math.min(64, afterMagic.length - 12)).copy(afterMagic, 12);
  out.push({ name: `${stem}-noise-after-magic.${ext}`, mime, bytes: afterMagic, kind: 'damaged-header' });
  return out;
}

/** Tiny images whose headers claim far more pixels than any limit allows. */
async function pixelBombs(): Promise<CorpusFile[]> {
  const tiny = (format: 'jpeg' | 'png' | 'webp') => sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).toFormat(format).toBuffer();
  const bombs: CorpusFile[] = [];
  // PNG: IHDR width/height, CRC recomputed.
  const png = Buffer.from(await tiny('png'));
  png.writeUInt32BE(60000, 16);
  png.writeUInt32BE(60000, 20);
  png.writeUInt32BE(zlib.crc32(png.subarray(12, 29)) >>> 0, 29);
  bombs.push({ name: 'bomb.png', mime: 'image/png', bytes: png, kind: 'pixel-bomb' });
  // JPEG: the SOF0 frame header's height and width (65,500 × 65,500).
  const jpg = Buffer.from(await tiny('jpeg'));
  const sof = jpg.indexOf(Buffer.from([0xff, 0xc0]));
  jpg.writeUInt16BE(65500, sof + 5);
  jpg.writeUInt16BE(65500, sof + 7);
  bombs.push({ name: 'bomb.jpg', mime: 'image/jpeg', bytes: jpg, kind: 'pixel-bomb' });
  // WebP: an extended (VP8X) canvas of 16,384 × 16,384 around an 8×8 bitstream.
  const webp = Buffer.from(await sharp({ create: { width: 8, height: 8, channels: 4, background: { r: 1, g: 2, b: 3, alpha: 0.5 } } }).webp().toBuffer());
  const vp8x = webp.indexOf(Buffer.from('VP8X'));
  if (vp8x > 0) {
    webp.writeUIntLE(16383, vp8x + 12, 3);
    webp.writeUIntLE(16383, vp8x + 15, 3);
  }
  const vp8l = webp.indexOf(Buffer.from('VP8L'));
  if (vp8x < 0 && vp8l > 0) {
    // Lossless: 14-bit (width - 1) and (height - 1) after the signature byte.
    const bits = webp.readUInt32LE(vp8l + 9);
    webp.writeUInt32LE(((bits & ~0x0fffffff) | 0x3fff | (0x3fff << 14)) >>> 0, vp8l + 9);
  }
  bombs.push({ name: 'bomb.webp', mime: 'image/webp', bytes: webp, kind: 'pixel-bomb' });
  // AVIF: the image spatial extent ('ispe') property claims 60,000 × 60,000.
  const avif = Buffer.from(await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).avif({ effort: 0 }).toBuffer());
  const ispe = avif.indexOf(Buffer.from('ispe'));
  if (ispe > 0) {
    avif.writeUInt32BE(60000, ispe + 8);
    avif.writeUInt32BE(60000, ispe + 12);
  }
  bombs.push({ name: 'bomb.avif', mime: 'image/avif', bytes: avif, kind: 'pixel-bomb' });
  // A real 12,000 × 12,000 PNG (144 Mpx, a few hundred kB): decodes, but past MAX_INPUT_PIXELS.
  const real = await sharp({ create: { width: 12000, height: 12000, channels: 3, background: '#000' } }).greyscale().png({ compressionLevel: 9 }).toBuffer();
  bombs.push({ name: 'bomb-real.png', mime: 'image/png', bytes: real, kind: 'pixel-bomb' });
  return bombs;
}

async function polyglotsAndImpostors(rng: Seeded): Promise<CorpusFile[]> {
  const photo = await gradientJpeg(64, 48, 80);
  const png = await sharp(photo).png().toBuffer();
  const pdf = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n', 'latin1');
  const zip = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), rng.bytes(200)]);
  const html = Buffer.from('<!doctype html><script>alert(document.cookie)</script>', 'utf8');
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>', 'utf8');
  const gif = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#00ff00' } }).gif().toBuffer();
  const tiff = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#00ff00' } }).tiff().toBuffer();
  const heif = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic\0\0\0\0mif1heic', 'latin1'), rng.bytes(300)]);
  const bmp = Buffer.concat([Buffer.from('BM', 'latin1'), rng.bytes(300)]);
  const elf = Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01', 'latin1'), rng.bytes(500)]);
  const files: CorpusFile[] = [
    { name: 'jpeg-then-zip.jpg', mime: 'image/jpeg', bytes: Buffer.concat([photo, zip]), kind: 'polyglot' },
    { name: 'jpeg-then-pdf.jpg', mime: 'image/jpeg', bytes: Buffer.concat([photo, pdf]), kind: 'polyglot' },
    { name: 'jpeg-then-html.jpg', mime: 'image/jpeg', bytes: Buffer.concat([photo, html]), kind: 'polyglot' },
    { name: 'png-then-jpeg.png', mime: 'image/png', bytes: Buffer.concat([png, photo]), kind: 'polyglot' },
    { name: 'pdf-then-jpeg.jpg', mime: 'image/jpeg', bytes: Buffer.concat([pdf, photo]), kind: 'polyglot' },
    { name: 'html-then-png.png', mime: 'image/png', bytes: Buffer.concat([html, png]), kind: 'polyglot' },
    { name: 'gif-then-jpeg.jpg', mime: 'image/jpeg', bytes: Buffer.concat([gif, photo]), kind: 'polyglot' },
    { name: 'jpeg-in-zip-comment.jpg', mime: 'image/jpeg', bytes: Buffer.concat([zip, photo]), kind: 'polyglot' },
    { name: 'two-soi.jpg', mime: 'image/jpeg', bytes: Buffer.concat([photo.subarray(0, 2), photo]), kind: 'polyglot' },
  ];
  const impostors: [string, Buffer][] = [
    ['text', Buffer.from('just some text, not an image at all\n'.repeat(300))],
    ['pdf', pdf],
    ['zip', zip],
    ['html', html],
    ['svg', svg],
    ['gif', gif],
    ['tiff', tiff],
    ['heic', heif],
    ['bmp', bmp],
    ['elf', elf],
    ['json', Buffer.from(JSON.stringify({ a: [1, 2, 3], b: 'x'.repeat(5000) }))],
    ['one-byte', Buffer.from([0xff])],
    ['jpeg-magic-only', Buffer.from([0xff, 0xd8, 0xff])],
    ['png-magic-only', Buffer.from('\x89PNG\r\n\x1a\n', 'latin1')],
    ['riff-not-webp', Buffer.concat([Buffer.from('RIFF\x10\0\0\0WAVEfmt ', 'latin1'), rng.bytes(400)])],
    ['noise-8k', rng.bytes(8 * 1024)],
    ['noise-300k', rng.bytes(300 * 1024)],
    ['zeros-64k', Buffer.alloc(64 * 1024)],
  ];
  for (const [what, bytes] of impostors) {
    for (const ext of ['jpg', 'png', 'webp', 'avif']) files.push({ name: `${what}.${ext}`, mime: MIME[ext], bytes, kind: 'non-image' });
  }
  return files;
}

export async function malformedCorpus(seed = 20): Promise<CorpusFile[]> {
  const rng = new Seeded(seed);
  const files: CorpusFile[] = [];
  for (const base of await validBases(rng)) files.push(...variants(base, rng));
  files.push(...(await pixelBombs()));
  files.push(...(await polyglotsAndImpostors(rng)));
  return files;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: node dist/test/corpus/malformed-corpus.js <output dir>');
  fs.mkdirSync(dir, { recursive: true });
  const files = await malformedCorpus();
  for (const f of files) fs.writeFileSync(path.join(dir, f.name), f.bytes);
  process.stdout.write(`${files.length} files written to ${dir}\n`);
}
