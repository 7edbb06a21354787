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
import { boxMean, type RawImage, type Rgb } from './image.js';

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

/**
 * `source` is the photo before background replacement (output geometry), `output` the composite,
 * `alpha` the person alpha used, `inside` which output pixels came from the input.
 */
export function measureHalo(source: RawImage, output: RawImage, alpha: Float32Array, inside: Uint8Array, background: Rgb): HaloMeasure {
  const { width: w, height: h } = output;
  const n = w * h;
  const ringR = Math.max(2, Math.round(HALO.RING_SHARE * h));
  const notPerson = new Float32Array(n);
  const bgW = new Float32Array(n);
  const fgW = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    notPerson[i] = alpha[i] < 0.5 ? 1 : 0;
    bgW[i] = inside[i] && alpha[i] < 0.05 ? 1 : 0;
    fgW[i] = alpha[i] >= 0.98 ? 1 : 0;
  }
  const near = boxMean(notPerson, w, h, ringR);
  const r = Math.max(4, Math.round(HALO.OLD_BG_RADIUS_SHARE * h));
  const wMean = boxMean(bgW, w, h, r);
  const fMean = boxMean(fgW, w, h, r);
  const chan: Float32Array[] = [];
  const fg: Float32Array[] = [];
  for (let c = 0; c < 3; c++) {
    const p = new Float32Array(n);
    for (let i = 0, j = c; i < n; i++, j += source.channels) p[i] = bgW[i] * source.data[j];
    chan.push(boxMean(p, w, h, r));
    const q = new Float32Array(n);
    for (let i = 0, j = c; i < n; i++, j += output.channels) q[i] = fgW[i] * output.data[j];
    fg.push(boxMean(q, w, h, r));
  }
  let ring = 0;
  let halo = 0;
  const oc = output.channels;
  for (let i = 0; i < n; i++) {
    if (!inside[i] || alpha[i] < HALO.RING_MIN_ALPHA || near[i] <= 0) continue;
    ring++;
    if (wMean[i] < 0.02) continue; // no old background nearby to compare with
    const j = i * oc;
    const R = output.data[j];
    const G = output.data[j + 1];
    const B = output.data[j + 2];
    const inv = 1 / wMean[i];
    const dOld = Math.hypot(R - chan[0][i] * inv, G - chan[1][i] * inv, B - chan[2][i] * inv);
    const dNew = Math.hypot(R - background[0], G - background[1], B - background[2]);
    if (dOld > HALO.OLD_BG_DISTANCE || dNew < HALO.NEW_BG_DISTANCE) continue;
    if (fMean[i] > 0.02) {
      const f = 1 / fMean[i];
      if (distanceToSegment([R, G, B], background, [fg[0][i] * f, fg[1][i] * f, fg[2][i] * f]) <= dOld) continue;
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
