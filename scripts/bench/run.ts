// `npm run bench`: Pictor side by side with raw sharp (the practical limit on this machine), ipx
// (a sharp-based peer), Next.js's image optimizer (the peer a Next.js site already has), and for
// cache hits express.static and a bare node:http server answering from memory (the limit for a
// Node front door), in one run. Starts every server as its own process, drives them from a load
// generator process (wrk for the fixed GETs, autocannon for the rest: loadgen.ts), prints one
// table and every ratio with PASS/FAIL, and writes the same as JSON under bench/results/. See docs/performance.md; options in lib/settings.ts
// (`npm run bench:quick` runs only the hit and WebP miss comparison).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../../src/config.js';
import { avifScenario } from './lib/avif-scenario.js';
import { missParams, missSpace, photoFiles, settleDisk, uploadOriginals, uploadSample } from './lib/fixtures.js';
import { nextAccept, nextImagePath, nextVersion, startNext } from './lib/next-peer.js';
import { loadAverage, peakRss, sleep, stopProcess } from './lib/procs.js';
import { LOADGEN_SATURATED, load, measure, startHelper, startLoadgen, startService, stopAll, type Helper } from './lib/processes.js';
import { extra, fmt, notes, printResults, ratio, writeResults, type Row } from './lib/report.js';
import { DURATION, HARD_LIMIT_MS, HIT_CONCURRENCY, HIT_ROUNDS, KEY, MB, MISS_CONCURRENCY, MISS_FORMATS, ONLY, QUALITY, SOAK_JOBS, SRCSET_CONCURRENCY, UPLOAD_CONCURRENCY, WITH_NEXT, WORKERS, logFile, photosDir, rawUploadDir, repoRoot, say, startedAt, tmp } from './lib/settings.js';
import { soakScenario } from './lib/soak.js';

function versionOf(pkg: string): string {
  return JSON.parse(fs.readFileSync(path.join(repoRoot, 'node_modules', pkg, 'package.json'), 'utf8')).version as string;
}

async function main() {
  const load1 = loadAverage();
  say(`Pictor bench — ${startedAt.toISOString()} — ${os.cpus().length} cores, load average ${load1.toFixed(2)} at start; scenarios ${[...ONLY].join(',')}`);
  if (load1 >= 1) say(`WARNING: the machine is busy (load ${load1.toFixed(2)} ≥ 1): absolute numbers and ratios are less reliable`);
  const ipxSharp = versionOf('ipx/node_modules/sharp');
  let ipxSharpVips = '?';
  try {
    const mod = (await import(path.join(repoRoot, 'node_modules/ipx/node_modules/sharp/lib/index.js'))) as { default: { versions: { vips: string } } };
    ipxSharpVips = mod.default.versions.vips;
  } catch {
    // ipx's sharp may be deduplicated into the top level on another install
  }
  const versions = { sharpService: sharp.versions, ipx: versionOf('ipx'), sharpIpx: ipxSharp, vipsIpx: ipxSharpVips, next: WITH_NEXT ? nextVersion() : null };
  say(`sharp: service ${sharp.versions.sharp} (libvips ${sharp.versions.vips}); ipx ${versions.ipx} with its own sharp ${ipxSharp} (libvips ${ipxSharpVips})${WITH_NEXT ? `; Next.js ${versions.next} with the service's sharp` : ''}`);
  const cfg = loadConfig(process.env);
  const encoder = `WebP effort ${cfg.webpEffort} and baseline JPEG (no mozjpeg), 4:2:0, q${QUALITY} (misses: q${QUALITY - 4}–${QUALITY + 4}), for service, raw sharp and ipx (ipx: sharpOptions webpEffort=${cfg.webpEffort}, jpegProgressive=false); service and raw also auto-rotate (no colour transform for sRGB sources); Next.js as it ships: WebP effort 4, JPEG mozjpeg`;
  say(`encoder: ${encoder}`);
  notes.push(`encoder settings: ${encoder}`);

  const loadgenProc = await startLoadgen();
  const svc = await startService('main');
  say(`service: ${svc.origin}, ${svc.workerPids.length} worker process(es), allocator ${svc.allocator}`);
  const originals = await uploadOriginals(svc);
  const raw = await startHelper('raw-sharp', 'raw-server.js', { PHOTOS_DIR: photosDir, UPLOAD_DIR: rawUploadDir });
  const ipx = await startHelper('ipx', 'ipx-server.js', { PHOTOS_DIR: photosDir, IPX_WEBP_EFFORT: String(cfg.webpEffort) });
  let next: Helper | null = null;
  if (WITH_NEXT && (ONLY.has('miss') || ONLY.has('hit'))) {
    const nextStarted = Date.now();
    next = await startNext(photoFiles());
    say(`next: ${next.origin} (build and start ${((Date.now() - nextStarted) / 1000).toFixed(0)} s)`);
  }
  const staticDir = path.join(tmp, 'static');
  fs.mkdirSync(staticDir, { recursive: true });
  const baseline = await startHelper('express', 'baseline-server.js', { STATIC_DIR: staticDir });
  const helpers: Helper[] = [raw, ipx, baseline, ...(next ? [next] : [])];
  const n = originals.length;
  const svcHeaders = { 'X-API-Key': KEY };
  const svcMissPath = (f: string, k: number) => {
    const p = missParams(k, n);
    return `/image/bench.${f}?src=${encodeURIComponent(originals[p.photo].publicUrl)}&w=${p.width}&f=${f}&q=${p.quality}`;
  };
  const rawMissPath = (f: string, k: number) => {
    const p = missParams(k, n);
    return `/t/${originals[p.photo].file}?w=${p.width}&f=${f}&q=${p.quality}`;
  };
  const ipxMissPath = (f: string, k: number) => {
    const p = missParams(k, n);
    return `/w_${p.width},f_${f},q_${p.quality}/${originals[p.photo].file}`;
  };
  const nextMissPath = (k: number) => {
    const p = missParams(k, n);
    return nextImagePath(originals[p.photo].file, p.width, p.quality);
  };
  const range = (from: number, count: number, fn: (k: number) => string) => Array.from({ length: count }, (_, i) => fn(from + i));
  const space = missSpace(n);
  // Cold source: a miss whose original the worker has not decoded yet (the rows above mostly find
  // it in the worker's decoded-source cache): fresh copies of the photos, each asked for once.
  const measureColdSource = async (f: string, warm: Row, rawRow: Row) => {
    const copies = await uploadOriginals(svc, Math.ceil((warm.rps * DURATION * 1.5) / n), `cold-${f}`);
    const coldPath = (k: number) => svcMissPath(f, k).replace(encodeURIComponent(originals[k % n].publicUrl), encodeURIComponent(copies[k].publicUrl));
    const cold = await measure(`miss ${f}`, 'pictor /image cold source', svc.procs, { origin: svc.origin, connections: 1, durationSec: DURATION, headers: svcHeaders, paths: range(0, copies.length, coldPath) });
    const line = `miss ${f} c=1, cold source (original not yet decoded by the worker): ${fmt(cold.row.rps)} req/s = ${fmt(cold.row.rps / rawRow.rps, 2)}× raw sharp, CPU ${fmt(cold.row.cpuMsPerRequest, 2)} ms/req (warm: ${fmt(warm.rps / rawRow.rps, 2)}×, ${fmt(warm.cpuMsPerRequest, 2)} ms/req)`;
    say(line);
    notes.push(line);
  };

  // ---- 1 + 3: cache miss and queue overhead --------------------------------------------------
  if (ONLY.has('miss')) {
    say(`\n1. Transform, cache miss (unique parameter sets: ${n} photos × 50 widths 600-992 × q${QUALITY - 4}-${QUALITY + 4})`);
    // Warm-up: JIT, libvips, connections (its own parameter space: widths 1001+, or the last sets).
    await load({ origin: svc.origin, connections: 2, durationSec: 2, headers: svcHeaders, paths: range(0, 400, (k) => svcMissPath('webp', k).replace(/&w=\d+/, `&w=${1001 + k}`)) });
    await load({ origin: raw.origin, connections: 2, durationSec: 1, paths: range(0, 400, (k) => rawMissPath('webp', k)) });
    await load({ origin: ipx.origin, connections: 2, durationSec: 1, paths: range(0, 400, (k) => ipxMissPath('webp', k)) });
    if (next) await load({ origin: next.origin, connections: 2, durationSec: 2, headers: nextAccept('jpeg'), paths: range(space - 100, 100, nextMissPath) });
    const used: Record<string, number> = { webp: 0, jpeg: 0 };
    for (const f of MISS_FORMATS) {
      for (const c of MISS_CONCURRENCY) {
        const base = used[f];
        const count = space - base;
        const s = await measure(`miss ${f}`, 'pictor /image', svc.procs, { origin: svc.origin, connections: c, durationSec: DURATION, headers: svcHeaders, paths: range(base, count, (k) => svcMissPath(f, k)) });
        // The next level starts past every set a caching server (Pictor, Next) has rendered.
        let consumed = s.result.pathsUsed;
        const r = await measure(`miss ${f}`, 'raw sharp', [raw.proc], { origin: raw.origin, connections: c, durationSec: DURATION, paths: range(base, count, (k) => rawMissPath(f, k)) });
        const i = await measure(`miss ${f}`, 'ipx', [ipx.proc], { origin: ipx.origin, connections: c, durationSec: DURATION, paths: range(base, count, (k) => ipxMissPath(f, k)) });
        ratio(`miss ${f} c=${c}: pictor / raw sharp`, s.row.rps / r.row.rps, 0.95, null, `${fmt(s.row.rps)} vs ${fmt(r.row.rps)} req/s`);
        ratio(`miss ${f} c=${c}: pictor / ipx`, s.row.rps / i.row.rps, 1.0, null, `${fmt(s.row.rps)} vs ${fmt(i.row.rps)} req/s`);
        if (next) {
          const x = await measure(`miss ${f}`, 'next /_next/image', next.procs, { origin: next.origin, connections: c, durationSec: DURATION, headers: nextAccept(f), paths: range(base, count, nextMissPath) });
          consumed = Math.max(consumed, x.result.pathsUsed);
          ratio(`miss ${f} c=${c}: pictor / next`, s.row.rps / x.row.rps, 1.2, null, `${fmt(s.row.rps)} vs ${fmt(x.row.rps)} req/s`);
        }
        used[f] += consumed;
        if (used[f] >= space) notes.push(`cache-miss parameter space for ${f} exhausted: later requests may be hits`);
        if (c === 1) {
          ratio(`queue overhead ${f} (c=1 p50 pictor − raw)`, s.row.p50 - r.row.p50, null, 5, `${fmt(s.row.p50, 2)} − ${fmt(r.row.p50, 2)} ms`);
          await measureColdSource(f, s.row, r.row);
        }
      }
    }
  }

  // ---- 2: cache hit --------------------------------------------------------------------------
  if (ONLY.has('hit')) {
    say(`\n2. Transform, cache hit (same derivative, c=${HIT_CONCURRENCY}; ${HIT_ROUNDS} rounds, medians)`);
    const o = originals[0];
    const cdnPath = `/cdn/${o.imageId}?w=800&f=webp`;
    const first = await fetch(svc.origin + cdnPath);
    const bytes = Buffer.from(await first.arrayBuffer());
    if (first.status !== 200) throw new Error(`GET ${cdnPath} → ${first.status}`);
    fs.writeFileSync(path.join(staticDir, 'hit.webp'), bytes);
    const srcset = await fetch(`${svc.origin}/generate/srcset?src=${encodeURIComponent(o.publicUrl)}&w=800&f=webp&q=${QUALITY}`, { headers: svcHeaders });
    const srcsetBody = (await srcset.json()) as { default?: string };
    if (!srcsetBody.default) throw new Error(`srcset failed: ${srcset.status}`);
    const signed = new URL(srcsetBody.default);
    const signedPath = signed.pathname + signed.search;
    await (await fetch(svc.origin + signedPath)).arrayBuffer();
    extra.cacheHitBytes = bytes.length;
    const memory = await startHelper('node:http memory', 'memory-server.js', { FILE: path.join(staticDir, 'hit.webp'), CONTENT_TYPE: 'image/webp' });
    helpers.push(memory);
    const targets: { name: string; procs: typeof svc.procs; origin: string; path: string; headers?: Record<string, string> }[] = [
      { name: 'pictor /cdn/{id}', procs: svc.procs, origin: svc.origin, path: cdnPath },
      { name: 'pictor /transform signed', procs: svc.procs, origin: svc.origin, path: signedPath },
      { name: 'node:http from memory', procs: memory.procs, origin: memory.origin, path: '/hit.webp' },
      { name: 'express.static', procs: [baseline.proc], origin: baseline.origin, path: '/static/hit.webp' },
    ];
    if (next) {
      const nextPath = nextImagePath(o.file, 800, QUALITY);
      // Measured as a hit only once Next says it answers from its cache (a MISS renders and stores it).
      let cache: string | null = null;
      for (let i = 0; i < 20 && cache !== 'HIT'; i++) {
        const res = await fetch(next.origin + nextPath, { headers: nextAccept('webp') });
        const body = Buffer.from(await res.arrayBuffer());
        if (res.status !== 200 || res.headers.get('content-type') !== 'image/webp') throw new Error(`next ${nextPath}: ${res.status} ${res.headers.get('content-type')}`);
        cache = res.headers.get('x-nextjs-cache');
        extra.nextHitBytes = body.length;
        if (cache !== 'HIT') await sleep(200);
      }
      if (cache !== 'HIT') throw new Error(`next ${nextPath} never answered from its cache (x-nextjs-cache ${cache})`);
      targets.push({ name: 'next /_next/image (warm)', procs: next.procs, origin: next.origin, path: nextPath, headers: nextAccept('webp') });
    }
    // Rounds over every target in turn, so a change of the machine's load meets them all; each
    // target's figure is its median over the rounds. Each measurement follows 2 s of the same load
    // on its target: a server idle while the others were measured (~20 s) has let V8 shrink its
    // young generation and answers its first seconds ~10 % slower, which would measure the order.
    const rounds: Record<string, { rps: number[]; p99: number[]; loadgen: number[] }> = {};
    for (let round = 0; round < HIT_ROUNDS; round++) {
      for (const t of targets) {
        await load({ origin: t.origin, connections: HIT_CONCURRENCY, durationSec: 2, headers: t.headers, paths: [t.path] });
        const m = await measure('hit webp 800', t.name, t.procs, { origin: t.origin, connections: HIT_CONCURRENCY, durationSec: DURATION, headers: t.headers, paths: [t.path] });
        const r = (rounds[t.name] ??= { rps: [], p99: [], loadgen: [] });
        r.rps.push(m.row.rps);
        r.p99.push(m.row.p99);
        r.loadgen.push(m.row.loadgenCpu);
      }
    }
    const hit = Object.fromEntries(Object.entries(rounds).map(([name, r]) => [name, { rps: median(r.rps), p99: median(r.p99) }]));
    const ip = await measure('hit webp 800', 'ipx', [ipx.proc], { origin: ipx.origin, connections: 16, durationSec: DURATION, paths: [`/w_800,f_webp,q_${QUALITY}/${o.file}`] });
    const limit = hit['node:http from memory'];
    // A limit the load generator held down would make every ratio to it look better than it is.
    const limitHeld = rounds['node:http from memory'].loadgen.some((share) => share >= LOADGEN_SATURATED);
    const nextHit = hit['next /_next/image (warm)'];
    for (const [label, name] of [['/cdn', 'pictor /cdn/{id}'], ['signed /transform', 'pictor /transform signed']]) {
      const p = hit[name];
      if (limitHeld) ratio(`hit ${label}: pictor / node:http from memory`, NaN, 0.6, null, `not measured: the load generator used ≥ ${LOADGEN_SATURATED} core on the node:http rows, so it, not node:http, set that rate`);
      else ratio(`hit ${label}: pictor / node:http from memory`, p.rps / limit.rps, 0.6, null, `${fmt(p.rps)} vs ${fmt(limit.rps)} req/s`);
      ratio(`hit ${label}: pictor / express.static`, p.rps / hit['express.static'].rps, 0.5, null, `${fmt(p.rps)} vs ${fmt(hit['express.static'].rps)} req/s`);
      ratio(`hit ${label}: pictor / ipx`, p.rps / ip.row.rps, 50, null, `${fmt(p.rps)} vs ${fmt(ip.row.rps)} req/s`);
      if (nextHit) {
        ratio(`hit ${label}: pictor / next (warm)`, p.rps / nextHit.rps, 1.2, null, `${fmt(p.rps)} vs ${fmt(nextHit.rps)} req/s`);
        ratio(`hit ${label}: p99 pictor / next`, p.p99 / nextHit.p99, null, 1, `${fmt(p.p99)} vs ${fmt(nextHit.p99)} ms`);
      }
    }
  }

  // ---- 7: srcset -----------------------------------------------------------------------------
  if (ONLY.has('srcset')) {
    say(`\n7. Srcset vs Express hello-world (c=${SRCSET_CONCURRENCY})`);
    const o = originals[1];
    const p = `/generate/srcset?src=${encodeURIComponent(o.publicUrl)}&w=400,800,1200&f=webp&q=${QUALITY}`;
    await load({ origin: svc.origin, connections: 4, durationSec: 1, headers: svcHeaders, paths: [p] });
    const s = await measure('srcset 3 widths', 'pictor /generate/srcset', svc.procs, { origin: svc.origin, connections: SRCSET_CONCURRENCY, durationSec: DURATION, headers: svcHeaders, paths: [p] });
    await load({ origin: baseline.origin, connections: 4, durationSec: 1, paths: ['/hello'] });
    const h = await measure('srcset 3 widths', 'express hello-world', [baseline.proc], { origin: baseline.origin, connections: SRCSET_CONCURRENCY, durationSec: DURATION, paths: ['/hello'] });
    ratio('srcset: pictor / hello-world', s.row.rps / h.row.rps, 0.5, null, `${fmt(s.row.rps)} vs ${fmt(h.row.rps)} req/s`);
  }

  // ---- 4: upload -----------------------------------------------------------------------------
  if (ONLY.has('upload')) {
    const sample = await uploadSample();
    say(`\n4. Upload (${(sample.bytes / MB).toFixed(2)} MB JPEG, multipart)`);
    const headers = (extraHeaders: Record<string, string>) => ({ 'Content-Type': `multipart/form-data; boundary=${sample.boundary}`, ...extraHeaders });
    const bodyBase64 = sample.body.toString('base64');
    let nUpload = 0;
    await load({ origin: svc.origin, connections: 2, durationSec: 1, method: 'POST', headers: headers(svcHeaders), bodyBase64, pathTemplate: '/upload?public_id=bench/warm-{n}' });
    await load({ origin: raw.origin, connections: 2, durationSec: 1, method: 'POST', headers: headers({}), bodyBase64, pathTemplate: '/upload' });
    for (const c of UPLOAD_CONCURRENCY) {
      settleDisk();
      const s = await measure('upload 1 MB', 'pictor POST /upload', svc.procs, { origin: svc.origin, connections: c, durationSec: DURATION, method: 'POST', headers: headers(svcHeaders), bodyBase64, pathTemplate: '/upload?public_id=bench/u-{n}', nStart: nUpload });
      nUpload += s.result.pathsUsed;
      settleDisk();
      const r = await measure('upload 1 MB', 'raw (metadata+write)', [raw.proc], { origin: raw.origin, connections: c, durationSec: DURATION, method: 'POST', headers: headers({}), bodyBase64, pathTemplate: '/upload' });
      if (c === 8) ratio('upload c=8: pictor / raw', s.row.rps / r.row.rps, 0.5, null, `${fmt(s.row.rps)} vs ${fmt(r.row.rps)} req/s`);
    }
  }

  // ---- 5: AVIF -------------------------------------------------------------------------------
  if (ONLY.has('avif')) await avifScenario();

  const finalPeaks: Record<string, number | null> = {};
  for (const p of [...svc.procs, ...helpers.flatMap((h) => h.procs), loadgenProc]) finalPeaks[p.name] = peakRss(p.pid);
  for (const h of helpers) await stopProcess(h.child);
  await stopProcess(svc.start, 30_000);

  // ---- 6: soak -------------------------------------------------------------------------------
  if (ONLY.has('soak')) await soakScenario();

  // ---- report --------------------------------------------------------------------------------
  const load2 = loadAverage();
  const failedCount = printResults(DURATION, finalPeaks, load2);
  const settings = { durationSec: DURATION, workers: WORKERS, soakJobs: SOAK_JOBS, quality: QUALITY, scenarios: [...ONLY], encoder, env: pick(process.env, ['WORKER_CONCURRENCY', 'SHARP_THREADS', 'WEBP_EFFORT', 'AVIF_EFFORT', 'LOG_LEVEL']) };
  const file = writeResults({ loadAtStart: load1, loadAtEnd: load2, versions, settings, finalPeakRss: finalPeaks });
  say(`\nwritten: ${path.relative(process.cwd(), file)}`);
  return failedCount;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function pick(env: NodeJS.ProcessEnv, keys: string[]) {
  return Object.fromEntries(keys.filter((k) => env[k] !== undefined).map((k) => [k, env[k]]));
}

async function cleanup() {
  await stopAll();
  if (process.env.BENCH_KEEP !== '1') fs.rmSync(tmp, { recursive: true, force: true });
  else say(`kept ${tmp}`);
}

let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (interrupted) return;
    interrupted = true;
    void cleanup().then(() => process.exit(130));
  });
}

const hardLimit = setTimeout(() => {
  process.stderr.write(`bench: ${HARD_LIMIT_MS / 60_000}-minute limit reached, stopping\n`);
  void cleanup().then(() => process.exit(2));
}, HARD_LIMIT_MS);
hardLimit.unref();

main().then(
  async (failed) => {
    await cleanup();
    process.exit(failed === 0 ? 0 : 1);
  },
  async (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n(server logs: ${logFile})\n`);
    process.env.BENCH_KEEP = '1';
    await cleanup();
    process.exit(1);
  },
);
