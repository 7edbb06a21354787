// What one `npm run bench` run measures, read once from the command line and the environment.
//   --quick                  only the hit and the WebP miss comparison (miss,hit), about 3 minutes
//   --only=miss,hit,…        scenarios (as BENCH_ONLY)
// env: BENCH_DURATION (s per measurement, default 5), BENCH_SOAK_JOBS (2000), BENCH_WORKERS (1),
//      BENCH_ONLY (comma list of scenarios: miss,hit,upload,avif,srcset,soak), BENCH_KEEP=1 keeps the temp dir,
//      BENCH_MISS_CONCURRENCY (1,4,16), BENCH_MISS_FORMATS (webp,jpeg), BENCH_PHOTOS, BENCH_NEXT=0 leaves Next.js out,
//      BENCH_HIT_ROUNDS (3).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyArg = args.find((a) => a.startsWith('--only='))?.slice('--only='.length);

/** Compiled scripts/bench (where the helper servers are). */
export const benchDir = path.resolve(here, '..');
export const distRoot = path.resolve(benchDir, '../..');
export const repoRoot = path.resolve(distRoot, '..');
export const photosDir = path.resolve(process.env.BENCH_PHOTOS ?? path.join(repoRoot, 'test/fixtures/corpus/photos'));
export const resultsDir = path.join(repoRoot, 'bench/results');
/** The generated Next.js app (git-ignored; rebuilt only when its configuration changes). */
export const nextAppDir = path.join(repoRoot, 'bench/next-app');
export const DURATION = Number(process.env.BENCH_DURATION ?? 5);
export const SOAK_JOBS = Number(process.env.BENCH_SOAK_JOBS ?? 2000);
export const SOAK_FIRST = 100;
/** A run is stopped after 15 minutes; optional work (the jemalloc soak) is skipped past BUDGET_MS. */
export const HARD_LIMIT_MS = 15 * 60_000;
export const BUDGET_MS = 13 * 60_000;
export const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
export const ONLY = new Set((onlyArg ?? (quick ? 'miss,hit' : (process.env.BENCH_ONLY ?? 'miss,hit,upload,avif,srcset,soak'))).split(',').map((s) => s.trim()));
export const WITH_NEXT = process.env.BENCH_NEXT !== '0';
export const KEY = 'benchkey123';
// Business plan: a run uploads ~1.5 GB, past the free plan's 1 GB storage quota.
export const SEED = `bench:${KEY}:benchsecret123:business`;
export const MISS_CONCURRENCY = (process.env.BENCH_MISS_CONCURRENCY ?? '1,4,16').split(',').map(Number);
export const MISS_FORMATS = (process.env.BENCH_MISS_FORMATS ?? (quick ? 'webp' : 'webp,jpeg')).split(',');
/** As in the comparison that set the hit targets: 32 connections on one derivative. */
export const HIT_CONCURRENCY = 32;
/** Hit measurements alternate between the targets this many times (the machine's load drifts). */
export const HIT_ROUNDS = Number(process.env.BENCH_HIT_ROUNDS ?? 3);
export const UPLOAD_CONCURRENCY = [1, 8];
export const SRCSET_CONCURRENCY = 16;
export const QUALITY = 80;
/**
 * Cache-miss widths: 50 steps of 8 px from 600 to 992 (≈800 on average), the most a Next.js app
 * may allow (deviceSizes + imageSizes, 25 each); 800 (the hit) is one of them.
 */
export const MISS_WIDTHS = Array.from({ length: 50 }, (_, i) => 600 + 8 * i);
export const startedAt = new Date();
export const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-bench-'));
export const rawUploadDir = path.join(tmp, 'raw-uploads');
export const logFile = path.join(tmp, 'servers.log');
export const MB = 1024 * 1024;

export function say(line = '') {
  process.stdout.write(line + '\n');
}
