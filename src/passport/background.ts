// Background replacement: refine the selfie-segmentation mask at the output resolution, estimate
// the true foreground colour at the soft edge (so no rim of the old background remains) and
// composite on the spec's background colour.
//
// The selfie model runs at 256x256, so its mask edge is soft over 3-6 model pixels (~8-15 output
// pixels): composited directly it leaves a halo of the old background and blurs hair. Steps:
//  1. Colour guided filter (He et al. 2010) of the mask with the output photo as the guide: the
//     soft band snaps to colour edges in the photo (hair strands, ear and collar outlines).
//  2. Tighten: alpha = smoothstep((q - LOW) / (HIGH - LOW)). Moving the 50 % contour to q = 0.55
//     erodes about one pixel where the upsampled mask bleeds outward; the ramp keeps a soft edge.
//     Below the face's top, where the segmenter was unsure (p < 0.6), it starts at 0.4: backdrop of
//     the person's own colour beside it (a flag's navy between a navy cap and the temple: p 0.40-0.55,
//     q alike) stays out; a dark edge on a dark backdrop, which the filter lowers where the segmenter
//     is sure, stays in; above, a light cap's crown (the segmenter's weakest call) keeps its edge.
//  3. Feather: a 3x3 mean removes stair-steps of the tightening.
//  4. Colour line: where the model's mask is too wide, a mix of the old background keeps full
//     alpha; alpha is lowered to the pixel's place between the local old background and person.
//  5. Foreground colour estimation, "blur fusion" (Forte & Pitie 2021, two passes): at pixels with
//     0 < alpha < 1 the old background's colour is removed from the pixel before compositing.
// The guided filter's coefficients and the wide fusion pass are computed at half resolution.
import { IDENTITY_LUTS } from './enhance.js';
import { boxMeanInto, estimateForegroundInto, guidedCoefficients, tightenInto, type ChannelLuts } from './kernels/pixels.js';
import { type RawImage, type Rgb } from '../vision/raw-image.js';

export const MASK_REFINEMENT = {
  /** Guided-filter window radius as a share of the output height (7 px at 600 px), at least 2 px (twice it cuts the dark cap's outer pixels on a dark backdrop). */
  guidedRadiusShare: 0.012,
  /** Guided-filter regularisation on 0..1 colours: smaller follows photo edges more closely. */
  guidedEps: 0.0015,
  /** Tightening ramp over the filtered mask, starting higher where the segmenter gave below unsureBelow (step 2). */
  tighten: { low: 0.3, high: 0.8, unsureBelow: 0.6, unsureLow: 0.4 },
  /** Feather radius in output pixels (3x3 mean). */
  featherRadius: 1,
  /** Blur-fusion window radii as shares of the output height (30 px and 3 px at 600 px). */
  fusionRadiiShare: [0.05, 0.005] as const,
  /** Colour line: window radius (share of the height), least share of each side in it (in full from twice
   * it), least distance of their colours and farthest off their line (0..1 RGB), the dark group's luma limit. */
  colourLine: { radiusShare: 0.02, minShare: 0.1, minDistance: 0.25, maxOff: 0.25, darkLuma: 0.25 },
} as const;

/** The filters' radii, in pixels, for a photo `height` px tall (refineMask, estimateForeground; edge-bands.ts sizes its margins from them). */
export interface RefinementRadii {
  /** Guided-filter window, at half resolution (where its box means run). */
  guidedHalf: number;
  /** Blur fusion's wide pass, at half resolution. */
  wideHalf: number;
  /** Blur fusion's narrow pass, at full resolution. */
  narrow: number;
  /** The colour line's window (lowerTowardsOldBackground), at full resolution. */
  colourLine: number;
}

export function refinementRadii(height: number): RefinementRadii {
  const guided = Math.max(2, Math.round(MASK_REFINEMENT.guidedRadiusShare * height));
  const [wide, narrow] = MASK_REFINEMENT.fusionRadiiShare;
  return {
    guidedHalf: Math.max(1, Math.round(guided / 2)),
    wideHalf: Math.max(2, Math.round((wide * height) / 2)),
    narrow: Math.max(1, Math.round(narrow * height)),
    colourLine: Math.max(2, Math.round(MASK_REFINEMENT.colourLine.radiusShare * height)),
  };
}

// refineMask and estimateForeground read the same photo's planes: converted once (the pipeline
// never changes a photo's pixels in place; a new photo is a new buffer).
const planesOf = new WeakMap<Uint8Array, [Float32Array, Float32Array, Float32Array]>();

function planes(rgb: RawImage): [Float32Array, Float32Array, Float32Array] {
  const known = planesOf.get(rgb.data);
  if (known && known[0].length === rgb.width * rgb.height) return known;
  const n = rgb.width * rgb.height;
  const p: [Float32Array, Float32Array, Float32Array] = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
  splitPlanes(rgb.data, p[0], p[1], p[2]);
  planesOf.set(rgb.data, p);
  return p;
}

function splitPlanes(d: Uint8Array, R: Float32Array, G: Float32Array, B: Float32Array): void {
  for (let i = 0, j = 0; i < R.length; i++, j += 3) {
    R[i] = d[j] / 255;
    G[i] = d[j + 1] / 255;
    B[i] = d[j + 2] / 255;
  }
}

/**
 * Refined alpha (0..1) at the photo's resolution. `prob` is the person probability resampled to
 * the photo; `inside` marks pixels that came from the source image (others are background fill).
 */
export function refineMask(rgb: RawImage, prob: Float32Array, inside?: Uint8Array, options: { skipDecided?: boolean; photoHeight?: number; unsureFromRow?: number } = {}): Float32Array {
  const { width: w, height: h } = rgb;
  // photoHeight: the whole photo's, when `rgb` is a band of it (edge-bands.ts): the radii are the photo's;
  // unsureFromRow: the face's top in `rgb`'s rows, from which the ramp starts higher where p is unsure (step 2; none: nowhere).
  const { guidedHalf, colourLine } = refinementRadii(options.photoHeight ?? h);
  const I = planes(rgb);
  // Colour guided filter, "fast" variant (He & Sun 2015): the linear coefficients at half
  // resolution (the guide and the mask halved, window means of them and of their products, a 3x3
  // covariance solve per cell, window means of the coefficients: one WebAssembly kernel);
  // then upsampled and evaluated with the full-resolution guide.
  const low = guidedCoefficients(I, prob, w, h, guidedHalf, MASK_REFINEMENT.guidedEps);
  // Tightened: t = smoothstep((q - low) / (high - low)), q = up(aR) R + up(aG) G + up(aB) B + up(b)
  // (up: bilinear from the 2x2 means), 0 outside `inside`. q is evaluated only at the soft edge: cells
  // whose linear model cannot reach the ramp for any colour give every pixel they reach 0 or 1, as
  // evaluation would (a float32 margin covers rounding); skipDecided: false evaluates every pixel.
  const t = new Float32Array(w * h);
  const unsure = options.unsureFromRow === undefined ? undefined : { prob, fromRow: options.unsureFromRow };
  tightenInto(low, I, w, h, MASK_REFINEMENT.tighten, unsure, inside, options.skipDecided ?? true, t);
  const alpha = boxMean(t, w, h, MASK_REFINEMENT.featherRadius);
  if (inside) zeroOutside(alpha, inside);
  lowerTowardsOldBackground(I, alpha, w, h, colourLine);
  return alpha;
}

/** Step 4: alpha <= (I - B).(F - B) / |F - B|^2 (B, F: window means of the certain old background and of a person
 * group, dark or light), the most a group gives; none where one is too near B or I off its line (a colour of neither).
 * Eased in over minShare..2 minShare of the scarcer side: where a soft zone is wider than the window, only a line
 * in it sees both sides; a cap switched on there at once would leave a line of lighter pixels. */
function lowerTowardsOldBackground(I: [Float32Array, Float32Array, Float32Array], alpha: Float32Array, w: number, h: number, r: number): void {
  const { minShare, minDistance, maxOff, darkLuma } = MASK_REFINEMENT.colourLine;
  // Window means of the groups (old background 0, dark person 4, light person 8): share, then R, G, B sums.
  const m = Array.from({ length: 12 }, () => new Float32Array(w * h));
  for (let i = 0; i < alpha.length; i++) {
    const g = alpha[i] <= 0.02 ? 0 : alpha[i] < 0.98 ? -1 : 0.21 * I[0][i] + 0.72 * I[1][i] + 0.07 * I[2][i] < darkLuma ? 4 : 8;
    if (g >= 0) for (let k = 0; k <= 3; k++) m[g + k][i] = k ? I[k - 1][i] : 1;
  }
  m.forEach((plane) => boxMean(plane, w, h, r, plane));
  const smooth = I.map((plane) => boxMean(plane, w, h, 1)); // the pixel's colour with its noise averaged down
  for (let i = 0; i < alpha.length; i++) {
    if (alpha[i] <= 0 || m[0][i] < minShare || m[4][i] + m[8][i] < minShare) continue;
    let most = 0;
    for (let g = 4; g <= 8 && most < 1; g += 4) {
      if (m[g][i] < minShare / 4) continue;
      let dd = 0, dc = 0, cc = 0;
      for (let k = 1; k <= 3; k++) {
        const b = m[k][i] / m[0][i];
        const d = m[g + k][i] / m[g][i] - b;
        const c = smooth[k - 1][i] - b;
        dd += d * d;
        dc += d * c;
        cc += c * c;
      }
      const a = dc / dd; // undecided (1): too near B, or off the line
      most = dd < minDistance * minDistance || cc - a * a * dd > maxOff * maxOff * dd ? 1 : Math.max(most, a);
    }
    const ease = Math.min(1, Math.min(m[0][i], m[4][i] + m[8][i]) / minShare - 1);
    alpha[i] -= ease * Math.max(0, alpha[i] - most);
  }
}

/** values[i] = 0 where !inside[i]. */
export function zeroOutside(values: Float32Array, inside: Uint8Array): void {
  for (let i = 0; i < values.length; i++) if (!inside[i]) values[i] = 0;
}

/**
 * Foreground colours (RGB, 0..255) with the old background removed from semi-transparent pixels.
 * Blur fusion, two passes: the wide pass (smooth by construction) runs at half resolution on the
 * whole photo; the narrow pass runs at full resolution on the wide pass's estimates, only where it
 * is needed: at the edge band (0 < alpha < 0.999) and within its window around it. Each pass is
 * F = bF + alpha (I - alpha bF - (1 - alpha) bB), clamped to 0..1 (bF, bB: blurred foreground and
 * background colours, window means divided by the window's mean alpha / 1 - alpha). Pixels off the
 * band keep the photo's colour: opaque ones are the person, transparent ones are not composited.
 * A WebAssembly kernel (kernels/assembly/pixels.ts, estimateForeground).
 */
export function estimateForeground(rgb: RawImage, alpha: Float32Array, photoHeight = rgb.height): RawImage {
  const { width: w, height: h, data } = rgb;
  const out = new Uint8Array(data);
  const { wideHalf: r1, narrow: r2 } = refinementRadii(photoHeight);
  estimateForegroundInto(planes(rgb), alpha, w, h, r1, r2, out);
  return { data: out, width: w, height: h, channels: 3 };
}

/**
 * fg (through `luts`: the enhancement's tables, applied here rather than in a pass of their own)
 * over the background colour with alpha.
 */
export function compositeOnBackground(fg: RawImage, alpha: Float32Array, background: Rgb, luts: ChannelLuts = IDENTITY_LUTS): RawImage {
  const out = new Uint8Array(fg.width * fg.height * 3);
  // Stores through a clamped view round (half to even) and clamp natively.
  blendInto(fg.data, alpha, background, luts[0], luts[1], luts[2], new Uint8ClampedArray(out.buffer));
  return { data: out, width: fg.width, height: fg.height, channels: 3 };
}

function blendInto(d: Uint8Array, alpha: Float32Array, background: Rgb, lr: Uint8Array, lg: Uint8Array, lb: Uint8Array, clamped: Uint8ClampedArray): void {
  for (let i = 0, j = 0; i < alpha.length; i++, j += 3) {
    const a = alpha[i];
    clamped[j] = lr[d[j]] * a + background[0] * (1 - a);
    clamped[j + 1] = lg[d[j + 1]] * a + background[1] * (1 - a);
    clamped[j + 2] = lb[d[j + 2]] * a + background[2] * (1 - a);
  }
}

/**
 * Mean over a (2r+1)^2 window, clipped at the borders (each output divides by the number of
 * pixels actually inside the window). O(n) running sums, rows then columns (kernels/pixels.ts).
 */
export function boxMean(src: Float32Array, width: number, height: number, r: number, out: Float32Array = new Float32Array(width * height)): Float32Array {
  boxMeanInto(src, width, height, r, out);
  return out;
}
