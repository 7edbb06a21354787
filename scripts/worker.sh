#!/usr/bin/env bash
# Starts one worker process with jemalloc preloaded when Debian's libjemalloc2 is installed
# (measured in scripts/bench: keeps worker RSS flat); otherwise glibc with MALLOC_ARENA_MAX=2.
set -euo pipefail
cd "$(dirname "$0")/.."
for lib in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/aarch64-linux-gnu/libjemalloc.so.2; do
  if [ -z "${LD_PRELOAD:-}" ] && [ -e "$lib" ] && [ "${PICTOR_ALLOCATOR:-}" != "glibc" ]; then export LD_PRELOAD="$lib"; fi
done
[ -n "${LD_PRELOAD:-}" ] || export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
exec node dist/workers/main.js "$@"
