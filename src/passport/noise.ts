// Noise and focus of the face: noise is measured on the input's working copy (and on the
// full-size pixels a large JPEG's photo is rendered from) and reduced before anything is detected
// or enhanced when above a level; the output's face is checked for grain and for focus. Gain noise
// of a dark photo brightened would otherwise tilt the eye line, show as grain and read as
// sharpness: the Laplacian counts noise as detail, even what a median filter leaves (blotches of
// 1-2 px), so focus is measured after two 3 x 3 medians with the remaining noise's share taken off.
import type { ComplianceCheck } from './compliance-check.js';
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

/** The `noise` and `sharpness` checks on the output's face (the JPEG's pixels). */
export function grainAndFocusChecks(photo: RawImage, face: PixelBounds, inputSigma: number): ComplianceCheck[] {
  const sigma = Math.round(noiseSigma(photo, face) * 100) / 100;
  const noiseOk = sigma <= NOISE.MAX_OUTPUT_SIGMA;
  const sharpness = Math.round(focusVariance(photo, face, NOISE.FOCUS_MEDIAN_PASSES) * 10) / 10;
  const focused = sharpness >= NOISE.MIN_SHARPNESS;
  return [
    {
      name: 'noise',
      passed: noiseOk,
      value: sigma,
      expected: `noise sigma of the face <= ${NOISE.MAX_OUTPUT_SIGMA} (of 255; median absolute high-pass)`,
      severity: 'error',
      message: noiseOk
        ? `The face shows no disturbing grain${inputSigma > NOISE.REDUCE_ABOVE ? ` (noise reduced from sigma ${inputSigma.toFixed(1)})` : ''}.`
        : 'The face is grainy (sensor noise of a dark photo): take the photo in more light.',
    },
    {
      name: 'sharpness',
      passed: focused,
      value: sharpness,
      expected: `variance of the face's Laplacian (after two 3 x 3 medians, less the noise's share) >= ${NOISE.MIN_SHARPNESS}`,
      severity: 'error',
      message: focused ? 'The face is in focus.' : 'The face is blurred or out of focus.',
    },
  ];
}
