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
import { nightShot, NO_VISIBLE_RIM, sideLit } from './lib/portrait-variants.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: new URL('../../docs/passport-edges-2x.jpg', import.meta.url).pathname },
    countries: { type: 'string', default: PASSPORT_COUNTRIES.join(',') },
  },
});
const faces = new URL('../../test/fixtures/corpus/faces/', import.meta.url).pathname;
const astronaut = readFileSync(`${faces}01_astronaut_collins.png`);
const hopper = readFileSync(`${faces}02_grace_hopper.jpg`);
/** Night shots: this many noise patterns of each portrait, one row of their worst per portrait. */
const NIGHT_SEEDS = 36;
const night = (portrait: Buffer) => Promise.all(Array.from({ length: NIGHT_SEEDS }, (_, k) => nightShot(portrait, k + 1)));
const hopperSideLit = await sideLit(hopper);
const hopperNights = await night(hopper);
const inputs: [string, Buffer[]][] = [
  ['Hopper side-lit', [hopperSideLit]],
  ['astronaut side-lit', [await sideLit(astronaut)]],
  ['Hopper night', hopperNights],
  ['astronaut night', await night(astronaut)],
  ['astronaut', [astronaut]],
  ['Hopper', [hopper]],
  ['cameraman', [readFileSync(`${faces}03_cameraman_gray.png`)]],
];

/** Figure rows: Hopper side-lit and her third night shot (usa), the rectangle of the photo shown at 2x (the side of the head the light leaves darker). */
const FIGURE: { input: Buffer; x: number; y: number; w: number; h: number }[] = [
  { input: hopperSideLit, x: 150, y: 180, w: 110, h: 200 },
  { input: hopperNights[2], x: 150, y: 150, w: 110, h: 200 },
];


const countries = values.countries.split(',').filter(isPassportCountry);
console.log(`halo share / widest run (px) per document: ${countries.join(', ')}`);
console.log(`night: the worst of ${NIGHT_SEEDS} noise patterns, and (in brackets) how many exceed ${NO_VISIBLE_RIM.share * 100} % or ${NO_VISIBLE_RIM.run} px`);
for (const [name, photos] of inputs) {
  const cells: string[] = [];
  for (const country of countries) {
    const ms = await Promise.all(photos.map(async (input) => (await processPassportPhoto(input, { country })).measurements));
    const share = Math.max(...ms.map((m) => m.halo_share ?? 0));
    const run = Math.max(...ms.map((m) => m.halo_widest_run_px ?? 0));
    const over = ms.filter((m) => (m.halo_share ?? 0) > NO_VISIBLE_RIM.share || (m.halo_widest_run_px ?? 0) > NO_VISIBLE_RIM.run).length;
    cells.push(`${(share * 100).toFixed(1)} % / ${run}${photos.length > 1 ? ` (${over})` : ''}`);
  }
  console.log(`${name.padEnd(20)} ${cells.join('  ')}`);
}

const GAP = 4;
const tiles: OverlayOptions[] = [];
let top = 0;
for (const row of FIGURE) {
  const request = checkRequest(row.input, { country: 'usa' }, new PhotoSchedule(() => true));
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
