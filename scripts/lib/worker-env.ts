// Environment for worker processes: jemalloc (Debian libjemalloc2) via LD_PRELOAD when present,
// which keeps libvips' memory from fragmenting under glibc malloc; MALLOC_ARENA_MAX=2 otherwise.
import fs from 'node:fs';

const JEMALLOC_PATHS = ['/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2'];

export function workerEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...base };
  if (env.PICTOR_ALLOCATOR === 'glibc') {
    env.MALLOC_ARENA_MAX ??= '2';
    return env;
  }
  const jemalloc = JEMALLOC_PATHS.find((p) => fs.existsSync(p));
  if (jemalloc && !env.LD_PRELOAD) env.LD_PRELOAD = jemalloc;
  else env.MALLOC_ARENA_MAX ??= '2';
  return env;
}
