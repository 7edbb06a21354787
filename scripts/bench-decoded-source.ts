// What the worker's decoded-source cache buys (workers/decoded-source-cache.ts): CPU per render of
// the corpus photos at the bench's miss widths (600-992 px), through three paths alternated in one
// process with one libvips thread: from the original's bytes (no cache), cold (the original's
// pixels decoded and kept, then the render from them: a first render through the cache) and warm
// (from pixels kept earlier). Checks that all three give the same bytes.
//
//   npm run build && node dist/scripts/bench-decoded-source.js [--step 8] [--formats jpeg,webp]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { decodeJpegAtShrink } from '../src/imaging/jpeg-shrink-decoder.js';
import { resolvePlan, type TransformRequest } from '../src/imaging/params.js';
import { renderDerivative } from '../src/imaging/pipeline.js';
import type { DecodedSource } from '../src/imaging/transform-param.js';

const { values } = parseArgs({
  options: {
    step: { type: 'string', default: '8' },
    formats: { type: 'string', default: 'jpeg,webp' },
    photos: { type: 'string', default: new URL('../../test/fixtures/corpus/photos', import.meta.url).pathname },
  },
});
sharp.concurrency(1);
sharp.cache(false);
const settings = { webpEffort: 3, avifEffort: 0, maxInputPixels: 40_000_000 };
const sources = readdirSync(values.photos)
  .filter((f) => /\.jpe?g$/i.test(f))
  .map((f) => readFileSync(path.join(values.photos, f)));
const widths: number[] = [];
for (let w = 600; w <= 992; w += Number(values.step)) widths.push(w);

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

type Way = 'bytes' | 'cold' | 'warm';

for (const f of values.formats.split(',') as TransformRequest['f'][]) {
  // Per shrink-on-load factor the pipeline picked: CPU ms per way, renders, identical outputs.
  const byFactor = new Map<number, { ms: Record<Way, number>; renders: number; identical: number }>();
  for (const [i, source] of sources.entries()) {
    const kept = new Map<number, DecodedSource | undefined>();
    for (const [j, w] of widths.entries()) {
      const plan = resolvePlan('B', { w, f, q: 76 + ((i + j) % 9) }, { accept: '', sourceFormat: 'jpeg', preferWebpWhenUnsure: false }).plan;
      let factor = 0;
      const render = async (way: Way) => {
        const start = cpuMs();
        const lookup = async (shrink: number) => {
          factor = shrink;
          if (way === 'cold' || !kept.has(shrink)) kept.set(shrink, await decodeJpegAtShrink(source, shrink));
          return kept.get(shrink);
        };
        const out = await renderDerivative(source, plan, settings, way === 'bytes' ? {} : { decodedSource: lookup });
        return { out: out.buffer, ms: cpuMs() - start };
      };
      await render('warm'); // keeps the pixels for this factor (not counted)
      const order: Way[] = j % 2 ? ['bytes', 'cold', 'warm'] : ['warm', 'cold', 'bytes'];
      const results = {} as Record<Way, { out: Buffer; ms: number }>;
      for (const way of order) results[way] = await render(way);
      const entry = byFactor.get(factor) ?? { ms: { bytes: 0, cold: 0, warm: 0 }, renders: 0, identical: 0 };
      for (const way of order) entry.ms[way] += results[way].ms;
      entry.renders++;
      if (results.bytes.out.equals(results.cold.out) && results.bytes.out.equals(results.warm.out)) entry.identical++;
      byFactor.set(factor, entry);
    }
  }
  for (const [factor, { ms, renders, identical }] of [...byFactor].sort((a, b) => b[0] - a[0])) {
    const per = (way: Way) => (ms[way] / renders).toFixed(1);
    console.log(`${f} decoded at 1/${factor} (${renders} renders): CPU ms per render from the bytes ${per('bytes')}, cold ${per('cold')}, warm ${per('warm')}; identical ${identical}/${renders}`);
  }
}
