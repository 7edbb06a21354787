// Halo measure: along the silhouette's edge on the produced photo, how much of the OLD background
// (the photo's own background near that spot) each pixel still carries. A rim or smear left by the
// mask, or a half-blended edge (the usual failure of matting), is a mix with the old background; a
// clean cut-out has only person, new-background and person / new-background mixes. Per pixel of
// the ring (person side, alpha >= RING_MIN_ALPHA, within RING_SHARE of the height of a pixel with
// alpha < 0.5): its colour as new + a (person - new) + b (old - new), person and old the means
// of the certain person and certain old-background pixels within OLD_BG_RADIUS_SHARE (the kernel,
// kernels/assembly/measures.ts ringBlend, says how); halo where b > BLEND_LEVEL. A mix of person and
// new background within EXPLAINED is no halo: hair that looks like the old background is not
// counted (grey hair beside a dark background is the ambiguous case: grey is a mix of both).
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
  /**
   * Pass when at most this share of the ring is halo and no run is wider than MAX_RUN_PX. usa: the
   * astronaut 0.0007 / 1 px, the cameraman 0.005 / 10; over the documents: Hopper 0.041-0.060 /
   * 12-19 (a grey smear beside the white hair), her night shots 0.045-0.082 / 11-20; side-lit
   * portraits on a dark background: the astronaut 0.055-0.078 / 12-15, Hopper 0.11-0.16 / 14-24.
   */
  MAX_SHARE: 0.08,
  MAX_RUN_PX: 20,
  /** A colour window is compared with only when this share of it is old background (and person). */
  MIN_WINDOW_SHARE: 0.02,
} as const;

export interface HaloMeasure {
  share: number;
  widestRun: number;
  ringPixels: number;
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
  const blend = haloBlend(source.data, source.channels, sourceLuts, output.data, output.channels, alpha, inside, w, h, {
    ringR: Math.max(2, Math.round(HALO.RING_SHARE * h)),
    r: Math.max(4, Math.round(HALO.OLD_BG_RADIUS_SHARE * h)),
    minAlpha: HALO.RING_MIN_ALPHA,
    explained: HALO.EXPLAINED,
    minShare: HALO.MIN_WINDOW_SHARE,
    background,
  });
  let ring = 0;
  const halo = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) {
    if (blend[i] >= 0) ring++;
    halo[i] = blend[i] > HALO.BLEND_LEVEL ? 1 : 0;
  }
  const count = halo.reduce((n, v) => n + v, 0);
  return { share: ring ? count / ring : 0, widestRun: widestRun(halo, w, h), ringPixels: ring };
}
