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
import { IDENTITY_LUTS } from './enhance.js';
import { haloCounts, type ChannelLuts } from './kernels/pixels.js';
import { type RawImage, type Rgb } from '../vision/raw-image.js';

export const HALO = {
  RING_SHARE: 0.015,
  RING_MIN_ALPHA: 0.05,
  OLD_BG_RADIUS_SHARE: 0.04,
  OLD_BG_DISTANCE: 28,
  NEW_BG_DISTANCE: 40,
  /** Pass when at most this share of the ring is halo. */
  MAX_SHARE: 0.03,
  /** A colour window is compared with only when this share of it is old background (or person). */
  MIN_WINDOW_SHARE: 0.02,
} as const;

export interface HaloMeasure {
  share: number;
  ringPixels: number;
}

/**
 * `source` is the photo before background replacement (output geometry), read through
 * `sourceLuts` (the enhancement's tables: the old background as it would look after the same
 * corrections), `output` the composite, `alpha` the person alpha used, `inside` which output
 * pixels came from the input.
 *
 * The window means are read from integer summed-area tables of nine planes (not-person, old-bg
 * weight, person weight, old-bg RGB, person RGB; exact sums) only at the ring's pixels (a few per
 * cent of the photo) instead of box-filtering nine full planes; both run as WebAssembly
 * (kernels/pixels.ts: summedAreaTables, countRing).
 */
export function measureHalo(source: RawImage, output: RawImage, alpha: Float32Array, inside: Uint8Array, background: Rgb, sourceLuts: ChannelLuts = IDENTITY_LUTS): HaloMeasure {
  const h = output.height;
  const [ring, halo] = haloCounts(source.data, source.channels, sourceLuts, output.data, output.channels, alpha, inside, output.width, h, {
    ringR: Math.max(2, Math.round(HALO.RING_SHARE * h)),
    r: Math.max(4, Math.round(HALO.OLD_BG_RADIUS_SHARE * h)),
    minAlpha: HALO.RING_MIN_ALPHA,
    oldDistance: HALO.OLD_BG_DISTANCE,
    newDistance: HALO.NEW_BG_DISTANCE,
    minShare: HALO.MIN_WINDOW_SHARE,
    background,
  });
  return { share: ring ? halo / ring : 0, ringPixels: ring };
}
