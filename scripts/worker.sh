#!/usr/bin/env bash
# Starts one worker process: glibc malloc with MALLOC_ARENA_MAX=2 (bounds libvips' arenas; see
# scripts/lib/worker-env.ts), or jemalloc from Debian's libjemalloc2 with PICTOR_ALLOCATOR=jemalloc.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${PICTOR_ALLOCATOR:-}" = "jemalloc" ] && [ -z "${LD_PRELOAD:-}" ]; then
  for lib in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/aarch64-linux-gnu/libjemalloc.so.2; do
    if [ -e "$lib" ]; then export LD_PRELOAD="$lib"; break; fi
  done
fi
case "${LD_PRELOAD:-}" in *jemalloc*) ;; *) export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" ;; esac
# Node flags: WORKER_NODE_FLAGS in scripts/lib/worker-env.ts says why (a test keeps the two equal).
exec node --initial-old-space-size=128 dist/workers/main.js "$@"
