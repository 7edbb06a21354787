// `npm run bench:fairness`: interactive latency of tenant B while tenant A floods the transform
// queue, without per-tenant accounting (TENANT_MAX_WAITING=0: one FIFO queue, as before) and with
// it (the default), side by side in one run. Starts the service on embedded defaults
// (`node dist/scripts/start.js`) with two seeded users, uploads one 1600×1200 JPEG each, then for
// each mode: B's transform latency alone, and while A keeps BENCH_FLOOD_CONCURRENCY interactive
// transforms in flight (each a new width, so each renders). Prints figures; not a test.
//
// env: BENCH_WORKERS (1), BENCH_FLOOD (300), BENCH_FLOOD_CONCURRENCY (64), BENCH_SAMPLES (10)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService, type RunningService } from './lib/bench-service.js';
import { gradientJpeg } from './lib/generated-images.js';

const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const FLOOD = Number(process.env.BENCH_FLOOD ?? 300);
const FLOOD_CONCURRENCY = Number(process.env.BENCH_FLOOD_CONCURRENCY ?? 64);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10);

const TENANTS = {
  a: { user: 'tenanta', key: 'pk_bench_tenant_a_key', secret: 'bench-secret-tenant-a' },
  b: { user: 'tenantb', key: 'pk_bench_tenant_b_key', secret: 'bench-secret-tenant-b' },
};

function say(line: string) {
  process.stdout.write(line + '\n');
}

async function uploadAs(service: RunningService, key: string, bytes: Buffer, publicId: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), `${publicId}.jpg`);
  const res = await fetch(`${service.baseUrl}/upload?public_id=${publicId}`, { method: 'POST', body: form, headers: { 'X-API-Key': key } });
  const body = (await res.json()) as { public_url?: string; msg?: string };
  if (res.status !== 200 || !body.public_url) throw new Error(`upload: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body.public_url;
}

async function transform(service: RunningService, key: string, src: string, width: number): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${service.baseUrl}/transform?src=${encodeURIComponent(src)}&w=${width}&f=webp`, { headers: { 'X-API-Key': key } });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

const fmt = (values: number[]) => `p50 ${Math.round(quantile(values, 0.5))} ms, p95 ${Math.round(quantile(values, 0.95))} ms, max ${Math.round(Math.max(...values))} ms`;

interface ModeResult {
  alone: number[];
  underFlood: number[];
  floodStatuses: Record<number, number>;
  floodSeconds: number;
}

async function runMode(label: string, tenantMaxWaiting: string, widthBase: number): Promise<ModeResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-bench-fairness-'));
  const seed = Object.values(TENANTS).map((t) => `${t.user}:${t.key}:${t.secret}:business`).join(',');
  const service = await startService({ workers: WORKERS, dataDir, env: { API_KEYS_SEED: seed, TENANT_MAX_WAITING: tenantMaxWaiting } });
  try {
    const photo = await gradientJpeg(1600, 1200);
    const srcA = await uploadAs(service, TENANTS.a.key, photo, 'flood');
    const srcB = await uploadAs(service, TENANTS.b.key, photo, 'interactive');
    // Warm-up: first renders load code paths.
    for (let i = 0; i < 3; i++) await transform(service, TENANTS.b.key, srcB, widthBase + 2000 + i);
    const alone: number[] = [];
    for (let i = 0; i < SAMPLES; i++) alone.push((await transform(service, TENANTS.b.key, srcB, widthBase + 1000 + i * 3)).ms);

    const floodStatuses: Record<number, number> = {};
    let next = 0;
    const floodStarted = performance.now();
    const flood = Promise.all(
      Array.from({ length: FLOOD_CONCURRENCY }, async () => {
        while (next < FLOOD) {
          const i = next++;
          const { status } = await transform(service, TENANTS.a.key, srcA, widthBase + 100 + i);
          floodStatuses[status] = (floodStatuses[status] ?? 0) + 1;
        }
      }),
    ).then(() => (performance.now() - floodStarted) / 1000);
    // Let A's backlog build before B asks.
    await new Promise((r) => setTimeout(r, 500));
    const underFlood: number[] = [];
    for (let i = 0; i < SAMPLES && next < FLOOD; i++) {
      const res = await transform(service, TENANTS.b.key, srcB, widthBase + 1500 + i * 3);
      if (res.status !== 200) throw new Error(`tenant B: HTTP ${res.status}`);
      underFlood.push(res.ms);
    }
    const floodSeconds = await flood;
    say(`${label}: B alone ${fmt(alone)}; B while A floods ${fmt(underFlood)} (${underFlood.length} samples); A: ${FLOOD} requests in ${floodSeconds.toFixed(1)} s, statuses ${JSON.stringify(floodStatuses)}`);
    return { alone, underFlood, floodStatuses, floodSeconds };
  } finally {
    await service.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  say(`fairness bench: ${WORKERS} worker process(es), A floods ${FLOOD} interactive transforms at concurrency ${FLOOD_CONCURRENCY}, B samples ${SAMPLES}; ${os.availableParallelism()} cores`);
  const before = await runMode('before (TENANT_MAX_WAITING=0, one FIFO)', '0', 0);
  const after = await runMode('after (per-tenant accounting)', '1000', 0);
  const ratio = quantile(after.underFlood, 0.5) / quantile(before.underFlood, 0.5);
  say(`B's p50 under A's flood: before ${Math.round(quantile(before.underFlood, 0.5))} ms, after ${Math.round(quantile(after.underFlood, 0.5))} ms (after/before ${ratio.toFixed(2)}); ` + `B alone: ${Math.round(quantile(before.alone, 0.5))} / ${Math.round(quantile(after.alone, 0.5))} ms`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
