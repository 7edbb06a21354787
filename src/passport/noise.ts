// Noise and focus of the face: noise is measured on the input's working copy (and on the
// full-size pixels a large JPEG's photo is rendered from) and reduced before anything is detected
// or enhanced when above a level; the output's face is checked for grain and for focus. Gain noise
// of a dark photo brightened would otherwise tilt the eye line, show as grain and read as
// sharpness: the Laplacian counts noise as detail, even what a median filter leaves (blotches of
// 1-2 px), so focus is measured after two 3 x 3 medians with the remaining noise's share taken off.
import type { Region } from './enhance.js';
import { focusVariance, median3, noiseSigma } from '../vision/noise.js';
import type { PixelBounds, RawImage } from '../vision/raw-image.js';

export const NOISE = {
  /** Reduced above this sigma (levels of 255; the corpus portraits: 1-2.2, a night shot: 11-12). */
  REDUCE_ABOVE: 4,
  /** 3 x 3 median passes: one, two above TWO_PASSES_ABOVE (sigma 30 leaves 1.5x the clean face's grain through one). */
  TWO_PASSES_ABOVE: 20,
  /** Passes of the 3 x 3 median before focus is measured. */
  FOCUS_MEDIAN_PASSES: 2,
  /** The output face's noise sigma passes up to this (corpus outputs: 0.8-2.1). */
  MAX_OUTPUT_SIGMA: 3,
  /**
   * Focus: variance of the 4-neighbour Laplacian of the face's luma after two 3 x 3 medians, less
   * 20 sigma^2 (white noise's share), at the photo's own size. Outputs: the corpus portraits
   * 6.9-380 over every document (the 3x-enlarged cameraman lowest: 6.9 for japan with enhancement
   * off fails, 7.3 on two others passes), night shots (sigma 12) 22-210; the astronaut blurred by sigma
   * 1.5 / 2 source px 1.8 / 0.2, and with noise of sigma 12 added 5.5 / 4.6 (usa).
   */
  MIN_SHARPNESS: 7,
} as const;

/** The image with its noise reduced when above NOISE.REDUCE_ABOVE, and the sigma measured before. */
export function withNoiseReduced(img: RawImage): { image: RawImage; sigma: number; reduced: boolean } {
  const sigma = noiseSigma(img);
  const reduced = sigma > NOISE.REDUCE_ABOVE;
  return { image: reduced ? median3(img, sigma > NOISE.TWO_PASSES_ABOVE ? 2 : 1) : img, sigma, reduced };
}

/** The output face's grain (noise sigma) and focus, read by the `noise` and `sharpness` checks. */
export function grainAndFocus(photo: RawImage, face: Region): { sigma: number; sharpness: number } {
  const bounds: PixelBounds = { left: face.x0, top: face.y0, right: face.x1, bottom: face.y1 };
  return { sigma: noiseSigma(photo, bounds), sharpness: focusVariance(photo, bounds, NOISE.FOCUS_MEDIAN_PASSES) };
}
