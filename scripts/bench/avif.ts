// Scenario 5 (AVIF): encode time and size of AVIF at each effort vs WebP at the service's default
// effort, on the same 800 px images, with the worker's libvips thread count. Run as a child
// process; prints one JSON document on stdout.
//
// "Equal or smaller size" only means something at equal quality, and the same `q` number is not
// the same quality in both encoders (sharp's own defaults are WebP 80 and AVIF 50). So the AVIF
// quality is matched to WebP's: the lowest AVIF q (steps of 5) whose mean PSNR against the
// uncompressed 800 px image is at least WebP q80's. Both the same-q and the matched-q numbers are
// reported; the target uses the matched one.
//   encode ms: from decoded, resized sRGB pixels to the encoded file (what the effort changes);
//   render ms: the service's whole pipeline from the original JPEG (decode + resize + encode).
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { libvipsThreadsFor, loadConfig } from '../../src/config.js';
import { resolvePlan } from '../../src/imaging/params.js';
import { renderDerivative } from '../../src/imaging/pipeline.js';

const config = loadConfig(process.env);
const photosDir = path.resolve(process.env.PHOTOS_DIR ?? '.');
const efforts = (process.env.AVIF_EFFORTS ?? '0,1,2').split(',').map(Number);
const reps = Number(process.env.AVIF_REPS ?? 1);
const webpQuality = Number(process.env.AVIF_WEBP_QUALITY ?? 80);
// The worker's thread count (workers/worker-process.ts).
const threads = libvipsThreadsFor(config, 1);
sharp.concurrency(threads);
sharp.cache(false);

interface Sample {
  quality: number;
  encodeMs: number;
  renderMs: number;
  bytes: number;
  psnr: number;
}

const files = fs.readdirSync(photosDir).filter((f) => /\.jpe?g$/i.test(f)).sort();
const originals = files.map((f) => fs.readFileSync(path.join(photosDir, f)));
const references = await Promise.all(
  originals.map((buf) => sharp(buf).rotate().resize({ width: 800 }).toColourspace('srgb').removeAlpha().raw().toBuffer({ resolveWithObject: true })),
);

function encoder(format: 'webp' | 'avif', i: number, quality: number, effort: number) {
  const { data, info } = references[i];
  const img = sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
  return format === 'webp' ? img.webp({ quality, effort }) : img.avif({ quality, effort });
}

async function psnrOf(encoded: Buffer, i: number): Promise<number> {
  const ref = references[i].data;
  const decoded = await sharp(encoded).removeAlpha().raw().toBuffer();
  let sum = 0;
  for (let k = 0; k < ref.length; k++) {
    const d = ref[k] - decoded[k];
    sum += d * d;
  }
  const mse = sum / ref.length;
  return mse === 0 ? 99 : 10 * Math.log10((255 * 255) / mse);
}

async function measure(format: 'webp' | 'avif', quality: number, effort: number, render = true): Promise<Sample> {
  let encodeMs = 0;
  let renderMs = 0;
  let bytes = 0;
  let psnr = 0;
  const settings = { webpEffort: format === 'webp' ? effort : config.webpEffort, avifEffort: format === 'avif' ? effort : config.avifEffort, maxInputPixels: config.maxInputPixels };
  const { plan } = resolvePlan('B', { w: 800, f: format, q: quality }, { accept: '', sourceFormat: 'jpeg', preferWebpWhenUnsure: false });
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < originals.length; i++) {
      const pipeline = encoder(format, i, quality, effort);
      let t = performance.now();
      const out = await pipeline.toBuffer();
      encodeMs += performance.now() - t;
      if (r === 0) {
        bytes += out.length;
        psnr += await psnrOf(out, i);
      }
      if (render) {
        t = performance.now();
        await renderDerivative(originals[i], plan, settings);
        renderMs += performance.now() - t;
      }
    }
  }
  const n = reps * originals.length;
  return { quality, encodeMs: encodeMs / n, renderMs: renderMs / n, bytes: bytes / originals.length, psnr: psnr / originals.length };
}

await measure('webp', webpQuality, config.webpEffort, false); // warm-up (JIT, libvips init)
const webp = await measure('webp', webpQuality, config.webpEffort);

// Lowest AVIF quality matching WebP's PSNR, searched at the fastest effort (higher efforts only
// improve quality at the same q); checked again at every effort below.
let matchedQuality = webpQuality;
const search: { quality: number; psnr: number; bytes: number }[] = [];
for (let q = 30; q <= webpQuality; q += 5) {
  const s = await measure('avif', q, 0, false);
  search.push({ quality: q, psnr: s.psnr, bytes: s.bytes });
  if (s.psnr >= webp.psnr) {
    matchedQuality = q;
    break;
  }
}

const sameQuality: Record<number, Sample> = {};
const matched: Record<number, Sample> = {};
for (const e of efforts) {
  matched[e] = await measure('avif', matchedQuality, e);
  sameQuality[e] = await measure('avif', webpQuality, e, false);
}
process.stdout.write(
  JSON.stringify({
    threads,
    width: 800,
    images: files.length,
    reps,
    webpEffort: config.webpEffort,
    webpQuality,
    defaultAvifEffort: config.avifEffort,
    matchedQuality,
    search,
    webp,
    matched,
    sameQuality,
  }) + '\n',
);
