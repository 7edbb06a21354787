// `npm run bench`: Pictor side by side with raw sharp (the practical limit on this machine) and ipx
// (a sharp-based peer), in one run. Starts every server as its own process, drives them with
// autocannon from another process, prints one table and every ratio with PASS/FAIL, and writes
// the same as JSON under bench/results/. See docs/performance.md.
//
// env: BENCH_DURATION (s per measurement, default 5), BENCH_SOAK_JOBS (2000), BENCH_WORKERS (1),
//      BENCH_ONLY (comma list of scenarios: miss,hit,upload,avif,srcset,soak), BENCH_KEEP=1 keeps the temp dir.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { loadConfig } from '../../src/config.js';
import { BenchProcesses, type Service } from './lib/bench-processes.js';
import { BenchResults, fmt, MB, mb, pad, type Row } from './lib/bench-results.js';
import { currentRss, loadAverage, peakRss, sleep, stopProcess } from './lib/procs.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const distRoot = path.resolve(here, '../..');
const repoRoot = path.resolve(distRoot, '..');
const photosDir = path.resolve(process.env.BENCH_PHOTOS ?? path.join(repoRoot, 'test/fixtures/corpus/photos'));
const resultsDir = path.join(repoRoot, 'bench/results');
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const SOAK_JOBS = Number(process.env.BENCH_SOAK_JOBS ?? 2000);
const SOAK_FIRST = 100;
/** The run must end within 10 minutes; optional work is skipped past this point. */
const BUDGET_MS = 9.5 * 60_000;
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'miss,hit,upload,avif,srcset,soak').split(',').map((s) => s.trim()));
const KEY = 'benchkey123';
// Business plan: a run uploads ~1.5 GB, past the free plan's 1 GB storage quota.
const SEED = `bench:${KEY}:benchsecret123:business`;
const MISS_CONCURRENCY = (process.env.BENCH_MISS_CONCURRENCY ?? '1,4,16').split(',').map(Number);
const MISS_FORMATS = (process.env.BENCH_MISS_FORMATS ?? 'webp,jpeg').split(',');
const HIT_CONCURRENCY = 16;
const UPLOAD_CONCURRENCY = [1, 8];
const SRCSET_CONCURRENCY = 16;
const QUALITY = 80;
const startedAt = new Date();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-bench-'));
const rawUploadDir = path.join(tmp, 'raw-uploads');
const logFile = path.join(tmp, 'servers.log');

function say(line = '') {
  process.stdout.write(line + '\n');
}

const processes = new BenchProcesses({ distRoot, benchDir: here, tmp, logFile, seed: SEED, workers: WORKERS });
const { startService, startHelper, startLoadgen, load, running } = processes;
const results = new BenchResults(load, say);
const { rows, ratios, notes, extra, measure, ratio } = results;

// ---------------------------------------------------------------------------------------------
// Fixtures

interface Original {
  file: string;
  imageId: string;
  publicUrl: string;
}

async function uploadOriginals(svc: Service): Promise<Original[]> {
  const files = fs.readdirSync(photosDir).filter((f) => /\.jpe?g$/i.test(f)).sort();
  if (files.length === 0) throw new Error(`no JPEG photos in ${photosDir}`);
  const out: Original[] = [];
  for (const file of files) {
    const form = new FormData();
    form.append('file', new Blob([fs.readFileSync(path.join(photosDir, file))], { type: 'image/jpeg' }), file);
    const res = await fetch(`${svc.origin}/cdn/upload`, { method: 'POST', headers: { 'X-API-Key': KEY }, body: form });
    const body = (await res.json()) as { imageId?: string; public_url?: string };
    if (res.status !== 200 || !body.imageId || !body.public_url) throw new Error(`upload of ${file} failed: ${res.status} ${JSON.stringify(body)}`);
    out.push({ file, imageId: body.imageId, publicUrl: body.public_url });
  }
  return out;
}

/**
 * Each upload measurement starts with no write-back pending from the one before: raw's files
 * (page cache only, ~1 GB per run) would otherwise be flushed to disk while the next side is
 * measured, and that side's fsyncs would wait for them. Raw's files are removed (it never reads them).
 */
function settleDisk(): void {
  // The raw server may still be finishing writes of the warm-up: retry while the directory empties.
  fs.rmSync(rawUploadDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  fs.mkdirSync(rawUploadDir, { recursive: true });
  execFileSync('sync');
}

/** A JPEG of about 1 MB (re-encoded from the corpus) and the multipart body carrying it. */
async function uploadSample(): Promise<{ body: Buffer; boundary: string; bytes: number }> {
  const files = fs.readdirSync(photosDir).filter((f) => /\.jpe?g$/i.test(f)).sort();
  const source = fs.readFileSync(path.join(photosDir, files[0]));
  let best: Buffer = source;
  for (const q of [85, 88, 90, 92, 94, 95, 96]) {
    const candidate = await sharp(source).jpeg({ quality: q }).toBuffer();
    if (Math.abs(candidate.length - MB) < Math.abs(best.length - MB)) best = candidate;
  }
  const boundary = '----pictorbench' + Date.now().toString(16);
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, best, tail]), boundary, bytes: best.length };
}

/** k-th unique cache-miss parameter set: photo k mod n, width 600..1000 (≈800 px on average). */
function missParams(k: number, n: number): { photo: number; width: number } {
  return { photo: k % n, width: 600 + (Math.floor(k / n) % 401) };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  fs.mkdirSync(resultsDir, { recursive: true });
  const load1 = loadAverage();
  say(`Pictor bench — ${startedAt.toISOString()} — ${os.cpus().length} cores, load average ${load1.toFixed(2)} at start`);
  if (load1 >= 1) say(`WARNING: the machine is busy (load ${load1.toFixed(2)} ≥ 1): absolute numbers and ratios are less reliable`);
  const sharpVersions = {
    service: sharp.versions,
    ipx: JSON.parse(fs.readFileSync(path.join(repoRoot, 'node_modules/ipx/node_modules/sharp/package.json'), 'utf8')).version as string,
  };
  let ipxSharpVips = '?';
  try {
    const ipxSharp = (await import(path.join(repoRoot, 'node_modules/ipx/node_modules/sharp/lib/index.js'))) as { default: { versions: { vips: string } } };
    ipxSharpVips = ipxSharp.default.versions.vips;
  } catch {
    // ipx's sharp may be deduplicated into the top level on another install
  }
  const ipxVersion = JSON.parse(fs.readFileSync(path.join(repoRoot, 'node_modules/ipx/package.json'), 'utf8')).version as string;
  say(`sharp: service ${sharpVersions.service.sharp} (libvips ${sharpVersions.service.vips}); ipx ${ipxVersion} with its own sharp ${sharpVersions.ipx} (libvips ${ipxSharpVips})`);
  const cfg = loadConfig(process.env);
  const cfgEnv = { webpEffort: cfg.webpEffort, avifEffort: cfg.avifEffort };
  const encoder = `WebP q${QUALITY} effort ${cfgEnv.webpEffort}, JPEG q${QUALITY} baseline (no mozjpeg), 4:2:0, same for service, raw sharp and ipx (ipx: sharpOptions webpEffort=${cfgEnv.webpEffort}, jpegProgressive=false); service and raw also auto-rotate (no colour transform for sRGB sources)`;
  say(`encoder: ${encoder}`);
  notes.push(`encoder settings: ${encoder}`);

  await startLoadgen();
  const svc = await startService('main');
  say(`service: ${svc.origin}, ${svc.workerPids.length} worker process(es), allocator ${svc.allocator}`);
  const originals = await uploadOriginals(svc);
  const raw = await startHelper('raw-sharp', 'raw-server.js', { PHOTOS_DIR: photosDir, UPLOAD_DIR: rawUploadDir });
  const ipx = await startHelper('ipx', 'ipx-server.js', { PHOTOS_DIR: photosDir, IPX_WEBP_EFFORT: String(cfgEnv.webpEffort) });
  const staticDir = path.join(tmp, 'static');
  fs.mkdirSync(staticDir, { recursive: true });
  const baseline = await startHelper('express', 'baseline-server.js', { STATIC_DIR: staticDir });
  const n = originals.length;
  const svcHeaders = { 'X-API-Key': KEY };
  const svcMissPath = (f: string, k: number) => {
    const p = missParams(k, n);
    return `/image/bench.${f}?src=${encodeURIComponent(originals[p.photo].publicUrl)}&w=${p.width}&f=${f}&q=${QUALITY}`;
  };
  const rawMissPath = (f: string, k: number) => {
    const p = missParams(k, n);
    return `/t/${originals[p.photo].file}?w=${p.width}&f=${f}&q=${QUALITY}`;
  };
  const ipxMissPath = (f: string, k: number) => {
    const p = missParams(k, n);
    return `/w_${p.width},f_${f},q_${QUALITY}/${originals[p.photo].file}`;
  };
  const range = (from: number, count: number, fn: (k: number) => string) => Array.from({ length: count }, (_, i) => fn(from + i));

  // ---- 1 + 3: cache miss and queue overhead --------------------------------------------------
  if (ONLY.has('miss')) {
    say('\n1. Transform, cache miss (unique parameter sets, widths 600-1000 → ≈800 px)');
    // Warm-up: JIT, libvips, connections (its own parameter space: widths 1001+).
    const warm = (k: number) => 10_000 + k;
    await load({ origin: svc.origin, connections: 2, durationSec: 2, headers: svcHeaders, paths: range(0, 400, (k) => svcMissPath('webp', warm(k)).replace(/&w=\d+/, `&w=${1001 + k}`)) });
    await load({ origin: raw.origin, connections: 2, durationSec: 1, paths: range(0, 400, (k) => rawMissPath('webp', k)) });
    await load({ origin: ipx.origin, connections: 2, durationSec: 1, paths: range(0, 400, (k) => ipxMissPath('webp', k)) });
    const next: Record<string, number> = { webp: 0, jpeg: 0 };
    for (const f of MISS_FORMATS) {
      for (const c of MISS_CONCURRENCY) {
        const base = next[f];
        const count = 2406 - base;
        const s = await measure(`miss ${f}`, 'pictor /image', [...svc.procs], { origin: svc.origin, connections: c, durationSec: DURATION, headers: svcHeaders, paths: range(base, count, (k) => svcMissPath(f, k)) });
        next[f] += s.result.pathsUsed;
        if (next[f] >= 2406) notes.push(`cache-miss parameter space for ${f} exhausted: later requests may be hits`);
        const r = await measure(`miss ${f}`, 'raw sharp', [raw.proc], { origin: raw.origin, connections: c, durationSec: DURATION, paths: range(base, count, (k) => rawMissPath(f, k)) });
        const i = await measure(`miss ${f}`, 'ipx', [ipx.proc], { origin: ipx.origin, connections: c, durationSec: DURATION, paths: range(base, count, (k) => ipxMissPath(f, k)) });
        ratio(`miss ${f} c=${c}: pictor / raw sharp`, s.row.rps / r.row.rps, 0.8, null, `${fmt(s.row.rps)} vs ${fmt(r.row.rps)} req/s`);
        ratio(`miss ${f} c=${c}: pictor / ipx`, s.row.rps / i.row.rps, 1.0, null, `${fmt(s.row.rps)} vs ${fmt(i.row.rps)} req/s`);
        if (c === 1) {
          ratio(`queue overhead ${f} (c=1 p50 pictor − raw)`, s.row.p50 - r.row.p50, null, 5, `${fmt(s.row.p50, 2)} − ${fmt(r.row.p50, 2)} ms`);
        }
      }
    }
  }

  // ---- 2: cache hit --------------------------------------------------------------------------
  if (ONLY.has('hit')) {
    say(`\n2. Transform, cache hit (same derivative, c=${HIT_CONCURRENCY})`);
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
    const warmSigned = await fetch(svc.origin + signedPath);
    await warmSigned.arrayBuffer();
    extra.cacheHitBytes = bytes.length;
    await load({ origin: svc.origin, connections: 4, durationSec: 1, paths: [cdnPath] });
    const a = await measure('hit webp 800', 'pictor /cdn/{id}', svc.procs, { origin: svc.origin, connections: HIT_CONCURRENCY, durationSec: DURATION, paths: [cdnPath] });
    const b = await measure('hit webp 800', 'pictor /transform signed', svc.procs, { origin: svc.origin, connections: HIT_CONCURRENCY, durationSec: DURATION, paths: [signedPath] });
    await load({ origin: baseline.origin, connections: 4, durationSec: 1, paths: ['/static/hit.webp'] });
    const st = await measure('hit webp 800', 'express.static', [baseline.proc], { origin: baseline.origin, connections: HIT_CONCURRENCY, durationSec: DURATION, paths: ['/static/hit.webp'] });
    const ip = await measure('hit webp 800', 'ipx', [ipx.proc], { origin: ipx.origin, connections: HIT_CONCURRENCY, durationSec: DURATION, paths: [`/w_800,f_webp,q_${QUALITY}/${o.file}`] });
    ratio('hit /cdn: pictor / express.static', a.row.rps / st.row.rps, 0.5, null, `${fmt(a.row.rps)} vs ${fmt(st.row.rps)} req/s`);
    ratio('hit signed /transform: pictor / express.static', b.row.rps / st.row.rps, 0.5, null, `${fmt(b.row.rps)} vs ${fmt(st.row.rps)} req/s`);
    ratio('hit /cdn: pictor / ipx', a.row.rps / ip.row.rps, 50, null, `${fmt(a.row.rps)} vs ${fmt(ip.row.rps)} req/s`);
    ratio('hit signed /transform: pictor / ipx', b.row.rps / ip.row.rps, 50, null, `${fmt(b.row.rps)} vs ${fmt(ip.row.rps)} req/s`);
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
  if (ONLY.has('avif')) {
    say('\n5. AVIF vs WebP (800 px, 6 photos, encode time, size and PSNR)');
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(here, 'avif.js')], { env: { ...process.env, PHOTOS_DIR: photosDir }, stdio: ['ignore', 'pipe', 'inherit'] });
      running.push(child);
      let text = '';
      child.stdout.on('data', (c: Buffer) => (text += c.toString()));
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`avif measurement exited with ${code}`))));
    });
    type Sample = { quality: number; encodeMs: number; renderMs: number; bytes: number; psnr: number };
    const avif = JSON.parse(out) as {
      threads: number;
      webpEffort: number;
      webpQuality: number;
      defaultAvifEffort: number;
      matchedQuality: number;
      webp: Sample;
      matched: Record<string, Sample>;
      sameQuality: Record<string, Sample>;
    };
    extra.avif = avif;
    say(`  AVIF quality matched to WebP q${avif.webpQuality} by PSNR: q${avif.matchedQuality}; libvips threads ${avif.threads} (as a worker job)`);
    say(`  ${pad('encoder', 22)} ${'encode ms'.padStart(10)} ${'render ms'.padStart(10)} ${'KB'.padStart(7)} ${'PSNR dB'.padStart(8)}`);
    const line5 = (label: string, s: Sample, vs = '') =>
      say(`  ${pad(label, 22)} ${fmt(s.encodeMs).padStart(10)} ${(s.renderMs ? fmt(s.renderMs) : '').padStart(10)} ${fmt(s.bytes / 1024).padStart(7)} ${fmt(s.psnr, 2).padStart(8)}${vs}`);
    line5(`webp q${avif.webpQuality} effort ${avif.webpEffort}`, avif.webp);
    for (const [e, s] of Object.entries(avif.matched)) {
      const mark = Number(e) === avif.defaultAvifEffort ? '  ← default' : '';
      line5(`avif q${s.quality} effort ${e}`, s, `  ×${fmt(s.encodeMs / avif.webp.encodeMs, 2)} time, ×${fmt(s.bytes / avif.webp.bytes, 2)} size${mark}`);
    }
    for (const [e, s] of Object.entries(avif.sameQuality)) {
      line5(`avif q${s.quality} effort ${e}`, s, `  ×${fmt(s.encodeMs / avif.webp.encodeMs, 2)} time, ×${fmt(s.bytes / avif.webp.bytes, 2)} size (same q number)`);
    }
    const d = avif.matched[String(avif.defaultAvifEffort)];
    if (d) {
      ratio(`AVIF effort ${avif.defaultAvifEffort}: encode time / WebP`, d.encodeMs / avif.webp.encodeMs, null, 2, `${fmt(d.encodeMs)} vs ${fmt(avif.webp.encodeMs)} ms per 800 px image, encode only (whole render ${fmt(d.renderMs)} vs ${fmt(avif.webp.renderMs)} ms)`);
      ratio(`AVIF effort ${avif.defaultAvifEffort}: size / WebP at equal PSNR`, d.bytes / avif.webp.bytes, null, 1, `${fmt(d.bytes / 1024)} KB (q${d.quality}, ${fmt(d.psnr, 2)} dB) vs ${fmt(avif.webp.bytes / 1024)} KB (q${avif.webpQuality}, ${fmt(avif.webp.psnr, 2)} dB)`);
    } else {
      notes.push(`AVIF default effort ${avif.defaultAvifEffort} is not among the measured efforts`);
    }
  }

  const finalPeaks: Record<string, number | null> = {};
  for (const p of [...svc.procs, raw.proc, ipx.proc, baseline.proc, processes.loadgenProc!]) finalPeaks[p.name] = peakRss(p.pid);
  for (const child of [raw.child, ipx.child, baseline.child]) await stopProcess(child);
  await stopProcess(svc.start, 30_000);

  // ---- 6: soak -------------------------------------------------------------------------------
  if (ONLY.has('soak')) {
    say(`\n6. Soak: ${SOAK_JOBS} mixed transforms, worker RSS after the first ${SOAK_FIRST} vs at the end (fresh service each)`);
    const soak: Record<string, unknown> = {};
    let lastSoakMs = 0;
    for (const allocator of ['glibc', 'jemalloc']) {
      const soakStarted = Date.now();
      if (allocator === 'jemalloc' && soakStarted - startedAt.getTime() + lastSoakMs > BUDGET_MS) {
        notes.push(`jemalloc soak skipped: it would end the run past the ${BUDGET_MS / 60_000}-minute budget (the machine is slow or busy); run BENCH_ONLY=soak for the comparison`);
        say(`  pictor worker, jemalloc: skipped (time budget)`);
        continue;
      }
      const s = await startService(`soak-${allocator}`, { PICTOR_ALLOCATOR: allocator, WORKERS: '1' });
      if (!s.allocator.startsWith(allocator)) {
        notes.push(`${allocator} soak skipped: the worker runs ${s.allocator} (is Debian's libjemalloc2 installed?)`);
        await stopProcess(s.start, 30_000);
        continue;
      }
      const o = await uploadOriginals(s);
      const worker = s.workerPids[0];
      const soakPath = (k: number) => {
        const photo = o[k % o.length];
        const j = Math.floor(k / o.length);
        // Unique (photo, width) for j < 400; formats, fits, qualities and an effect mixed.
        const w = 100 + ((j * 37) % 400);
        const f = j % 20 === 7 ? 'avif' : j % 2 === 0 ? 'webp' : 'jpeg';
        const box = j % 3 === 0 ? `&h=${Math.round(w * 0.75)}&fit=cover` : '';
        const blur = j % 7 === 3 ? '&blur=4' : '';
        return `/image/soak.${f}?src=${encodeURIComponent(photo.publicUrl)}&w=${w}${box}${blur}&f=${f}&q=${70 + (j % 4) * 5}`;
      };
      const paths = Array.from({ length: SOAK_JOBS }, (_, k) => soakPath(k));
      const rss0 = currentRss(worker);
      const r1 = await load({ origin: s.origin, connections: 4, amount: SOAK_FIRST, headers: svcHeaders, paths: paths.slice(0, SOAK_FIRST) });
      await sleep(500);
      const rssFirst = currentRss(worker);
      const r2 = await load({ origin: s.origin, connections: 4, amount: SOAK_JOBS - SOAK_FIRST, headers: svcHeaders, paths: paths.slice(SOAK_FIRST) });
      await sleep(500);
      const rssEnd = currentRss(worker);
      const hwm = peakRss(worker);
      const failed = r1.non2xx + r1.errors + r2.non2xx + r2.errors;
      const row: Row = {
        scenario: `soak ${SOAK_JOBS} mixed`,
        target: `pictor worker, ${s.allocator}`,
        concurrency: 4,
        requests: r1.ok + r2.ok,
        rps: (r1.ok + r2.ok) / (r1.durationSec + r2.durationSec),
        p50: r2.p50,
        p95: r2.p95,
        p99: r2.p99,
        failed,
        peakRss: { 'svc-worker1': hwm },
        cpuPerRequest: {},
        cpuMsPerRequest: NaN,
        note: `worker RSS: start ${mb(rss0)}, after ${SOAK_FIRST} ${mb(rssFirst)}, after ${SOAK_JOBS} ${mb(rssEnd)}`,
      };
      rows.push(row);
      say(`  ${pad(row.target, 40)} ${fmt(row.rps, 1).padStart(7)} req/s  ${row.note}${failed ? `  FAILED ${failed}` : ''}`);
      soak[allocator] = { allocator: s.allocator, rssStart: rss0, rssAfterFirst: rssFirst, rssEnd, peak: hwm, failed };
      if (rssFirst && rssEnd) {
        ratio(`soak RSS end / after ${SOAK_FIRST} (${allocator}${allocator === 'glibc' ? ', default' : ', comparison'})`, rssEnd / rssFirst, null, 1.3, `${mb(rssEnd)} vs ${mb(rssFirst)}`);
      }
      await stopProcess(s.start, 30_000);
      lastSoakMs = Date.now() - soakStarted;
    }
    extra.soak = soak;
    // Only the default allocator is a target; jemalloc is the comparison asked for.
    const jemalloc = ratios.find((r) => r.name.includes('jemalloc'));
    if (jemalloc) {
      jemalloc.target = `(info) ${jemalloc.target}`;
      jemalloc.pass = true;
    }
  }

  // ---- report --------------------------------------------------------------------------------
  const failedCount = results.printReport(DURATION, finalPeaks);
  const load2 = loadAverage();
  say(`load average at the end: ${load2.toFixed(2)}`);
  say(failedCount === 0 ? `ALL ${ratios.length} TARGETS PASS` : `${failedCount} of ${ratios.length} targets FAIL`);

  const file = path.join(resultsDir, `bench-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 1024 ** 3), loadAtStart: load1, loadAtEnd: load2, node: process.version },
        versions: { sharpService: sharpVersions.service, ipx: ipxVersion, sharpIpx: sharpVersions.ipx, vipsIpx: ipxSharpVips },
        settings: { durationSec: DURATION, workers: WORKERS, soakJobs: SOAK_JOBS, quality: QUALITY, encoder, env: pick(process.env, ['WORKER_CONCURRENCY', 'SHARP_THREADS', 'WEBP_EFFORT', 'AVIF_EFFORT', 'LOG_LEVEL']) },
        rows,
        ratios,
        finalPeakRss: finalPeaks,
        notes,
        ...extra,
      },
      null,
      2,
    ),
  );
  say(`\nwritten: ${path.relative(process.cwd(), file)}`);
  return failedCount;
}

function pick(env: NodeJS.ProcessEnv, keys: string[]) {
  return Object.fromEntries(keys.filter((k) => env[k] !== undefined).map((k) => [k, env[k]]));
}

async function cleanup() {
  await processes.stopAll();
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
  process.stderr.write('bench: 10-minute limit reached, stopping\n');
  void cleanup().then(() => process.exit(2));
}, 10 * 60_000);
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
