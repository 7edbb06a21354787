// Bench of the two cost targets of the transformation features (docs/transformations.md), each
// measured side by side in one run (alternating samples, medians), in-process on one core's worth
// of work:
//   1. a cache miss with gravity=face (faces precomputed at upload: a focus point) vs gravity=center;
//   2. the finalize job's new work per ~1 MB JPEG upload (faces, ThumbHash, dominant colour, LQIP):
//      what it adds to the job, which starts it before the upload inspection, the image lookup,
//      the quota hold and the original's durable write and awaits it after them (the embedded
//      catalog runs in a child process, as under `npm start`), and what it costs alone (wall and
//      CPU).
// Usage: node dist/scripts/bench/transformations.js   (BENCH_PHOTOS: folder of JPEGs, BENCH_ROUNDS)
// Runs with a worker's node flags (it starts itself again with them when missing).
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { Catalog } from '../../src/catalog/catalog.js';
import { findImage } from '../../src/catalog/images.js';
import { holdStorage, releaseStorageHold } from '../../src/catalog/usage.js';
import { facesFocus } from '../../src/imaging/focus.js';
import { inspectUpload } from '../../src/imaging/inspect-upload.js';
import type { TransformPlan } from '../../src/imaging/params.js';
import { renderDerivative } from '../../src/imaging/pipeline.js';
import { describeImage } from '../../src/imaging/preview.js';
import { LocalStorage } from '../../src/storage/local-storage.js';
import { rerunWithWorkerFlags } from '../lib/worker-env.js';

rerunWithWorkerFlags();

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
const photosDir = path.resolve(process.env.BENCH_PHOTOS ?? path.join(repoRoot, 'test/fixtures/corpus/photos'));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const MB = 1024 * 1024;
const settings = { avifEffort: 0, webpEffort: 3, maxInputPixels: 50_000_000 };

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function timed(fn: () => Promise<unknown>, cpu?: number[]): Promise<number> {
  const t = performance.now();
  const c = process.cpuUsage();
  await fn();
  if (cpu) {
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
  }
  return performance.now() - t;
}

/** About 1 MB: the photo re-encoded at the quality that comes closest. */
async function aboutOneMb(source: Buffer): Promise<Buffer> {
  let best = source;
  for (const q of [85, 88, 90, 92, 94, 95, 96, 97, 98, 99, 100]) {
    const candidate = await sharp(source).jpeg({ quality: q }).toBuffer();
    if (Math.abs(candidate.length - MB) < Math.abs(best.length - MB)) best = candidate;
  }
  return best;
}

/** A corpus photo with the test portrait pasted off-centre (a face the detector finds). */
async function withPortrait(photo: Buffer): Promise<Buffer> {
  const face = await sharp(path.join(repoRoot, 'test/fixtures/corpus/faces/02_grace_hopper.jpg')).resize({ height: 900 }).toBuffer();
  return sharp(photo).composite([{ input: face, left: 1700, top: 300 }]).jpeg({ quality: 92 }).toBuffer();
}

async function main(): Promise<void> {
  sharp.concurrency(1);
  const files = fs.readdirSync(photosDir).filter((f) => /\.jpe?g$/i.test(f)).sort().slice(0, 4);
  const photos = await Promise.all(files.map(async (f) => aboutOneMb(await withPortrait(fs.readFileSync(path.join(photosDir, f))))));
  // The same photos without a face: the detector's fallback (short-range windows) runs on each.
  const faceless = await Promise.all(files.map(async (f) => aboutOneMb(fs.readFileSync(path.join(photosDir, f)))));
  process.stdout.write(`Transformations bench: ${photos.length} photos of ${(photos.reduce((a, b) => a + b.length, 0) / photos.length / MB).toFixed(2)} MB (2560 px wide + a portrait), ${ROUNDS} rounds, libvips 1 thread\n`);

  // Warm-up: MediaPipe's first task creation (~0.4 s) and libvips caches are not per-upload costs.
  const previews = [];
  for (const p of photos) previews.push(await describeImage(p, settings.maxInputPixels));
  for (const [i, p] of previews.entries()) if (p.faces.length === 0) process.stdout.write(`   (no face found in photo ${i}: gravity=face falls back there)\n`);

  // 1. Cache miss, 400×400 cover to WebP.
  const base: TransformPlan = { width: 400, height: 400, fit: 'cover', quality: 80, format: 'webp', blur: 0, sharp: 0, bri: 0, con: 0, sat: 0, hue: 0, opt: false };
  const centre: number[] = [];
  const face: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < photos.length; i++) {
      const focus = facesFocus(previews[i].faces) ?? { x: 0.5, y: 0.5 };
      const facePlan: TransformPlan = { ...base, gravity: 'face', focus };
      // Alternate which goes first so neither profits from the other's warm caches.
      const pair = r % 2 === 0 ? [base, facePlan] : [facePlan, base];
      for (const plan of pair) (plan === base ? centre : face).push(await timed(() => renderDerivative(photos[i], plan, settings)));
    }
  }
  const ratio = median(face) / median(centre);
  process.stdout.write(
    `1. cache miss 400x400 webp: gravity=center ${median(centre).toFixed(1)} ms, gravity=face ${median(face).toFixed(1)} ms (median) → face/center ${ratio.toFixed(3)} (target ≤ 1.05) ${ratio <= 1.05 ? 'PASS' : 'FAIL'}\n`,
  );

  // 2. Finalize: the new preview step as the finalize job runs it. The job starts it as soon as it
  // has read the staged bytes and awaits it before the catalog record; in between it inspects the
  // upload, looks the image up, holds the quota (a journaled catalog write) and writes the original
  // durably. Those four steps run here as the job runs them: the embedded catalog in its own
  // process, as `npm start` runs it, and LocalStorage with fsync in a temporary folder.
  // Alternating samples, with and without the preview alongside, so both see the same machine.
  // The step alone and its CPU time are printed too (what it costs a busy worker pool), and the
  // inspection's part of the steps.
  const storageRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-bench-finalize-'));
  const storage = new LocalStorage({ rootDir: path.join(storageRoot, 'files'), publicBaseUrl: 'http://localhost/files' });
  const catalogProcess = fork(path.join(here, 'catalog-server.js'), [path.join(storageRoot, 'catalog')], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const catalogUrl = await new Promise<string>((resolve, reject) => {
    catalogProcess.once('message', (m) => resolve((m as { url: string }).url));
    catalogProcess.once('exit', (code) => reject(new Error(`catalog server exited (${code})`)));
  });
  const catalog = await Catalog.connect(catalogUrl);
  let n = 0;
  const inspect: number[] = [];
  const releaseAfter: string[] = [];
  const jobSteps = async (p: Buffer): Promise<void> => {
    const uploadId = `bench-${n++}`;
    const started = performance.now();
    await inspectUpload(p, settings.maxInputPixels);
    inspect.push(performance.now() - started);
    await findImage(catalog, 'bench-user', uploadId);
    if (!(await holdStorage(catalog, 'bench-user', uploadId, p.length, 1e15))) throw new Error('hold refused');
    await storage.put(`bench/images/${uploadId}.jpg`, p, { contentType: 'image/jpeg' });
    releaseAfter.push(uploadId);
  };
  const stepsAlone: number[] = [];
  const stepsWithPreview: number[] = [];
  const preview: number[] = [];
  const previewCpu: number[] = [];
  for (const p of photos) await jobSteps(p); // warm the connection and the journal
  for (let r = 0; r < ROUNDS; r++) {
    for (const p of photos) {
      stepsAlone.push(await timed(() => jobSteps(p)));
      stepsWithPreview.push(
        await timed(async () => {
          const previewing = describeImage(p, settings.maxInputPixels);
          await jobSteps(p);
          await previewing;
        }),
      );
      preview.push(await timed(() => describeImage(p, settings.maxInputPixels), previewCpu));
      for (const id of releaseAfter.splice(0)) await releaseStorageHold(catalog, 'bench-user', id);
    }
  }
  await catalog.close();
  catalogProcess.kill('SIGTERM');
  await new Promise((resolve) => catalogProcess.once('exit', resolve));
  fs.rmSync(storageRoot, { recursive: true, force: true });
  const facelessPreview: number[] = [];
  const facelessCpu: number[] = [];
  for (let r = 0; r < ROUNDS; r++) for (const p of faceless) facelessPreview.push(await timed(() => describeImage(p, settings.maxInputPixels), facelessCpu));
  const added = median(stepsWithPreview) - median(stepsAlone);
  const fmt = (v: number[]) => `median ${median(v).toFixed(1)} ms, min ${Math.min(...v).toFixed(1)} ms`;
  process.stdout.write(
    `2. finalize per 1 MB JPEG: the job's steps the preview overlaps (upload inspection, image lookup, quota hold, durable write of the original) alone ${fmt(stepsAlone)}; ` +
      `with the preview step (faces, ThumbHash, colour, LQIP) alongside ${fmt(stepsWithPreview)} ` +
      `→ added ${added.toFixed(1)} ms (target ≤ 30 ms) ${added <= 30 ? 'PASS' : 'FAIL'}\n` +
      `   the preview step alone ${fmt(preview)} (CPU, all threads: ${fmt(previewCpu)}); of the steps, the upload inspection ${fmt(inspect)}\n`,
  );
  process.stdout.write(
    `   the same photos without a face (detector fallback runs): preview step ${fmt(facelessPreview)} (CPU ${fmt(facelessCpu)})\n`,
  );
  process.exit(0);
}

await main();
