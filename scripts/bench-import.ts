// `npm run bench:import`: import throughput figures. Generates BENCH_FILES (5,000) small JPEGs in a
// temp folder, then for 1 and 2 worker processes starts the service on embedded defaults
// (`node dist/scripts/start.js`, WORKERS=n, fresh DATA_DIR), imports the folder with the import CLI,
// imports it again (everything skipped: same public id and checksum) and prints files/s and the
// re-run time. Not a test: numbers depend on the machine (and on what else runs on it).
//
// env: BENCH_FILES (5000), BENCH_IMPORT_CONCURRENCY (16), BENCH_WORKER_COUNTS ("1,2"), BENCH_KEEP=1
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runImport, startService, type ImportRun } from './lib/bench-service.js';
import { writeImageFolder } from './lib/generated-images.js';

const FILES = Number(process.env.BENCH_FILES ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_IMPORT_CONCURRENCY ?? 16);
const WORKER_COUNTS = (process.env.BENCH_WORKER_COUNTS ?? '1,2').split(',').map(Number);

function say(line: string) {
  process.stdout.write(line + '\n');
}

function checked(run: ImportRun, what: string, expect: { done: number; skipped: number }): ImportRun {
  const s = run.summary;
  if (run.exitCode !== 0 || s.failed !== 0 || s.done !== expect.done || s.skipped !== expect.skipped) {
    throw new Error(`${what}: expected ${expect.done} imported and ${expect.skipped} skipped, got ${JSON.stringify(s)} (exit ${run.exitCode})`);
  }
  return run;
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-bench-import-'));
  const folder = path.join(tmp, 'images');
  try {
    let started = performance.now();
    const bytes = await writeImageFolder(folder, FILES);
    say(`generated ${FILES} JPEGs (${(bytes / FILES).toFixed(0)} bytes on average) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    say(`machine: ${os.availableParallelism()} cores, load average ${os.loadavg()[0].toFixed(2)}; import concurrency ${CONCURRENCY}`);
    const rows: string[] = [];
    for (const workers of WORKER_COUNTS) {
      started = performance.now();
      const service = await startService({ workers, dataDir: path.join(tmp, `data-${workers}`) });
      say(`\n${workers} worker process(es): service up in ${((performance.now() - started) / 1000).toFixed(1)} s at ${service.baseUrl}`);
      try {
        const first = checked(await runImport(service, folder, { concurrency: CONCURRENCY, report: path.join(tmp, `report-${workers}-1.json`) }), 'first import', { done: FILES, skipped: 0 });
        say(`  import:  ${FILES} files in ${first.seconds.toFixed(1)} s = ${(FILES / first.seconds).toFixed(1)} files/s`);
        const again = checked(await runImport(service, folder, { concurrency: CONCURRENCY, report: path.join(tmp, `report-${workers}-2.json`) }), 're-run', { done: 0, skipped: FILES });
        say(`  re-run:  all ${FILES} skipped in ${again.seconds.toFixed(1)} s`);
        rows.push(`| ${workers} | ${FILES} | ${first.seconds.toFixed(1)} s | ${(FILES / first.seconds).toFixed(1)} | ${again.seconds.toFixed(1)} s |`);
      } finally {
        await service.stop();
      }
    }
    say('\n| worker processes | files | import | files/s | re-run (all skipped) |');
    say('|---|---|---|---|---|');
    for (const row of rows) say(row);
  } finally {
    if (process.env.BENCH_KEEP) say(`kept ${tmp}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:import failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
