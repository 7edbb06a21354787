// Hard lighting made from a corpus portrait, for the passport tests and the documents' figures:
// side-lit on a dark background, and a night shot (dark, gain noise, brightened).
import sharp from 'sharp';
import { boxMean } from '../../src/passport/background.js';
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

/** No visible rim on these portraits' outputs: at most this share of the halo ring, no run wider than this (docs/passport.md, Edges). */
export const NO_VISIBLE_RIM = { share: 0.01, run: 4 } as const;

/** Window radius of the side-lit swap's local colour means, in pixels. */
const SWAP_RADIUS = 12;
/** Where the segmenter is sure of the person, a colour this near (RGB distance) the local original backdrop is still mixed with it. */
const SURE_PERSON_OLD_DISTANCE = 40;

/**
 * The portrait on a dark grey background, lit from the left (x 1.25 to x 0.5 across), as a photo
 * taken against that background would be: each pixel's share of the original background (its local
 * mean where the segmenter is sure of background) is swapped for the grey. The person's share is the
 * segmenter's probability ramped over 0.5-0.95, lowered to what the colour shows as a mix of the
 * local person and original background means: the soft mask keeps the original sky at 0.6-0.95
 * beside the jaw and the cap, which would otherwise stay as a ring of a third colour no photo has. So
 * is a colour near that backdrop where the segmenter is sure of the person (sky at 0.95-0.99 in the
 * gap between Hopper's neck and hair); her grey hair, farther from the sky, is not.
 */
export async function sideLit(input: Buffer): Promise<Buffer> {
  const { data, info } = await sharp(input).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const { width: w, height: h } = info;
  const prob = await segmentPerson({ data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: w, height: h, channels: 4 });
  const bg = [34, 36, 42];
  // Local means of the sure background (0) and the sure person (4): share, then R, G, B.
  const m = Array.from({ length: 8 }, () => new Float32Array(w * h));
  for (let i = 0; i < w * h; i++) {
    const g = prob[i] < 0.05 ? 0 : prob[i] > 0.95 ? 4 : -1;
    if (g >= 0) for (let k = 0; k <= 3; k++) m[g + k][i] = k ? data[i * 4 + k - 1] : 1;
  }
  m.forEach((plane) => boxMean(plane, w, h, SWAP_RADIUS, plane));
  const out = Buffer.alloc(w * h * 3);
  for (let i = 0; i < w * h; i++) {
    const old = [1, 2, 3].map((k) => (m[0][i] > 0 ? m[k][i] / m[0][i] : 0));
    const person = [5, 6, 7].map((k) => (m[4][i] > 0 ? m[k][i] / m[4][i] : 0));
    const t = Math.min(1, Math.max(0, (prob[i] - 0.5) / 0.45));
    let alpha = !m[0][i] ? 1 : t * t * (3 - 2 * t);
    const fromOld = old.map((o, c) => data[i * 4 + c] - o);
    const nearOld = m[0][i] > 0 && Math.hypot(...fromOld) < SURE_PERSON_OLD_DISTANCE;
    if (alpha > 0 && (alpha < 1 || nearOld) && m[4][i] > 0) {
      // The colour's place on the line from the old background's mean to the person's.
      const d = person.map((p, c) => p - old[c]);
      const along = d.reduce((sum, dc, c) => sum + dc * fromOld[c], 0);
      const dd = d.reduce((sum, dc) => sum + dc * dc, 0);
      if (dd > 0) alpha = Math.min(alpha, Math.max(0, along / dd));
    }
    const light = 1.25 - (0.75 * (i % w)) / w;
    for (let c = 0; c < 3; c++) {
      const v = alpha < 0.05 ? bg[c] : data[i * 4 + c] + (1 - alpha) * (bg[c] - old[c]);
      out[i * 3 + c] = Math.max(0, Math.min(255, Math.round(v * light)));
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
