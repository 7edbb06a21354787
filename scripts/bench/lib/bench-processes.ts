// The processes of `npm run bench`: the service under test (`npm start`, with its process tree
// named for the per-process figures), the helper servers (raw sharp, ipx, Express) and the load
// generator, each its own process. Everything started is remembered so that it can be stopped.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { FromLoadgen, LoadResult, LoadSpec } from './protocol.js';
import { childPids, cmdline, environOf, freePort, sleep, spawnNode, stopProcess } from './procs.js';

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

export interface BenchProcessesOptions {
  /** The compiled repository root (dist/). */
  distRoot: string;
  /** Where the helper servers' and the load generator's compiled scripts are. */
  benchDir: string;
  /** Temporary folder of the run: each service's DATA_DIR goes in it. */
  tmp: string;
  /** Every server's output. */
  logFile: string;
  /** API_KEYS_SEED of every service. */
  seed: string;
  /** WORKERS of every service unless overridden. */
  workers: number;
}

function serviceProcs(startPid: number): { procs: Proc[]; workers: number[] } {
  const procs: Proc[] = [{ name: 'svc-start+catalog', pid: startPid }];
  const workers: number[] = [];
  for (const pid of childPids(startPid)) {
    const cmd = cmdline(pid);
    if (cmd.includes('redis-server')) procs.push({ name: 'svc-redis', pid });
    else if (cmd.includes('src/web/server.js')) {
      // With FRONT_DOOR_PROCESSES > 1 this is the cluster primary; its children serve requests.
      const children = childPids(pid);
      procs.push({ name: children.length ? 'svc-web-primary' : 'svc-web', pid });
      children.forEach((child, i) => procs.push({ name: `svc-web${i + 1}`, pid: child }));
    }
    else if (cmd.includes('workers/main.js')) {
      workers.push(pid);
      procs.push({ name: `svc-worker${workers.length}`, pid });
    }
  }
  return { procs, workers };
}

export class BenchProcesses {
  /** Every child started, for the final cleanup. */
  readonly running: ChildProcess[] = [];
  private loadgen: ChildProcess | undefined;
  private nextRunId = 1;
  loadgenProc: Proc | undefined;

  constructor(private readonly options: BenchProcessesOptions) {}

  startService = async (label: string, extraEnv: Record<string, string> = {}): Promise<Service> => {
    const { distRoot, tmp, logFile } = this.options;
    const port = await freePort();
    const dataDir = fs.mkdtempSync(path.join(tmp, `svc-${label}-`));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      API_KEYS_SEED: this.options.seed,
      WORKERS: String(this.options.workers),
      // The public route's per-IP limit would answer 429 to a load generator on one IP.
      PUBLIC_RATE_LIMIT_PER_MIN: '1000000',
      ...extraEnv,
    };
    for (const k of ['REDIS_URL', 'MONGO_URL', 'LOCAL_STORAGE_DIR', 'STORAGE_DRIVER']) delete env[k];
    const out = fs.openSync(logFile, 'a');
    const start = spawn(process.execPath, [path.join(distRoot, 'scripts/start.js')], { env, stdio: ['ignore', out, out] });
    fs.closeSync(out);
    this.running.push(start);
    const origin = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (start.exitCode !== null) throw new Error(`the service exited during start (see ${logFile})`);
      try {
        const res = await fetch(`${origin}/health`);
        await res.arrayBuffer();
        if (res.status === 200) break;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error(`the service did not become healthy within 60 s (see ${logFile})`);
      await sleep(250);
    }
    const { procs, workers } = serviceProcs(start.pid!);
    const allocator = workers.length ? (environOf(workers[0]).LD_PRELOAD?.includes('jemalloc') ? 'jemalloc' : `glibc (MALLOC_ARENA_MAX=${environOf(workers[0]).MALLOC_ARENA_MAX ?? 'unset'})`) : '?';
    return { start, origin, procs, workerPids: workers, allocator };
  };

  startHelper = async (name: string, script: string, env: Record<string, string>): Promise<{ proc: Proc; origin: string; child: ChildProcess }> => {
    const { benchDir, logFile } = this.options;
    const port = await freePort();
    const spawned = spawnNode(name, path.join(benchDir, script), [], { ...process.env, ...env, PORT: String(port) }, logFile);
    this.running.push(spawned.child);
    await new Promise<void>((resolve, reject) => {
      spawned.child.on('message', (m: { type?: string }) => m?.type === 'listening' && resolve());
      spawned.child.once('exit', (code) => reject(new Error(`${name} exited with code ${code} (see ${logFile})`)));
    });
    return { proc: { name, pid: spawned.pid }, origin: `http://127.0.0.1:${port}`, child: spawned.child };
  };

  /** The load generator, a separate process driven by messages (lib/protocol.ts). */
  startLoadgen = async (): Promise<void> => {
    const loadgen = fork(path.join(this.options.benchDir, 'loadgen.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.loadgen = loadgen;
    this.running.push(loadgen);
    this.loadgenProc = { name: 'loadgen', pid: loadgen.pid! };
    await new Promise<void>((resolve) => loadgen.once('message', () => resolve()));
  };

  load = (spec: LoadSpec): Promise<LoadResult> => {
    const loadgen = this.loadgen!;
    const id = this.nextRunId++;
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
  };

  /** Stops the load generator and every process still running. */
  async stopAll(): Promise<void> {
    try {
      this.loadgen?.send({ type: 'exit' });
    } catch {
      // gone
    }
    await Promise.all(this.running.map((c) => stopProcess(c, 20_000)));
  }
}
