// The bench's inputs: the corpus photos uploaded to a service, the upload sample, and the
// sequence of unique cache-miss parameter sets every server gets in the same order.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { Service } from './processes.js';
import { KEY, MB, MISS_WIDTHS, QUALITY, photosDir, rawUploadDir } from './settings.js';

export interface Original {
  file: string;
  imageId: string;
  publicUrl: string;
}

export function photoFiles(): string[] {
  const files = fs.readdirSync(photosDir).filter((f) => /\.jpe?g$/i.test(f)).sort();
  if (files.length === 0) throw new Error(`no JPEG photos in ${photosDir}`);
  return files;
}

/** The photos uploaded once each, or `copies` times each under new names (`prefix`-copy-file), photo order within each copy. */
export async function uploadOriginals(svc: Service, copies = 1, prefix = ''): Promise<Original[]> {
  const out: Original[] = [];
  const uploads = Array.from({ length: copies }, (_, copy) => photoFiles().map((file) => [file, prefix ? `${prefix}-${copy}-${file}` : file])).flat();
  for (const [file, name] of uploads) out.push({ file, ...(await uploadJpeg(svc, fs.readFileSync(path.join(photosDir, file)), name)) });
  return out;
}

/** One JPEG uploaded under `name` with the bench's key. */
export async function uploadJpeg(svc: Service, bytes: Buffer, name: string): Promise<Omit<Original, 'file'>> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), name);
  const res = await fetch(`${svc.origin}/cdn/upload`, { method: 'POST', headers: { 'X-API-Key': KEY }, body: form });
  const body = (await res.json()) as { imageId?: string; public_url?: string };
  if (res.status !== 200 || !body.imageId || !body.public_url) throw new Error(`upload of ${name} failed: ${res.status} ${JSON.stringify(body)}`);
  return { imageId: body.imageId, publicUrl: body.public_url };
}

/**
 * Each upload measurement starts with no write-back pending from the one before: raw's files
 * (page cache only, ~1 GB per run) would otherwise be flushed to disk while the next side is
 * measured, and that side's fsyncs would wait for them. Raw's files are removed (it never reads them).
 */
export function settleDisk(): void {
  // The raw server may still be finishing writes of the warm-up (seconds on a busy machine): a file
  // landing after the listing makes the removal fail with ENOTEMPTY, so it starts over (listing
  // again) until the directory goes. rmSync's own retries only repeat the final rmdir.
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      fs.rmSync(rawUploadDir, { recursive: true, force: true });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || Date.now() > deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  fs.mkdirSync(rawUploadDir, { recursive: true });
  execFileSync('sync');
}

/** A JPEG of about 1 MB (re-encoded from the corpus) and the multipart body carrying it. */
export async function uploadSample(): Promise<{ body: Buffer; boundary: string; bytes: number }> {
  const source = fs.readFileSync(path.join(photosDir, photoFiles()[0]));
  let best: Buffer = source;
  for (const q of [85, 88, 90, 92, 94, 95, 96]) {
    const candidate = await sharp(source).jpeg({ quality: q }).toBuffer();
    if (Math.abs(candidate.length - MB) < Math.abs(best.length - MB)) best = candidate;
  }
  const boundary = '----pictorbench' + Date.now().toString(16);
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, best, tail]), boundary, bytes: best.length };
}

/** Quality steps around QUALITY: each round through photos × widths uses the next one. */
const QUALITY_STEPS = [0, -1, 1, -2, 2, -3, 3, -4, 4];

/** How many unique miss parameter sets there are for `n` photos. */
export function missSpace(n: number): number {
  return n * MISS_WIDTHS.length * QUALITY_STEPS.length;
}

/** k-th unique cache-miss parameter set: photo k mod n, one of MISS_WIDTHS (≈800 px on average), quality 76–84. */
export function missParams(k: number, n: number): { photo: number; width: number; quality: number } {
  const j = Math.floor(k / n);
  const round = Math.floor(j / MISS_WIDTHS.length) % QUALITY_STEPS.length;
  return { photo: k % n, width: MISS_WIDTHS[j % MISS_WIDTHS.length], quality: QUALITY + QUALITY_STEPS[round] };
}
