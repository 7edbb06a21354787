// Environment for worker processes. Default: glibc malloc with MALLOC_ARENA_MAX=2, which bounds
// libvips' per-thread arenas (the fragmentation that grows RSS under default glibc) and renders
// ~4 % faster than jemalloc here (scripts/bench scenario 6 and the README's tuning table).
// PICTOR_ALLOCATOR=jemalloc preloads Debian's libjemalloc2 instead, when it is installed.
import fs from 'node:fs';

const JEMALLOC_PATHS = ['/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2'];

export function workerEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...base };
  const jemalloc = JEMALLOC_PATHS.find((p) => fs.existsSync(p));
  if (env.PICTOR_ALLOCATOR === 'jemalloc' && jemalloc && !env.LD_PRELOAD) env.LD_PRELOAD = jemalloc;
  if (!env.LD_PRELOAD?.includes('jemalloc')) env.MALLOC_ARENA_MAX ??= '2';
  return env;
}
