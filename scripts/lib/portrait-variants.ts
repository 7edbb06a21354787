// Hard lighting made from a corpus portrait, for the passport tests and the documents' figures:
// side-lit on a dark background, and a night shot (dark, gain noise, brightened).
import sharp from 'sharp';
import { segmentPerson } from '../../src/vision/segmenter.js';

/** Normal deviates (mean 0, sigma 1) from a fixed seed, Box-Muller over an LCG: the same noise on every run. */
export function gaussian(seed: number): () => number {
  let s = seed >>> 0;
  const u = (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
}

/** The portrait on a dark grey background (the segmenter's soft mask), lit from the left: x 1.25 to x 0.5 across. */
export async function sideLit(input: Buffer): Promise<Buffer> {
  const { data, info } = await sharp(input).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const { width: w, height: h } = info;
  const prob = await segmentPerson({ data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: w, height: h, channels: 4 });
  const bg = [34, 36, 42];
  const out = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const light = 1.25 - (0.75 * x) / w;
      for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.max(0, Math.min(255, Math.round((data[i * 4 + c] * prob[i] + bg[c] * (1 - prob[i])) * light)));
    }
  }
  return sharp(out, { raw: { width: w, height: h, channels: 3 } }).jpeg({ quality: 92 }).toBuffer();
}

/**
 * The night shot of a portrait: darkened to 0.3, given gain noise (sigma 4 at that level) and
 * brightened x 3 back (sigma ~12), as a phone does in the dark; optionally blurred first. PNG: the
 * noise as made, no JPEG smoothing.
 */
export async function nightShot(input: Buffer, seed: number, blur = 0): Promise<Buffer> {
  const img = blur ? sharp(input).blur(blur) : sharp(input);
  const { data, info } = await img.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const g = gaussian(seed);
  const out = Buffer.alloc(data.length);
  for (let i = 0; i < data.length; i++) out[i] = Math.min(255, 3 * Math.round(Math.max(0, Math.min(255, 0.3 * data[i] + 4 * g()))));
  return sharp(out, { raw: { width: info.width, height: info.height, channels: 3 } }).png().toBuffer();
}
