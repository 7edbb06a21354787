// The processes of a bench run: the service under test (`npm start`'s entry), the helper servers
// (raw sharp, ipx, Next.js, express, the from-memory limit) and the load generator, each its own
// process; `measure` runs one load and reads their CPU and peak RSS from /proc.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { FromLoadgen, LoadResult, LoadSpec } from './protocol.js';
import { childPids, cmdline, cpuMs, environOf, freePort, loadAverage, peakRss, quiesce, resetPeak, sleep, spawnNode, stopProcess } from './procs.js';
import { notes, rows, sayRow, type Row } from './report.js';
import { SEED, WORKERS, benchDir, distRoot, logFile, say, tmp } from './settings.js';

export interface Proc {
  name: string;
  pid: number;
}

export interface Service {
  start: ChildProcess;
  origin: string;
  procs: Proc[];
  workerPids: number[];
  allocator: string;
}

export interface Helper {
  proc: Proc;
  /** The helper and any processes it started (CPU is summed over them). */
  procs: Proc[];
  origin: string;
  child: ChildProcess;
}

/** Everything started, stopped by stopAll(). */
const running: ChildProcess[] = [];

function serviceProcs(startPid: number): { procs: Proc[]; workers: number[] } {
  const procs: Proc[] = [{ name: 'svc-start', pid: startPid }];
  const workers: number[] = [];
  for (const pid of childPids(startPid)) {
    const cmd = cmdline(pid);
    if (cmd.includes('redis-server')) procs.push({ name: 'svc-redis', pid });
    else if (cmd.includes('catalog-process.js')) procs.push({ name: 'svc-catalog', pid });
    else if (cmd.includes('src/web/server.js')) {
      // With FRONT_DOOR_PROCESSES > 1 this is the cluster primary; its children serve requests.
      const children = childPids(pid);
      procs.push({ name: children.length ? 'svc-web-primary' : 'svc-web', pid });
      children.forEach((child, i) => procs.push({ name: `svc-web${i + 1}`, pid: child }));
    } else if (cmd.includes('workers/main.js')) {
      workers.push(pid);
      procs.push({ name: `svc-worker${workers.length}`, pid });
    }
  }
  return { procs, workers };
}

/** Waits until `url` answers 200 (or the process exits, or the deadline passes). */
export async function waitHealthy(child: ChildProcess, url: string, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited during start (see ${logFile})`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not become healthy within ${timeoutMs / 1000} s (see ${logFile})`);
    await sleep(250);
  }
}

export async function startService(label: string, extraEnv: Record<string, string> = {}): Promise<Service> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(tmp, `svc-${label}-`));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    API_KEYS_SEED: SEED,
    WORKERS: String(WORKERS),
    // The public route's per-IP limit would answer 429 to a load generator on one IP.
    PUBLIC_RATE_LIMIT_PER_MIN: '1000000',
    ...extraEnv,
  };
  for (const k of ['REDIS_URL', 'MONGO_URL', 'LOCAL_STORAGE_DIR', 'STORAGE_DRIVER']) delete env[k];
  const out = fs.openSync(logFile, 'a');
  const start = spawn(process.execPath, [path.join(distRoot, 'scripts/start.js')], { env, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  running.push(start);
  const origin = `http://127.0.0.1:${port}`;
  await waitHealthy(start, `${origin}/health`, 'the service');
  const { procs, workers } = serviceProcs(start.pid!);
  const allocator = workers.length ? (environOf(workers[0]).LD_PRELOAD?.includes('jemalloc') ? 'jemalloc' : `glibc (MALLOC_ARENA_MAX=${environOf(workers[0]).MALLOC_ARENA_MAX ?? 'unset'})`) : '?';
  return { start, origin, procs, workerPids: workers, allocator };
}

/** A helper server of scripts/bench that reports { type: 'listening' } over IPC. */
export async function startHelper(name: string, script: string, env: Record<string, string>): Promise<Helper> {
  const port = await freePort();
  const spawned = spawnNode(name, path.join(benchDir, script), [], { ...process.env, ...env, PORT: String(port) }, logFile);
  running.push(spawned.child);
  await new Promise<void>((resolve, reject) => {
    spawned.child.on('message', (m: { type?: string }) => m?.type === 'listening' && resolve());
    spawned.child.once('exit', (code) => reject(new Error(`${name} exited with code ${code} (see ${logFile})`)));
  });
  const proc = { name, pid: spawned.pid };
  return { proc, procs: [proc], origin: `http://127.0.0.1:${port}`, child: spawned.child };
}

/** A process started by another module (Next.js), stopped with the rest. */
export function track(child: ChildProcess): void {
  running.push(child);
}

/** The helper's process and the processes it started (e.g. `next start`'s server). */
export function withChildren(helper: Helper): Helper {
  const children = childPids(helper.proc.pid).map((pid, i) => ({ name: `${helper.proc.name}-child${i + 1}`, pid }));
  return { ...helper, procs: [helper.proc, ...children] };
}

// ---------------------------------------------------------------------------------------------
// Load generator (separate process)

let loadgen: ChildProcess;
let nextRunId = 1;

export async function startLoadgen(): Promise<Proc> {
  loadgen = fork(path.join(benchDir, 'loadgen.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  running.push(loadgen);
  const ready = await new Promise<FromLoadgen>((resolve) => loadgen.once('message', resolve));
  const engine =
    ready.type === 'ready' && ready.wrk
      ? `load generator: ${ready.wrk} for the fixed GETs (cache hits, srcset), autocannon for the rest`
      : 'load generator: wrk is not installed (`npm run setup` installs it), so autocannon drives every run; it needs most of a core at the cache hits\' rates, and may set the node:http limit';
  say(engine);
  notes.push(engine);
  return { name: 'loadgen', pid: loadgen.pid! };
}

export function load(spec: LoadSpec): Promise<LoadResult> {
  const id = nextRunId++;
  return new Promise((resolve, reject) => {
    const onMessage = (m: FromLoadgen) => {
      if (m.type === 'result' && m.id === id) {
        loadgen.off('message', onMessage);
        resolve(m.result);
      } else if (m.type === 'failed' && m.id === id) {
        loadgen.off('message', onMessage);
        reject(new Error(m.error));
      }
    };
    loadgen.on('message', onMessage);
    loadgen.send({ type: 'run', id, spec });
  });
}

/** The load generator's CPU share (cores) from which its own cost, not the target's, may set the rate. */
export const LOADGEN_SATURATED = 0.9;

/** One measurement: waits until `procs` are idle, runs the load, records a row with their CPU and peak RSS. */
export async function measure(scenario: string, target: string, procs: Proc[], spec: LoadSpec, note?: string): Promise<{ row: Row; result: LoadResult }> {
  await quiesce(procs.map((p) => p.pid));
  for (const p of procs) resetPeak(p.pid);
  const cpu0 = procs.map((p) => cpuMs(p.pid) ?? 0);
  const result = await load(spec);
  const cpu1 = procs.map((p) => cpuMs(p.pid) ?? 0);
  const peaks: Record<string, number | null> = {};
  for (const p of procs) peaks[p.name] = peakRss(p.pid);
  const cpuPerRequest: Record<string, number> = {};
  procs.forEach((p, i) => (cpuPerRequest[p.name] = result.ok ? (cpu1[i] - cpu0[i]) / result.ok : NaN));
  const cpuMsPerRequest = Object.values(cpuPerRequest).reduce((a, b) => a + b, 0);
  await quiesce(procs.map((p) => p.pid));
  const row: Row = {
    scenario,
    target,
    concurrency: spec.connections,
    requests: result.ok,
    rps: result.rps,
    p50: result.p50,
    p95: result.p95,
    p99: result.p99,
    failed: result.non2xx + result.errors,
    peakRss: peaks,
    cpuPerRequest,
    cpuMsPerRequest,
    loadgenCpu: result.loadgenCpuShare,
    load1: loadAverage(),
    note,
  };
  if (row.loadgenCpu >= LOADGEN_SATURATED) row.note = `${row.note ? row.note + '; ' : ''}the load generator used ${row.loadgenCpu.toFixed(2)} core: it may be the limit`;
  if (row.failed > 0) row.note = `${row.note ? row.note + '; ' : ''}${result.non2xx} non-2xx${result.statusSamples.length ? ` (${result.statusSamples.join(',')})` : ''}, ${result.errors} errors`;
  rows.push(row);
  sayRow(row);
  return { row, result };
}

export async function stopAll(): Promise<void> {
  try {
    loadgen?.send({ type: 'exit' });
  } catch {
    // gone
  }
  await Promise.all(running.map((c) => stopProcess(c, 20_000)));
}
