#!/usr/bin/env bash
# `npm run setup`: installs what a fresh Debian machine lacks, and is quick when nothing is missing.
#  - apt: redis-server (private Redis for `npm start` and tests), libjemalloc2 (worker allocator),
#         wrk (`npm run bench`'s load generator for cache hits; without it the bench falls back to
#         autocannon, which needs most of a core to drive the node:http limit),
#         chromium (headless browser tests; PICTOR_SKIP_CHROMIUM=1 leaves it out on a machine that only
#         runs the service — the browser suites then fail, saying so)
#  - npm ci when node_modules does not match package-lock.json; then the TypeScript build.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ -e /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ] || [ -e /usr/lib/aarch64-linux-gnu/libjemalloc.so.2 ] || need+=(libjemalloc2)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
if [ "${PICTOR_SKIP_CHROMIUM:-0}" != "1" ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} with apt-get"
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

stamp=node_modules/.pictor-lock-hash
hash=$(sha256sum package-lock.json patches/* 2>/dev/null | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$hash" ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$hash" > "$stamp"
fi
# sharp ships its libvips binary as a package (no install script); fail here, not at run time.
node -e "require('sharp')" 2>/dev/null || node --input-type=module -e "await import('sharp')"
npm run build --silent
echo "setup: ready"
