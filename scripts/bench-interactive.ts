// `npm run bench:interactive`: what a bulk import does to interactive callers. Starts the service
// on embedded defaults (`node dist/scripts/start.js`, BENCH_WORKERS=2 worker processes), measures
// interactive transforms (a 1600×1200 JPEG → WebP, a new width each time so every one renders) and
// interactive uploads on the idle service, then the same while the import CLI pushes a
// BENCH_FILES (2,000) file bulk import (X-Pictor-Priority: bulk), and prints both. Not a test.
//
// env: BENCH_FILES (2000), BENCH_WORKERS (2), BENCH_SAMPLES (12), BENCH_IMPORT_CONCURRENCY (32)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runImport, startService, type RunningService } from './lib/bench-service.js';
import { gradientJpeg, smallJpeg, writeImageFolder } from './lib/generated-images.js';

const FILES = Number(process.env.BENCH_FILES ?? 2000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 12);
const CONCURRENCY = Number(process.env.BENCH_IMPORT_CONCURRENCY ?? 32);

function say(line: string) {
  process.stdout.write(line + '\n');
}

async function uploadOnce(service: RunningService, bytes: Buffer, publicId: string, bulk = false): Promise<{ status: number; body: { public_url?: string; msg?: string } }> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), `${publicId}.jpg`);
  const headers: Record<string, string> = { 'X-API-Key': service.key, ...(bulk ? { 'X-Pictor-Priority': 'bulk' } : {}) };
  const res = await fetch(`${service.baseUrl}/upload?public_id=${encodeURIComponent(publicId)}`, { method: 'POST', body: form, headers });
  return { status: res.status, body: (await res.json()) as { public_url?: string; msg?: string } };
}

async function timedOk(what: string, work: () => Promise<{ status: number; body: unknown }>): Promise<number> {
  const started = performance.now();
  const res = await work();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return ms;
}

interface Samples {
  transform: number[];
  upload: number[];
  /** The same upload sent as bulk (X-Pictor-Priority: bulk): it queues behind the import. */
  bulkUpload: number[];
}

/** Alternates an interactive transform and upload (and, with `withBulk`, a bulk upload), once per upload image. */
async function measure(service: RunningService, src: string, tag: string, widthBase: number, uploadBytes: Buffer[], withBulk = false): Promise<Samples> {
  const out: Samples = { transform: [], upload: [], bulkUpload: [] };
  for (let i = 0; i < uploadBytes.length; i++) {
    const url = `${service.baseUrl}/transform?src=${encodeURIComponent(src)}&w=${widthBase + i * 8}&f=webp`;
    out.transform.push(
      await timedOk('transform', async () => {
        const res = await fetch(url, { headers: { 'X-API-Key': service.key } });
        return { status: res.status, body: await res.json() };
      }),
    );
    out.upload.push(await timedOk('upload', () => uploadOnce(service, uploadBytes[i], `interactive/${tag}-${i}`)));
    if (withBulk) out.bulkUpload.push(await timedOk('bulk upload', () => uploadOnce(service, uploadBytes[i], `bulk-sample/${tag}-${i}`, true)));
  }
  return out;
}

function stats(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return `median ${at(0.5).toFixed(0)} ms, p90 ${at(0.9).toFixed(0)} ms, max ${sorted[sorted.length - 1].toFixed(0)} ms`;
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-bench-interactive-'));
  const folder = path.join(tmp, 'bulk');
  let service: RunningService | null = null;
  try {
    await writeImageFolder(folder, FILES);
    const picture = await gradientJpeg(1600, 1200);
    const uploadBytes = await Promise.all(Array.from({ length: SAMPLES * 2 + 1 }, (_, i) => smallJpeg(100_000 + i, 320)));
    service = await startService({ workers: WORKERS, dataDir: path.join(tmp, 'data') });
    say(`service up at ${service.baseUrl} with ${WORKERS} worker process(es); ${os.availableParallelism()} cores, load average ${os.loadavg()[0].toFixed(2)}`);
    const original = await uploadOnce(service, picture, 'interactive/source');
    if (original.status !== 200 || !original.body.public_url) throw new Error(`upload of the source picture failed: ${JSON.stringify(original.body)}`);
    const src = original.body.public_url;
    // One warm-up of each, so neither series pays for first-use costs.
    await measure(service, src, 'warmup', 300, uploadBytes.slice(SAMPLES * 2));

    const idle = await measure(service, src, 'idle', 600, uploadBytes.slice(0, SAMPLES));

    let importing = true;
    const importStarted = performance.now();
    const bulk = runImport(service, folder, { concurrency: CONCURRENCY, report: path.join(tmp, 'report.json') }).finally(() => {
      importing = false;
    });
    await new Promise((r) => setTimeout(r, 1500)); // let the bulk backlog build up
    const during = await measure(service, src, 'during', 800, uploadBytes.slice(SAMPLES, SAMPLES * 2), true);
    const overlapped = importing;
    const run = await bulk;
    const importSeconds = (performance.now() - importStarted) / 1000;
    if (run.summary.done !== FILES || run.summary.failed !== 0) throw new Error(`bulk import did not complete cleanly: ${JSON.stringify(run.summary)}`);

    say(`\nbulk import: ${FILES} files, concurrency ${CONCURRENCY}, in ${importSeconds.toFixed(1)} s (${(FILES / importSeconds).toFixed(1)} files/s)`);
    if (!overlapped) say('warning: the import finished before the last "during" sample; raise BENCH_FILES');
    say(`interactive transform (1600×1200 JPEG → WebP), ${SAMPLES} samples each:`);
    say(`  idle service:        ${stats(idle.transform)}`);
    say(`  during bulk import:  ${stats(during.transform)}`);
    say(`interactive upload (320×320 JPEG), ${SAMPLES} samples each:`);
    say(`  idle service:        ${stats(idle.upload)}`);
    say(`  during bulk import:  ${stats(during.upload)}`);
    say(`  the same upload sent as bulk during the import (queues behind it): ${stats(during.bulkUpload)}`);
  } finally {
    await service?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:interactive failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
