// Environment for worker processes. Default: glibc malloc with MALLOC_ARENA_MAX=2, which bounds
// libvips' per-thread arenas (the fragmentation that grows RSS under default glibc) and renders
// ~4 % faster than jemalloc here (scripts/bench scenario 6; docs/performance.md, design choices for speed).
// PICTOR_ALLOCATOR=jemalloc preloads Debian's libjemalloc2 instead, when it is installed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

/**
 * Node flags for worker processes. A worker's live JS heap is small (~12 MB), so V8 sizes its old
 * generation's allocation limit at ~22-27 MB and each 12 MP passport photo (~40 MB of typed arrays,
 * ~30 MB of short-lived objects) started ~2.5 full mark-compact collections on the main thread
 * (3-15 ms pauses plus incremental marking steps: ~20-30 ms of the photo's critical path). With
 * an initial old space of 128 MB the limit starts there: 58 -> 9 mark-compacts over 24 photos
 * (most of the 9 while the models load), RSS +35 MiB (docs/passport.md, Speed). The flag is
 * not allowed in NODE_OPTIONS, so every launcher passes it: scripts/start.ts and the test
 * harness (fork execArgv), scripts/worker.sh (checked against this list by a test) and the
 * passport bench.
 */
export const WORKER_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=128'];

/** The execArgv for a forked worker: the parent's own flags plus WORKER_NODE_FLAGS. */
export function workerExecArgv(parent: readonly string[] = process.execArgv): string[] {
  return [...parent.filter((a) => !WORKER_NODE_FLAGS.some((f) => a.split('=')[0] === f.split('=')[0])), ...WORKER_NODE_FLAGS];
}

/**
 * For in-process benches that stand for a worker: when this process lacks a worker flag, runs the
 * same script again with them (same arguments, output inherited) and exits with its status.
 */
export function rerunWithWorkerFlags(): void {
  if (WORKER_NODE_FLAGS.every((f) => process.execArgv.includes(f))) return;
  const again = spawnSync(process.execPath, [...workerExecArgv(), ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(again.status ?? 1);
}

const JEMALLOC_PATHS = ['/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2'];

export function workerEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...base };
  const jemalloc = JEMALLOC_PATHS.find((p) => fs.existsSync(p));
  if (env.PICTOR_ALLOCATOR === 'jemalloc' && jemalloc && !env.LD_PRELOAD) env.LD_PRELOAD = jemalloc;
  if (!env.LD_PRELOAD?.includes('jemalloc')) env.MALLOC_ARENA_MAX ??= '2';
  return env;
}
