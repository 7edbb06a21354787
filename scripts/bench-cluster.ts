// `npm run bench:cluster`: throughput across hosts, on the cluster of network-namespace hosts the
// cluster test uses (scripts/lib/cluster/; needs root). Two tables:
//  1. the same renders (new derivatives of one photo-like original, `IN_FLIGHT` at a time through
//     front door f1) with 1, 2 and 4 worker processes, all on one worker host or spread over both,
//     one job and one libvips thread per process (as a process per core would run). The layouts
//     take turns, round after round, so a change in the shared machine's load falls on all of them;
//     renders/s and the ratio to the single-process run of the same round (medians over the
//     rounds). Every host shares this machine's two cores: the figures show what spreading over
//     hosts costs and how far two cores carry, not what more machines would give.
//  2. the queue's overhead per job across a 1 ms link: tiny renders one at a time through front
//     door f2, served by one worker on w1, both reaching the data host through the link proxy;
//     rounds with a clean link and with +1 ms per round trip alternate, and the difference of the
//     medians is what the link costs each job (its round trips to Redis, catalog and storage).
// Usage: npm run bench:cluster [-- --jobs=24 --tiny=20 --rounds=3]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Cluster, KEY, type ClusterSettings } from './lib/cluster/cluster.js';
import { Topology } from './lib/cluster/topology.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLIENT = path.join(here, 'lib/cluster/bench-client.js');
const { values } = parseArgs({ options: { jobs: { type: 'string', default: '24' }, tiny: { type: 'string', default: '20' }, rounds: { type: 'string', default: '3' } } });
const JOBS = Number(values.jobs);
const TINY = Number(values.tiny);
const ROUNDS = Number(values.rounds);
/** Renders in flight: enough to keep four single-job workers busy. */
const IN_FLIGHT = 8;
/** Renders each fresh set of workers does before the timed ones (first-job start-up costs). */
const WARM_UP = 4;
const LINK_DELAY_MS = 1;

const settings: ClusterSettings = {
  jobTimeoutMs: 120_000,
  jobLockMs: 3_000,
  stalledIntervalMs: 1_000,
  // Workers are started per layout below.
  workersPerHost: 0,
  // One job and one libvips thread per process: N processes render on at most N cores.
  workerConcurrency: 1,
  extraEnv: { SHARP_THREADS: '1' },
  proxied: ['f2', 'w1'],
  impairment: { delayMs: LINK_DELAY_MS, loss: 0 },
};

const topology = new Topology();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-bench-cluster-'));
const cluster = new Cluster(topology, dir, settings);
const [f1, f2] = cluster.doors();
const load = () => os.loadavg()[0].toFixed(1);

function client<T>(task: Record<string, unknown>): T {
  const out = topology.run('client', [process.execPath, CLIENT, JSON.stringify({ key: KEY, ...task })]);
  const line = out.trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`the bench client failed on ${JSON.stringify(task)}; front door log: ${fs.readFileSync(cluster.log('f1'), 'utf8').slice(-800)}`);
  return JSON.parse(line) as T;
}

interface Batch {
  ms: number;
  statuses: number[];
  latencies: number[];
}

/** The next unused output width per source: every render is a new derivative, never a cache hit. */
const nextWidth = new Map<string, number>();
/** `jobs` new derivatives of `source`, each with its own width. */
function transforms(door: string, source: string, jobs: number, inFlight: number, format: string): Batch {
  const firstWidth = nextWidth.get(source)!;
  nextWidth.set(source, firstWidth + jobs);
  const batch = client<Batch>({ kind: 'transforms', door, source, jobs, inFlight, firstWidth, format });
  const failed = batch.statuses.filter((s) => s !== 200);
  if (failed.length) throw new Error(`${failed.length} of ${jobs} renders failed: ${failed.slice(0, 5).join(', ')}`);
  return batch;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function throughput(photo: string): Promise<void> {
  const layouts: { name: string; w1: number; w2: number }[] = [
    { name: '1 process, one host', w1: 1, w2: 0 },
    { name: '2 processes, one host', w1: 2, w2: 0 },
    { name: '2 processes, spread 1 + 1', w1: 1, w2: 1 },
    { name: '4 processes, one host', w1: 4, w2: 0 },
    { name: '4 processes, spread 2 + 2', w1: 2, w2: 2 },
  ];
  const rates = layouts.map(() => [] as number[]);
  const loads: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, layout] of layouts.entries()) {
      // Direct links: the proxy (for table 2) would take CPU from the renders.
      await Promise.all([layout.w1 && cluster.startWorkers('w1', layout.w1, true), layout.w2 && cluster.startWorkers('w2', layout.w2, true)]);
      transforms(f1, photo, WARM_UP, Math.min(WARM_UP, layout.w1 + layout.w2), 'webp');
      const batch = transforms(f1, photo, JOBS, IN_FLIGHT, 'webp');
      rates[i].push((JOBS * 1000) / batch.ms);
      await Promise.all([cluster.stopWorkers('w1'), cluster.stopWorkers('w2')]);
    }
    loads.push(load());
  }
  console.log(`\nThroughput: ${JOBS} renders (1600×1200 JPEG → webp at widths from 800 px, a new width each) per layout and round, ${IN_FLIGHT} in flight through f1, WORKER_CONCURRENCY=1, SHARP_THREADS=1, ${ROUNDS} rounds`);
  console.log('| workers | renders/s (median) | ratio to 1 process (median of the rounds) | each round |');
  console.log('| --- | --- | --- | --- |');
  for (const [i, layout] of layouts.entries()) {
    const ratios = rates[i].map((rate, round) => rate / rates[0][round]);
    console.log(`| ${layout.name} | ${median(rates[i]).toFixed(2)} | ${median(ratios).toFixed(2)} | ${rates[i].map((r) => r.toFixed(2)).join(', ')} |`);
  }
  console.log(`load average after each round: ${loads.join(', ')}`);
}

async function linkOverhead(tinySource: string): Promise<void> {
  await cluster.startWorkers('w1', 1);
  transforms(f2, tinySource, WARM_UP, 1, 'png');
  const clean: number[] = [];
  const slow: number[] = [];
  const loads: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const impaired of [false, true]) {
      cluster.impairLink('f2', impaired);
      cluster.impairLink('w1', impaired);
      (impaired ? slow : clean).push(...transforms(f2, tinySource, TINY, 1, 'png').latencies);
    }
    loads.push(load());
  }
  cluster.impairLink('f2', false);
  cluster.impairLink('w1', false);
  await cluster.stopWorkers('w1');
  const [a, b] = [median(clean), median(slow)];
  console.log(`\nQueue overhead per job across a ${LINK_DELAY_MS} ms link: ${TINY} tiny renders (400×300 JPEG → png, widths from 16 px) one at a time, ×${ROUNDS} rounds each, front door f2 and one worker on w1 through the link proxy`);
  console.log('| link | p50 per job | p90 per job |');
  console.log('| --- | --- | --- |');
  const p90 = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length * 0.9)];
  console.log(`| clean (proxy, no delay) | ${a.toFixed(1)} ms | ${p90(clean).toFixed(1)} ms |`);
  console.log(`| +${LINK_DELAY_MS} ms per round trip | ${b.toFixed(1)} ms | ${p90(slow).toFixed(1)} ms |`);
  console.log(`| difference (the link's cost per job) | ${(b - a).toFixed(1)} ms, ≈ ${((b - a) / LINK_DELAY_MS).toFixed(0)} round trips | |`);
  console.log(`load average after each round: ${loads.join(', ')}`);
}

let destroyed: Promise<void> | null = null;
const cleanUp = () => {
  destroyed ??= topology.destroy().then(() => fs.rmSync(dir, { recursive: true, force: true }));
  return destroyed;
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void cleanUp().finally(() => process.exit(1)));

let failed = false;
try {
  topology.create();
  console.log(`load average at start ${load()} (${os.cpus().length} cores, shared)`);
  await cluster.start();
  // Uploads are finalized by a worker too.
  await cluster.startWorkers('w2', 1, true);
  const photo = client<{ url: string }>({ kind: 'upload', door: f1, width: 1600, height: 1200, publicId: 'bench-photo' }).url;
  const tiny = client<{ url: string }>({ kind: 'upload', door: f2, width: 400, height: 300, publicId: 'bench-tiny' }).url;
  // Large outputs for the throughput (a real render each), small ones for the link's overhead.
  nextWidth.set(photo, 800);
  nextWidth.set(tiny, 16);
  await cluster.stopWorkers('w2');
  await throughput(photo);
  await linkOverhead(tiny);
} catch (err) {
  failed = true;
  console.error(`bench:cluster: ${(err as Error).message}`);
} finally {
  await cleanUp();
}
process.exit(failed ? 1 : 0);
