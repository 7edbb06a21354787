// Passport-photo benchmark: per-stage and end-to-end time per photo over the corpus portraits with
// warm models, p50/p90, model-only detect/segment times, and RSS over N consecutive photos.
//
//   node --import tsx scripts/bench-passport.ts [--iterations 10] [--soak 200] [--country usa]
//   (add --expose-gc before --import to let the soak force a GC before each RSS sample)
//
// Runs in one process, like a passport queue worker: models load once (warm-up excluded), and with
// a worker's node flags (WORKER_NODE_FLAGS: the bench starts itself again with them when missing).
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { closeModels, getFaceDetector, getSegmenter, warmUp } from '../src/vision/mediapipe/runtime.js';
import { toImageData } from '../src/vision/mediapipe/polyfills.js';
import { isPassportCountry, processPassportPhoto, type PassportCountry } from '../src/passport/index.js';
import { phonePhoto } from './lib/phone-photo.js';
import { rerunWithWorkerFlags } from './lib/worker-env.js';

rerunWithWorkerFlags();

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '10' },
    soak: { type: 'string', default: '200' },
    country: { type: 'string', default: 'usa' },
    faces: { type: 'string', default: new URL('../../test/fixtures/corpus/faces', import.meta.url).pathname },
  },
});
const iterations = Number(values.iterations);
const soak = Number(values.soak);
const country = values.country;
if (!isPassportCountry(country)) throw new Error(`unknown country ${country}`);
const dir = values.faces;
const files = readdirSync(dir).filter((f) => /\.(png|jpe?g|webp)$/i.test(f)).sort();
const inputs = files.map((f) => ({ name: f, buf: readFileSync(path.join(dir, f)) }));

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const fmt = (v: number): string => v.toFixed(1).padStart(7);
const mib = (): number => process.memoryUsage().rss / 2 ** 20;
const gc = (globalThis as { gc?: () => void }).gc;

async function modelOnly(): Promise<void> {
  const fd = await getFaceDetector('short');
  const fdFull = await getFaceDetector('full');
  const seg = await getSegmenter();
  console.log('\nModel calls only (median of 20, input as stored):');
  console.log(`${'photo'.padEnd(28)} ${'size'.padEnd(9)} ${'short'.padStart(7)} ${'full'.padStart(7)} ${'segment'.padStart(7)}  (ms)`);
  for (const { name, buf } of inputs) {
    const { data, info } = await sharp(buf).autoOrient().ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const img = toImageData(new Uint8Array(data.buffer, data.byteOffset, data.length), info.width, info.height);
    const a: number[] = [];
    const b: number[] = [];
    const c: number[] = [];
    fd.detect(img);
    fdFull.detect(img);
    seg.segment(img).close();
    for (let i = 0; i < 20; i++) {
      let t = performance.now();
      fd.detect(img);
      a.push(performance.now() - t);
      t = performance.now();
      fdFull.detect(img);
      b.push(performance.now() - t);
      t = performance.now();
      const r = seg.segment(img);
      r.confidenceMasks?.[0]?.getAsFloat32Array();
      r.close();
      c.push(performance.now() - t);
    }
    console.log(`${name.padEnd(28)} ${`${info.width}x${info.height}`.padEnd(9)} ${fmt(pct(a, 50))} ${fmt(pct(b, 50))} ${fmt(pct(c, 50))}`);
  }
}

/** A 12-megapixel phone photo (scripts/lib/phone-photo.ts). Target: p50 <= 350 ms and p95 <= 700 ms end to end on 2 cores. */
async function phonePhotoRow(): Promise<void> {
  const phone = await phonePhoto(inputs[0].buf);
  const meta = await sharp(phone).metadata();
  await processPassportPhoto(phone, { country: country as PassportCountry });
  const n = Math.max(iterations, 10);
  const totals: number[] = [];
  const cpus: number[] = [];
  const stages: Record<string, number[]> = {};
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const c = process.cpuUsage();
    const r = await processPassportPhoto(phone, { country: country as PassportCountry });
    totals.push(performance.now() - t);
    const dc = process.cpuUsage(c);
    cpus.push((dc.user + dc.system) / 1000);
    for (const [k, v] of Object.entries(r.timings)) (stages[k] ??= []).push(v);
  }
  console.log(`\n12 MP phone photo (${meta.width}x${meta.height}, EXIF orientation ${meta.orientation}, ${(phone.length / 1e6).toFixed(1)} MB), ${n} runs:`);
  console.log(`  end-to-end p50 ${pct(totals, 50).toFixed(0)} ms, p95 ${pct(totals, 95).toFixed(0)} ms (target p50 <= 350, p95 <= 700); ` +
    `CPU per photo p50 ${pct(cpus, 50).toFixed(0)} ms, p95 ${pct(cpus, 95).toFixed(0)} ms`);
  console.log(`  stages p50 (ms): ${Object.entries(stages).filter(([k]) => k !== 'total').map(([k, v]) => `${k} ${pct(v, 50).toFixed(0)}`).join(', ')}`);
  console.log(`  load average: ${loadavg().map((v) => v.toFixed(2)).join(' ')} on ${availableParallelism()} CPUs`);
}

async function main(): Promise<void> {
  console.log(`load average at start: ${loadavg().map((v) => v.toFixed(2)).join(' ')}`);
  console.log(`node ${process.version} ${process.execArgv.join(' ')}, ${files.length} portraits from ${dir}, country ${country}, ${iterations} iterations each, soak ${soak}`);
  const t0 = performance.now();
  await warmUp();
  console.log(`model load (short-range detector + segmenter): ${(performance.now() - t0).toFixed(0)} ms`);
  for (const { buf } of inputs) await processPassportPhoto(buf, { country: country as PassportCountry });
  console.log(`warm-up pass done, rss ${mib().toFixed(0)} MiB`);

  await modelOnly();

  const stages = ['decode', 'detect', 'geometry', 'segment', 'render', 'background', 'enhance', 'encode', 'compliance'];
  // (the 12 MP row below prints every stage the pipeline reports)
  const all: number[] = [];
  const allCpu: number[] = [];
  const allStages: Record<string, number[]> = Object.fromEntries(stages.map((s) => [s, []]));
  console.log(`\nPipeline per photo (p50 over ${iterations} runs; remove_bg + enhance, no print sheet), ms:`);
  console.log(`${'photo'.padEnd(28)}${stages.map((s) => s.slice(0, 7).padStart(8)).join('')} ${'total'.padStart(7)} ${'p90'.padStart(7)} ${'cpu'.padStart(7)}`);
  for (const { name, buf } of inputs) {
    const per: Record<string, number[]> = Object.fromEntries(stages.map((s) => [s, []]));
    const totals: number[] = [];
    const cpus: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t = performance.now();
      const c = process.cpuUsage();
      const r = await processPassportPhoto(buf, { country: country as PassportCountry });
      totals.push(performance.now() - t);
      const dc = process.cpuUsage(c);
      cpus.push((dc.user + dc.system) / 1000);
      allCpu.push((dc.user + dc.system) / 1000);
      for (const s of stages) {
        per[s].push(r.timings[s] ?? 0);
        allStages[s].push(r.timings[s] ?? 0);
      }
    }
    all.push(...totals);
    console.log(`${name.padEnd(28)}${stages.map((s) => fmt(pct(per[s], 50)).padStart(8)).join('')} ${fmt(pct(totals, 50))} ${fmt(pct(totals, 90))} ${fmt(pct(cpus, 50))}`);
  }
  console.log(`${'ALL'.padEnd(28)}${stages.map((s) => fmt(pct(allStages[s], 50)).padStart(8)).join('')} ${fmt(pct(all, 50))} ${fmt(pct(all, 90))} ${fmt(pct(allCpu, 50))}`);
  console.log(`end-to-end p50 ${pct(all, 50).toFixed(0)} ms, p90 ${pct(all, 90).toFixed(0)} ms, max ${Math.max(...all).toFixed(0)} ms (corpus portraits, 512 px); ` +
    `process CPU per photo p50 ${pct(allCpu, 50).toFixed(0)} ms (all threads; wall > cpu only when the machine is contended)`);
  console.log(`load average now: ${loadavg().map((v) => v.toFixed(2)).join(' ')} on ${availableParallelism()} CPUs`);

  await phonePhotoRow();

  const t = performance.now();
  const withSheet = await processPassportPhoto(inputs[0].buf, { country: country as PassportCountry, includePrintSheet: true });
  console.log(`with print sheet (${inputs[0].name}): ${(performance.now() - t).toFixed(0)} ms, print_sheet stage ${withSheet.timings.print_sheet} ms`);

  if (soak > 0) {
    console.log(`\nRSS over ${soak} consecutive photos${gc ? ' (GC forced before each sample)' : ''}:`);
    const samples: Array<[number, number]> = [];
    for (let i = 1; i <= soak; i++) {
      const { buf } = inputs[i % inputs.length];
      await processPassportPhoto(buf, { country: country as PassportCountry, includePrintSheet: i % 10 === 0 });
      if (i % 20 === 0 || i === 1) {
        gc?.();
        samples.push([i, mib()]);
        process.stdout.write(`  after ${String(i).padStart(4)}: ${mib().toFixed(0)} MiB\n`);
      }
    }
    const later = samples.filter(([i]) => i >= soak / 2).map(([, m]) => m);
    const first = samples.find(([i]) => i >= 20)?.[1] ?? samples[0][1];
    const last = samples[samples.length - 1][1];
    console.log(`RSS at 20: ${first.toFixed(0)} MiB, at ${soak}: ${last.toFixed(0)} MiB, second half range ${Math.min(...later).toFixed(0)}-${Math.max(...later).toFixed(0)} MiB`);
  }
  await closeModels();
}

await main();
