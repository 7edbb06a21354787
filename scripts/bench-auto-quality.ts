// What q=auto costs on a miss: CPU per render of the corpus photos and portraits at width 1200
// through the real pipeline, q=80 and q=auto alternated image by image in one process with one
// libvips thread (so both see the same machine), per format, with the ratio side by side and the
// machine's load average beside it. A hit reads the chosen
// quality from the stored object's metadata, which the stat that every hit makes already returns:
// hits cost what they did.
//
//   npm run build && node dist/scripts/bench-auto-quality.js [--rounds 2] [--formats jpeg,webp,avif]
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
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

async function cost(input: Buffer, format: 'webp' | 'jpeg' | 'avif', q: TransformRequest['q']): Promise<{ ms: number; bytes: number }> {
  const { plan } = resolvePlan('A', { w: 1200, f: format, q }, { accept: '', sourceFormat: 'jpeg', preferWebpWhenUnsure: false });
  const start = cpuMs();
  const bytes = (await renderDerivative(input, plan, settings)).buffer.length;
  return { ms: cpuMs() - start, bytes };
}

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
console.log(`q=auto vs q=80 misses, ${inputs.length} images at width 1200, ${rounds} rounds (CPU ms per image); load average ${load()}`);
console.log('format  q=80 ms  auto ms  ratio   q=80 bytes  auto bytes');
for (const format of values.formats.split(',') as ('jpeg' | 'webp' | 'avif')[]) {
  let fixed = 0, auto = 0, fixedBytes = 0, autoBytes = 0;
  for (let r = 0; r < rounds; r++) {
    for (const [i, input] of inputs.entries()) {
      // Alternate which goes first so neither profits from the other's warm caches.
      const autoFirst = (i + r) % 2 === 1 ? await cost(input, format, 'auto') : undefined;
      const a = await cost(input, format, 80);
      const b = autoFirst ?? (await cost(input, format, 'auto'));
      fixed += a.ms; auto += b.ms;
      if (r === 0) { fixedBytes += a.bytes; autoBytes += b.bytes; }
    }
  }
  const per = (ms: number) => (ms / rounds / inputs.length).toFixed(0).padStart(7);
  console.log(`${format.padEnd(7)} ${per(fixed)}  ${per(auto)}  ${(auto / fixed).toFixed(2).padStart(5)}   ${String(fixedBytes).padStart(10)}  ${String(autoBytes).padStart(10)}`);
}
console.log(`load average after: ${load()}`);
