// What skipping the colour transform of sRGB sources saves (src/imaging/colour-profile.ts): CPU per
// 800 px render of the corpus photos tagged with an sRGB profile, through the two paths the pipeline
// can take (profile ignored, as for an sRGB source, vs transformed through it, as for any other),
// alternated in one process with one libvips thread so both see the same machine.
//
//   npm run build && node dist/scripts/bench-colour.js [--rounds 8]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    photos: { type: 'string', default: new URL('../../test/fixtures/corpus/photos', import.meta.url).pathname },
  },
});
const rounds = Number(values.rounds);
sharp.concurrency(1);
sharp.cache(false);

type Format = 'webp' | 'jpeg';
type Path = 'skip' | 'transform';

async function render(input: Buffer, colourPath: Path, format: Format): Promise<Buffer> {
  const skip = colourPath === 'skip';
  let image = sharp(input, { ignoreIcc: skip, failOn: 'error' }).rotate().resize({ width: 800, withoutEnlargement: true });
  if (!skip) image = image.toColourspace('srgb');
  return format === 'webp' ? image.webp({ quality: 80, effort: 3 }).toBuffer() : image.jpeg({ quality: 80 }).toBuffer();
}

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

const files = readdirSync(values.photos).filter((f) => /\.jpe?g$/i.test(f));
// Tagged with sharp's sRGB profile, as cameras and editors tag their JPEGs.
const sources = await Promise.all(files.map((f) => sharp(readFileSync(path.join(values.photos, f))).withIccProfile('srgb').jpeg({ quality: 92 }).toBuffer()));

for (const format of ['webp', 'jpeg'] as const) {
  const total: Record<Path, number> = { skip: 0, transform: 0 };
  // Round 0 warms up and is not counted; the order of the two paths alternates.
  for (let round = 0; round <= rounds; round++) {
    for (const colourPath of round % 2 ? (['skip', 'transform'] as const) : (['transform', 'skip'] as const)) {
      const start = cpuMs();
      for (const source of sources) await render(source, colourPath, format);
      if (round > 0) total[colourPath] += cpuMs() - start;
    }
  }
  const renders = rounds * sources.length;
  const skip = total.skip / renders;
  const transform = total.transform / renders;
  console.log(`${format}: CPU ms per 800 px render, sRGB profile transformed ${transform.toFixed(1)}, skipped ${skip.toFixed(1)} (${((1 - skip / transform) * 100).toFixed(0)} % saved)`);
}
