// Cost of the private redis-server's fsync policy on the upload path: the whole service as
// `npm start` runs it (one worker), once with EMBEDDED_REDIS_APPENDFSYNC=always and once with
// everysec, measured in alternating rounds in one run (the machine is shared: compare the ratio).
// Each round: ROUNDS_UPLOADS uploads of distinct ~60 KB JPEGs to POST /cdn/upload at concurrency 8.
//   node dist/scripts/bench-redis-fsync.js [--rounds 3] [--uploads 300]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startService, type RunningService } from './lib/bench-service.js';
import { gradientJpeg } from './lib/generated-images.js';
import { percentile } from './bench/lib/protocol.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, uploads: { type: 'string', default: '300' }, concurrency: { type: 'string', default: '8' } } });
const rounds = Number(values.rounds);
const uploads = Number(values.uploads);
const concurrency = Number(values.concurrency);

async function uploadRound(service: RunningService, files: Buffer[], tag: string): Promise<{ perSecond: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < files.length) {
        const i = next++;
        const form = new FormData();
        form.append('public_id', `${tag}/${i}`);
        form.append('file', new Blob([new Uint8Array(files[i])], { type: 'image/jpeg' }), `${i}.jpg`);
        const t = performance.now();
        const res = await fetch(`${service.baseUrl}/cdn/upload`, { method: 'POST', body: form, headers: { 'X-API-Key': service.key } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`upload answered ${res.status}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: files.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function main() {
  const files = await Promise.all(Array.from({ length: uploads }, (_, i) => gradientJpeg(400 + (i % 97), 300, 85)));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-fsync-'));
  const policies = ['always', 'everysec'] as const;
  const services = new Map<string, RunningService>();
  try {
    for (const policy of policies) {
      // The data folder on the same disk as ./data would be (tmp is the root filesystem here).
      services.set(policy, await startService({ workers: 1, dataDir: path.join(root, policy), env: { EMBEDDED_REDIS_APPENDFSYNC: policy, LOG_LEVEL: 'warn' } }));
    }
    const results = new Map<string, { perSecond: number; p50: number; p99: number }[]>(policies.map((p) => [p, []]));
    for (let round = 0; round < rounds; round++) {
      for (const policy of round % 2 === 0 ? policies : [...policies].reverse()) {
        const r = await uploadRound(services.get(policy)!, files, `r${round}`);
        results.get(policy)!.push(r);
        console.log(`round ${round + 1} appendfsync ${policy.padEnd(8)} ${r.perSecond.toFixed(1)} uploads/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms`);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const always = median(results.get('always')!.map((r) => r.perSecond));
    const everysec = median(results.get('everysec')!.map((r) => r.perSecond));
    console.log(`median uploads/s: always ${always.toFixed(1)}, everysec ${everysec.toFixed(1)}; always/everysec = ${(always / everysec).toFixed(3)}`);
    const aofBytes = (policy: string) => {
      const dir = path.join(root, policy, 'redis');
      const walk = (d: string): number => fs.readdirSync(d, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? walk(path.join(d, e.name)) : fs.statSync(path.join(d, e.name)).size), 0);
      return fs.existsSync(dir) ? walk(dir) : 0;
    };
    console.log(`append-only file after ${rounds * uploads} uploads: ${(aofBytes('always') / 1024).toFixed(0)} KiB (always), ${(aofBytes('everysec') / 1024).toFixed(0)} KiB (everysec)`);
  } finally {
    for (const service of services.values()) await service.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
