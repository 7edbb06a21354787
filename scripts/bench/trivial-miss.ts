// `node dist/scripts/bench/trivial-miss.js`: the CPU a cache miss costs outside its render, per
// process. Starts the service as `npm run bench` does, uploads a 64×48 JPEG and asks for unique
// WebP derivatives of it (widths 1–60 × qualities 1–100) at 16 connections, so the render is a
// fraction of a millisecond and what each row shows is the path: the front doors, Redis, the
// catalog process and the worker's job handling. Prints one row per round (CPU ms per miss per
// process, from /proc) and their mean.
// env: TRIVIAL_ROUNDS (3), BENCH_DURATION (s per round, 6 here), BENCH_WORKERS.
import fs from 'node:fs';
import sharp from 'sharp';
import { uploadJpeg } from './lib/fixtures.js';
import { load, measure, startLoadgen, startService, stopAll } from './lib/processes.js';
import { fmt } from './lib/report.js';
import { KEY, say, tmp } from './lib/settings.js';

const ROUNDS = Number(process.env.TRIVIAL_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 6);
const SETS = 6000;

async function main() {
  await startLoadgen();
  const svc = await startService('trivial');
  const original = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 100, b: 50 } } }).jpeg().toBuffer();
  const src = encodeURIComponent((await uploadJpeg(svc, original, 'tiny.jpg')).publicUrl);
  const headers = { 'X-API-Key': KEY };
  const paths = (from: number, count: number) => Array.from({ length: count }, (_, i) => `/image/t.webp?src=${src}&w=${1 + ((from + i) % 60)}&f=webp&q=${1 + (Math.floor((from + i) / 60) % 100)}`);
  // Warm-up on the last sets (JIT, connections); the rounds start from the first.
  await load({ origin: svc.origin, connections: 4, durationSec: 3, headers, paths: paths(SETS - 1000, 1000) });
  let used = 0;
  const sums: Record<string, number> = {};
  for (let round = 0; round < ROUNDS; round++) {
    const m = await measure('trivial miss webp', 'pictor /image', svc.procs, { origin: svc.origin, connections: 16, durationSec: DURATION, headers, paths: paths(used, SETS - 1000 - used) });
    used += m.result.pathsUsed;
    if (m.row.failed > 0) throw new Error(`${m.row.failed} requests failed`);
    for (const [name, ms] of Object.entries({ ...m.row.cpuPerRequest, all: m.row.cpuMsPerRequest })) sums[name] = (sums[name] ?? 0) + ms;
  }
  say(`mean over ${ROUNDS} rounds, CPU ms per miss: ${Object.entries(sums).map(([name, ms]) => `${name.replace('svc-', '')} ${fmt(ms / ROUNDS, 2)}`).join(', ')}`);
}

main()
  .catch((err: unknown) => {
    process.exitCode = 1;
    process.stderr.write(`trivial-miss failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  })
  .finally(async () => {
    await stopAll();
    fs.rmSync(tmp, { recursive: true, force: true });
    process.exit();
  });
