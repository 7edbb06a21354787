// What q=auto costs on a miss: CPU per render of the corpus photos and portraits at width 1200
// through the real pipeline, q=80 and q=auto alternated in one process with one libvips thread
// (so both see the same machine), per format, with the ratio side by side. A hit reads the chosen
// quality from the stored object's metadata, which the stat that every hit makes already returns:
// hits cost what they did.
//
//   npm run build && node dist/scripts/bench-auto-quality.js [--rounds 2] [--formats jpeg,webp,avif]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { resolvePlan, type TransformRequest } from '../src/imaging/params.js';
import { renderDerivative } from '../src/imaging/pipeline.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    formats: { type: 'string', default: 'jpeg,webp,avif' },
    corpus: { type: 'string', default: new URL('../../test/fixtures/corpus', import.meta.url).pathname },
  },
});
const rounds = Number(values.rounds);
sharp.concurrency(1);
sharp.cache(false);
const settings = { avifEffort: 4, webpEffort: 3, maxInputPixels: 100_000_000 };

const files = ['photos', 'faces'].flatMap((dir) => readdirSync(path.join(values.corpus, dir)).filter((f) => /\.(jpe?g|png)$/i.test(f)).map((f) => path.join(values.corpus, dir, f)));
const inputs = files.map((f) => readFileSync(f));

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

async function cost(format: 'webp' | 'jpeg' | 'avif', q: TransformRequest['q']): Promise<{ ms: number; bytes: number }> {
  const { plan } = resolvePlan('A', { w: 1200, f: format, q }, { accept: '', sourceFormat: 'jpeg', preferWebpWhenUnsure: false });
  const start = cpuMs();
  let bytes = 0;
  for (const input of inputs) bytes += (await renderDerivative(input, plan, settings)).buffer.length;
  return { ms: cpuMs() - start, bytes };
}

console.log(`q=auto vs q=80 misses, ${inputs.length} images at width 1200, ${rounds} rounds (CPU ms per image)`);
console.log('format  q=80 ms  auto ms  ratio   q=80 bytes  auto bytes');
for (const format of values.formats.split(',') as ('jpeg' | 'webp' | 'avif')[]) {
  let fixed = 0, auto = 0, fixedBytes = 0, autoBytes = 0;
  for (let r = 0; r < rounds; r++) {
    const a = await cost(format, 80);
    const b = await cost(format, 'auto');
    fixed += a.ms; auto += b.ms; fixedBytes = a.bytes; autoBytes = b.bytes;
  }
  const per = (ms: number) => (ms / rounds / inputs.length).toFixed(0).padStart(7);
  console.log(`${format.padEnd(7)} ${per(fixed)}  ${per(auto)}  ${(auto / fixed).toFixed(2).padStart(5)}   ${String(fixedBytes).padStart(10)}  ${String(autoBytes).padStart(10)}`);
}
