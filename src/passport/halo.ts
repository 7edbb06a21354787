// Halo measure: in a ring along the silhouette's edge on the produced photo, the share of pixels
// that look like the OLD background (the photo's own background near that spot) instead of the new
// background colour or the person. A rim or smear of the old background left by the mask is
// exactly that; a clean cut-out has only new-background, person and person/new-background mixes.
//
//  ring:   person-side pixels (alpha >= RING_MIN_ALPHA) within RING_SHARE of the height of a
//          pixel that is not person (alpha < 0.5): the outer band of the silhouette;
//  old bg: the mean colour of the source pixels around that spot (box radius OLD_BG_RADIUS_SHARE)
//          whose alpha is below 0.05 (certainly background in the original photo);
//  person: the mean output colour of the certain person pixels (alpha >= 0.98) around that spot;
//  halo:   the output pixel is within OLD_BG_DISTANCE of the old colour, closer to it than to any
//          mix of the person colour and the new background (the anti-aliased edge), and at least
//          NEW_BG_DISTANCE away from the new background colour. Hair that happens to look like the
//          old background is therefore not counted.
import { IDENTITY_LUTS, type ChannelLuts } from './enhance.js';
import type { RawImage, Rgb } from './image.js';
import { summedAreaTablesView } from './wasm/pixels.js';

export const HALO = {
  RING_SHARE: 0.015,
  RING_MIN_ALPHA: 0.05,
  OLD_BG_RADIUS_SHARE: 0.04,
  OLD_BG_DISTANCE: 28,
  NEW_BG_DISTANCE: 40,
  /** Pass when at most this share of the ring is halo. */
  MAX_SHARE: 0.03,
} as const;

export interface HaloMeasure {
  share: number;
  ringPixels: number;
}

/** Planes of the summed-area table: not-person, old-bg weight, person weight, old-bg RGB, person RGB. */
const SAT_PLANES = 9;

/**
 * Integer summed-area tables of the nine planes the measure averages, interleaved: entry
 * ((y * (w + 1)) + x) * 9 + k = sum of plane k over [0, x) x [0, y) (wasm/pixels.ts). All planes
 * are 0/1 weights or weighted 8-bit values, so the sums are exact (at most 255 x 50 MP < 2^31
 * would overflow; the photo is a few hundred thousand pixels). A view into the kernels' memory,
 * read before any other kernel runs.
 */
function summedAreaTables(source: RawImage, sourceLuts: ChannelLuts, output: RawImage, alpha: Float32Array, inside: Uint8Array): Int32Array {
  return summedAreaTablesView(source.data, source.channels, sourceLuts, output.data, output.channels, alpha, inside, output.width, output.height, SAT_PLANES);
}

/**
 * `source` is the photo before background replacement (output geometry), read through
 * `sourceLuts` (the enhancement's tables: the old background as it would look after the same
 * corrections), `output` the composite, `alpha` the person alpha used, `inside` which output
 * pixels came from the input.
 *
 * The window means are read from summed-area tables only at the ring's pixels (a few per cent of
 * the photo) instead of box-filtering nine full planes.
 */
export function measureHalo(source: RawImage, output: RawImage, alpha: Float32Array, inside: Uint8Array, background: Rgb, sourceLuts: ChannelLuts = IDENTITY_LUTS): HaloMeasure {
  const t = summedAreaTables(source, sourceLuts, output, alpha, inside);
  const counts = new Int32Array(2);
  countRing(t, output, alpha, inside, background, counts);
  const [ring, halo] = counts;
  return { share: ring ? halo / ring : 0, ringPixels: ring };
}

/** counts[0] = ring pixels, counts[1] = halo pixels among them (a loop of its own: image.ts says why). */
function countRing(t: Int32Array, output: RawImage, alpha: Float32Array, inside: Uint8Array, background: Rgb, counts: Int32Array): void {
  const { width: w, height: h } = output;
  const ringR = Math.max(2, Math.round(HALO.RING_SHARE * h));
  const r = Math.max(4, Math.round(HALO.OLD_BG_RADIUS_SHARE * h));
  const stride = (w + 1) * SAT_PLANES;
  const P = SAT_PLANES;
  let ring = 0;
  let halo = 0;
  const oc = output.channels;
  const od = output.data;
  for (let y = 0; y < h; y++) {
    // Window rows (clipped): the ring's reach and the colour-mean radius.
    const n0 = Math.max(0, y - ringR) * stride;
    const n1 = Math.min(h, y + ringR + 1) * stride;
    const wy0 = Math.max(0, y - r);
    const wy1 = Math.min(h, y + r + 1);
    const m0 = wy0 * stride;
    const m1 = wy1 * stride;
    for (let x = 0, i = y * w; x < w; x++, i++) {
      if (!inside[i] || alpha[i] < HALO.RING_MIN_ALPHA) continue;
      const nx0 = Math.max(0, x - ringR) * P;
      const nx1 = Math.min(w, x + ringR + 1) * P;
      if (t[n1 + nx1] - t[n0 + nx1] - t[n1 + nx0] + t[n0 + nx0] <= 0) continue; // no non-person pixel within reach
      ring++;
      const wx0 = Math.max(0, x - r);
      const wx1 = Math.min(w, x + r + 1);
      const area = (wx1 - wx0) * (wy1 - wy0);
      const a = m1 + wx1 * P; // corners of the colour window: a - b - c + d
      const b = m0 + wx1 * P;
      const c = m1 + wx0 * P;
      const d = m0 + wx0 * P;
      const bgCount = t[a + 1] - t[b + 1] - t[c + 1] + t[d + 1];
      if (bgCount < 0.02 * area) continue; // no old background nearby to compare with
      const j = i * oc;
      const R = od[j];
      const G = od[j + 1];
      const B = od[j + 2];
      const inv = 1 / bgCount;
      const dOld = Math.hypot(
        R - (t[a + 3] - t[b + 3] - t[c + 3] + t[d + 3]) * inv,
        G - (t[a + 4] - t[b + 4] - t[c + 4] + t[d + 4]) * inv,
        B - (t[a + 5] - t[b + 5] - t[c + 5] + t[d + 5]) * inv,
      );
      const dNew = Math.hypot(R - background[0], G - background[1], B - background[2]);
      if (dOld > HALO.OLD_BG_DISTANCE || dNew < HALO.NEW_BG_DISTANCE) continue;
      const fgCount = t[a + 2] - t[b + 2] - t[c + 2] + t[d + 2];
      if (fgCount > 0.02 * area) {
        const f = 1 / fgCount;
        const person = [(t[a + 6] - t[b + 6] - t[c + 6] + t[d + 6]) * f, (t[a + 7] - t[b + 7] - t[c + 7] + t[d + 7]) * f, (t[a + 8] - t[b + 8] - t[c + 8] + t[d + 8]) * f];
        if (distanceToSegment([R, G, B], background, person) <= dOld) continue;
      }
      halo++;
    }
  }
  counts[0] = ring;
  counts[1] = halo;
}

/** Distance from colour p to the segment a-b (the mixes of a and b). */
function distanceToSegment(p: readonly number[], a: readonly number[], b: readonly number[]): number {
  const d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
  const len2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
  let t = len2 > 0 ? ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1] + (p[2] - a[2]) * d[2]) / len2 : 0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  return Math.hypot(p[0] - a[0] - t * d[0], p[1] - a[1] - t * d[1], p[2] - a[2] - t * d[2]);
}
