// The passport edges as docs/passport.md (Edges) shows them: the halo measure (share of the edge
// ring / widest run) per hard input and document, and the figure of the side-lit and night
// portraits at 2x, output beside its halo pixels in magenta (docs/passport-edges-2x.jpg).
//
//   node dist/scripts/passport-edges.js [--out FILE] [--countries usa,uk]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import sharp, { type OverlayOptions } from 'sharp';
import { closeModels, isPassportCountry, PASSPORT_COUNTRIES, processPassportPhoto } from '../src/passport/index.js';
import { measureHalo } from '../src/passport/halo.js';
import { checkRequest, decode, detect, refine } from '../src/passport/pipeline/find-face.js';
import { plan, segment } from '../src/passport/pipeline/frame-photo.js';
import { composite, enhance, render } from '../src/passport/pipeline/make-photo.js';
import { PhotoSchedule } from '../src/passport/pipeline/scheduler.js';
import { nightShot, sideLit } from './lib/portrait-variants.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: new URL('../../docs/passport-edges-2x.jpg', import.meta.url).pathname },
    countries: { type: 'string', default: PASSPORT_COUNTRIES.join(',') },
  },
});
const faces = new URL('../../test/fixtures/corpus/faces/', import.meta.url).pathname;
const astronaut = readFileSync(`${faces}01_astronaut_collins.png`);
const hopper = readFileSync(`${faces}02_grace_hopper.jpg`);
const inputs: [string, Buffer][] = [
  ['Hopper side-lit', await sideLit(hopper)],
  ['astronaut side-lit', await sideLit(astronaut)],
  ...(await Promise.all([1, 2, 3, 4].map(async (s): Promise<[string, Buffer]> => [`Hopper night ${s}`, await nightShot(hopper, s)]))),
  ...(await Promise.all([1, 2, 3, 4].map(async (s): Promise<[string, Buffer]> => [`astronaut night ${s}`, await nightShot(astronaut, s)]))),
  ['astronaut', astronaut],
  ['Hopper', hopper],
  ['cameraman', readFileSync(`${faces}03_cameraman_gray.png`)],
];

/** Figure rows: an input (usa) and the rectangle of its photo shown at 2x (the side of the head the light leaves darker). */
const FIGURE: { name: string; x: number; y: number; w: number; h: number }[] = [
  { name: 'Hopper side-lit', x: 150, y: 180, w: 110, h: 200 },
  { name: 'Hopper night 3', x: 150, y: 150, w: 110, h: 200 },
];

const countries = values.countries.split(',').filter(isPassportCountry);
console.log(`halo share / widest run (px) per document: ${countries.join(', ')}`);
for (const [name, input] of inputs) {
  const cells: string[] = [];
  for (const country of countries) {
    const m = (await processPassportPhoto(input, { country })).measurements;
    cells.push(`${((m.halo_share ?? 0) * 100).toFixed(1)} % / ${m.halo_widest_run_px}`);
  }
  console.log(`${name.padEnd(20)} ${cells.join('  ')}`);
}

const GAP = 4;
const tiles: OverlayOptions[] = [];
let top = 0;
for (const row of FIGURE) {
  const input = inputs.find(([n]) => n === row.name)![1];
  const request = checkRequest(input, { country: 'usa' }, new PhotoSchedule(() => true));
  const c = composite(enhance(await render(await plan(await segment(await refine(await detect(await decode(request))))))));
  const halo = measureHalo(c.image, c.photo, c.alpha!, c.inside, c.background, c.luts);
  const marked = Buffer.from(c.photo.data);
  halo.pixels.forEach((v, i) => v && marked.set([255, 0, 255], i * 3));
  const raw = { raw: { width: c.photo.width, height: c.photo.height, channels: 3 as const } };
  for (const [k, data] of [c.photo.data, marked].entries()) {
    const crop = await sharp(data, raw).extract({ left: row.x, top: row.y, width: row.w, height: row.h }).resize(2 * row.w, 2 * row.h, { kernel: 'nearest' }).png().toBuffer();
    tiles.push({ input: crop, left: k * (2 * row.w + GAP), top });
  }
  top += 2 * row.h + GAP;
}
const width = Math.max(...FIGURE.map((r) => 4 * r.w + GAP));
await sharp({ create: { width, height: top - GAP, channels: 3, background: '#000' } }).composite(tiles).jpeg({ quality: 90 }).toFile(values.out);
console.log(`figure: ${values.out}`);
await closeModels();
