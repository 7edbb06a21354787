// Halo measure: along the silhouette's edge on the produced photo, how much of the OLD background
// (the photo's own background near that spot) each pixel still carries. A rim or smear left by the
// mask, or a half-blended edge (the usual failure of matting), is a mix with the old background; a
// clean cut-out has only person colours and their mixes with each other and the new background.
// The ring: person pixels (alpha >= RING_MIN_ALPHA) within RING_SHARE of the height of a pixel with
// alpha < 0.5. Each one's share b of the old background, read against the local means (within
// OLD_BG_RADIUS_SHARE) of the person's three luma groups and of the old background, is the kernel's
// (kernels/assembly/measures.ts, ringBlend, says when a colour is explained within EXPLAINED without
// the old background); halo where b > BLEND_LEVEL.
import { IDENTITY_LUTS } from './enhance.js';
import { haloBlend, type ChannelLuts } from './kernels/pixels.js';
import { widestRun } from '../vision/mask-runs.js';
import { type RawImage, type Rgb } from '../vision/raw-image.js';

export const HALO = {
  RING_SHARE: 0.015,
  RING_MIN_ALPHA: 0.05,
  OLD_BG_RADIUS_SHARE: 0.04,
  EXPLAINED: 20,
  BLEND_LEVEL: 0.5,
  /** Pass when at most this share of the ring is halo and no run is wider than MAX_RUN_PX, each with
   * its margin (compliance.ts); the figures per portrait are in docs/passport.md (Edges). */
  MAX_SHARE: 0.03,
  MAX_RUN_PX: 20,
  /** A colour window is compared with only when this share of it is old background (and person). */
  MIN_WINDOW_SHARE: 0.02,
} as const;

export interface HaloMeasure {
  share: number;
  widestRun: number;
  ringPixels: number;
  /** 1 at the ring's halo pixels (for figures). */
  pixels: Uint8Array;
}

/**
 * `source` is the photo before background replacement (output geometry), read through
 * `sourceLuts` (the enhancement's tables: the old background as it would look after the same
 * corrections), `output` the composite, `alpha` the person alpha used, `inside` which output
 * pixels came from the input. The window means come from integer summed-area tables read only at
 * the ring's pixels (WebAssembly: kernels/pixels.ts, haloBlend).
 */
export function measureHalo(source: RawImage, output: RawImage, alpha: Float32Array, inside: Uint8Array, background: Rgb, sourceLuts: ChannelLuts = IDENTITY_LUTS): HaloMeasure {
  const { width: w, height: h } = output;
  const ringR = Math.max(2, Math.round(HALO.RING_SHARE * h));
  const r = Math.max(4, Math.round(HALO.OLD_BG_RADIUS_SHARE * h));
  const blend = haloBlend(source.data, source.channels, sourceLuts, output.data, output.channels, alpha, inside, w, h,
    { ringR, r, minAlpha: HALO.RING_MIN_ALPHA, explained: HALO.EXPLAINED, minShare: HALO.MIN_WINDOW_SHARE, background });
  const halo = new Uint8Array(w * h);
  let [ring, count] = [0, 0];
  for (let i = 0; i < blend.length; i++) { // one plain loop: a typed array's from / reduce with a callback took ~40 ms at 600 x 600
    ring += blend[i] >= 0 ? 1 : 0;
    count += halo[i] = blend[i] > HALO.BLEND_LEVEL ? 1 : 0;
  }
  return { share: ring ? count / ring : 0, widestRun: widestRun(halo, w, h), ringPixels: ring, pixels: halo };
}
