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
import type { RawImage, Rgb } from './image.js';

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
let satScratch: Int32Array = new Int32Array(0);

/**
 * Integer summed-area tables of the nine planes the measure averages, interleaved: entry
 * ((y * (w + 1)) + x) * 9 + k = sum of plane k over [0, x) x [0, y). All planes are 0/1 weights or
 * weighted 8-bit values, so the sums are exact (at most 255 x 50 MP < 2^31 would overflow; the
 * photo is a few hundred thousand pixels). The buffer is reused between calls.
 */
function summedAreaTables(source: RawImage, output: RawImage, alpha: Float32Array, inside: Uint8Array): Int32Array {
  const { width: w, height: h } = output;
  const stride = (w + 1) * SAT_PLANES;
  const size = stride * (h + 1);
  if (satScratch.length < size) satScratch = new Int32Array(size);
  const t = satScratch;
  t.fill(0, 0, stride);
  const sc = source.channels;
  const oc = output.channels;
  const sd = source.data;
  const od = output.data;
  for (let y = 0; y < h; y++) {
    // Running sums along the row (plane order as in SAT_PLANES), added to the row above.
    let n0 = 0;
    let n1 = 0;
    let n2 = 0;
    let s3 = 0;
    let s4 = 0;
    let s5 = 0;
    let s6 = 0;
    let s7 = 0;
    let s8 = 0;
    const up = y * stride;
    const cur = up + stride;
    for (let k = 0; k < SAT_PLANES; k++) t[cur + k] = 0;
    for (let x = 0, i = y * w; x < w; x++, i++) {
      const a = alpha[i];
      if (a < 0.5) n0++;
      if (inside[i] && a < 0.05) {
        n1++;
        const j = i * sc;
        s3 += sd[j];
        s4 += sd[j + 1];
        s5 += sd[j + 2];
      }
      if (a >= 0.98) {
        n2++;
        const j = i * oc;
        s6 += od[j];
        s7 += od[j + 1];
        s8 += od[j + 2];
      }
      const o = cur + (x + 1) * SAT_PLANES;
      const p = up + (x + 1) * SAT_PLANES;
      t[o] = t[p] + n0;
      t[o + 1] = t[p + 1] + n1;
      t[o + 2] = t[p + 2] + n2;
      t[o + 3] = t[p + 3] + s3;
      t[o + 4] = t[p + 4] + s4;
      t[o + 5] = t[p + 5] + s5;
      t[o + 6] = t[p + 6] + s6;
      t[o + 7] = t[p + 7] + s7;
      t[o + 8] = t[p + 8] + s8;
    }
  }
  return t;
}

/**
 * `source` is the photo before background replacement (output geometry), `output` the composite,
 * `alpha` the person alpha used, `inside` which output pixels came from the input.
 *
 * The window means are read from summed-area tables only at the ring's pixels (a few per cent of
 * the photo) instead of box-filtering nine full planes.
 */
export function measureHalo(source: RawImage, output: RawImage, alpha: Float32Array, inside: Uint8Array, background: Rgb): HaloMeasure {
  const { width: w, height: h } = output;
  const n = w * h;
  const ringR = Math.max(2, Math.round(HALO.RING_SHARE * h));
  const r = Math.max(4, Math.round(HALO.OLD_BG_RADIUS_SHARE * h));
  const t = summedAreaTables(source, output, alpha, inside);
  const stride = (w + 1) * SAT_PLANES;
  // Sum of plane k over the window of radius rr around (x, y), clipped to the photo.
  let x0 = 0;
  let x1 = 0;
  let y0 = 0;
  let y1 = 0;
  const window = (x: number, y: number, rr: number): number => {
    x0 = Math.max(0, x - rr);
    x1 = Math.min(w, x + rr + 1);
    y0 = Math.max(0, y - rr);
    y1 = Math.min(h, y + rr + 1);
    return (x1 - x0) * (y1 - y0);
  };
  const sum = (k: number): number => t[y1 * stride + x1 * SAT_PLANES + k] - t[y0 * stride + x1 * SAT_PLANES + k] - t[y1 * stride + x0 * SAT_PLANES + k] + t[y0 * stride + x0 * SAT_PLANES + k];
  let ring = 0;
  let halo = 0;
  const oc = output.channels;
  for (let i = 0; i < n; i++) {
    if (!inside[i] || alpha[i] < HALO.RING_MIN_ALPHA) continue;
    const x = i % w;
    const y = (i - x) / w;
    window(x, y, ringR);
    if (sum(0) <= 0) continue; // no non-person pixel within the ring's reach
    ring++;
    const area = window(x, y, r);
    const bgCount = sum(1);
    if (bgCount < 0.02 * area) continue; // no old background nearby to compare with
    const j = i * oc;
    const R = output.data[j];
    const G = output.data[j + 1];
    const B = output.data[j + 2];
    const inv = 1 / bgCount;
    const dOld = Math.hypot(R - sum(3) * inv, G - sum(4) * inv, B - sum(5) * inv);
    const dNew = Math.hypot(R - background[0], G - background[1], B - background[2]);
    if (dOld > HALO.OLD_BG_DISTANCE || dNew < HALO.NEW_BG_DISTANCE) continue;
    const fgCount = sum(2);
    if (fgCount > 0.02 * area) {
      const f = 1 / fgCount;
      if (distanceToSegment([R, G, B], background, [sum(6) * f, sum(7) * f, sum(8) * f]) <= dOld) continue;
    }
    halo++;
  }
  return { share: ring ? halo / ring : 0, ringPixels: ring };
}

/** Distance from colour p to the segment a-b (the mixes of a and b). */
function distanceToSegment(p: readonly number[], a: readonly number[], b: readonly number[]): number {
  const d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
  const len2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
  let t = len2 > 0 ? ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1] + (p[2] - a[2]) * d[2]) / len2 : 0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  return Math.hypot(p[0] - a[0] - t * d[0], p[1] - a[1] - t * d[1], p[2] - a[2] - t * d[2]);
}
