// Scenario 6, soak: a fresh service per allocator; unique mixed transforms; the worker's RSS after
// the first SOAK_FIRST and after all SOAK_JOBS.
import { uploadOriginals } from './fixtures.js';
import { currentRss, loadAverage, peakRss, sleep, stopProcess } from './procs.js';
import { load, startService } from './processes.js';
import { extra, fmt, mb, notes, pad, ratio, ratios, rows, type Row } from './report.js';
import { BUDGET_MS, KEY, SOAK_FIRST, SOAK_JOBS, say, startedAt } from './settings.js';

export async function soakScenario(): Promise<void> {
  const svcHeaders = { 'X-API-Key': KEY };
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
      loadgenCpu: Math.max(r1.loadgenCpuShare, r2.loadgenCpuShare),
      load1: loadAverage(),
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
