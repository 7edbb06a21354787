// Noise of an image and its reduction. The estimate is the median absolute value of a high-pass
// that cancels flat and linearly shaded areas (Immerkaer's 3 x 3 kernel [1 -2 1; -2 4 -2; 1 -2 1]:
// on white noise of sigma s its output has sigma 6 s), per channel: edges and texture are a minority
// of a face or a background, so the median reads the noise and not them.
import { luma, type PixelBounds, type RawImage } from './raw-image.js';

/** Median absolute deviation of a normal variable, in sigmas. */
const MAD_PER_SIGMA = 0.6745;
/** The high-pass's largest magnitude: 16 x 255. */
const MAX_RESPONSE = 4080;

/**
 * The noise's standard deviation (0..255 levels) in each channel, over `bounds` (the whole image
 * by default) and, given `where`, only at pixels where it is non-zero; null when fewer than 64
 * pixels are read (every second row and column is).
 */
export function noiseSigmas(img: RawImage, bounds?: PixelBounds, where?: Uint8Array): number[] | null {
  const c = img.channels;
  const hist = new Uint32Array(c * (MAX_RESPONSE + 1));
  const b = bounds ?? { left: 0, top: 0, right: img.width, bottom: img.height };
  const counted = highPassHistogram(img.data, img.width, c, Math.max(1, b.left), Math.max(1, b.top), Math.min(img.width - 1, b.right), Math.min(img.height - 1, b.bottom), where, hist);
  if (counted < 64) return null;
  const sigmas: number[] = [];
  for (let k = 0; k < c; k++) {
    // The median, read within its bin as if the bin's values were spread evenly over v +- 0.5.
    let below = 0;
    let v = 0;
    const base = k * (MAX_RESPONSE + 1);
    while (v < MAX_RESPONSE && below + hist[base + v] < counted / 2) below += hist[base + v++];
    const median = Math.max(0, v - 0.5 + (counted / 2 - below) / Math.max(1, hist[base + v]));
    sigmas.push(median / (6 * MAD_PER_SIGMA));
  }
  return sigmas;
}

/** The largest channel's noise (see noiseSigmas), 0 when nothing could be read. */
export function noiseSigma(img: RawImage, bounds?: PixelBounds, where?: Uint8Array): number {
  return Math.max(0, ...(noiseSigmas(img, bounds, where) ?? [0]));
}

/** Histograms of |high-pass| per channel over [x0, x1) x [y0, y1) (1 px inside the image); the pixels counted. */
function highPassHistogram(d: Uint8Array, w: number, c: number, x0: number, y0: number, x1: number, y1: number, where: Uint8Array | undefined, hist: Uint32Array): number {
  let counted = 0;
  const row = w * c;
  // Every second row and column: a quarter of the work, still thousands of samples for the median.
  for (let y = y0; y < y1; y += 2) {
    for (let x = x0; x < x1; x += 2) {
      if (where && !where[y * w + x]) continue;
      counted++;
      for (let k = 0; k < c; k++) {
        const j = (y * w + x) * c + k;
        const v = d[j - row - c] - 2 * d[j - row] + d[j - row + c] - 2 * d[j - c] + 4 * d[j] - 2 * d[j + c] + d[j + row - c] - 2 * d[j + row] + d[j + row + c];
        hist[k * (MAX_RESPONSE + 1) + (v < 0 ? -v : v)]++;
      }
    }
  }
  return counted;
}

/**
 * Noise reduction: a 3 x 3 median per channel (edge pixels keep their values), `passes` times. By a
 * sorting network in TypeScript: libvips' median (sharp's `median`, a general rank filter) took
 * 10-20x as long at these sizes (docs/passport.md, Speed).
 */
export function median3(img: RawImage, passes = 1): RawImage {
  let src = img.data;
  for (let p = 0; p < passes; p++) {
    const out = new Uint8Array(src);
    median3Into(src, img.width, img.height, img.channels, out);
    src = out;
  }
  return { ...img, data: src };
}

/**
 * Each window's median from its three columns, each sorted (lo <= mid <= hi): the median of
 * (the largest lo, the median of the mids, the smallest hi) is the median of the nine.
 */
function median3Into(d: Uint8Array, w: number, h: number, c: number, out: Uint8Array): void {
  const row = w * c;
  for (let y = 1; y < h - 1; y++) {
    for (let k = 0; k < c; k++) {
      const o = y * row + k;
      // the sorted columns at x - 1 and x, then x + 1 sorted as the window moves
      let lo0 = 0, mid0 = 0, hi0 = 0, lo1 = 0, mid1 = 0, hi1 = 0;
      for (let x = 0; x < w; x++) {
        const j = o + x * c;
        let a = d[j - row];
        let b = d[j];
        let e = d[j + row];
        if (a > b) { const t = a; a = b; b = t; }
        if (b > e) { const t = b; b = e; e = t; }
        if (a > b) { const t = a; a = b; b = t; }
        if (x >= 2) {
          const lo = Math.max(lo0, lo1, a);
          const hi = Math.min(hi0, hi1, e);
          const mid = Math.max(Math.min(mid0, mid1), Math.min(Math.max(mid0, mid1), b));
          out[j - c] = Math.max(Math.min(lo, mid), Math.min(Math.max(lo, mid), hi));
        }
        lo0 = lo1; mid0 = mid1; hi0 = hi1;
        lo1 = a; mid1 = b; hi1 = e;
      }
    }
  }
}

/**
 * Focus over `bounds`, not fooled by noise: the variance of the 4-neighbour Laplacian of the luma
 * after `medianPasses` 3 x 3 medians (they leave edges and take the noise's blotches of 1-2 px),
 * less 20 sigma^2, the share of the white noise that remains (sigma measured after the medians).
 */
export function focusVariance(img: RawImage, bounds: PixelBounds, medianPasses: number): number {
  const left = Math.max(0, Math.floor(bounds.left));
  const top = Math.max(0, Math.floor(bounds.top));
  const width = Math.min(img.width, Math.ceil(bounds.right)) - left;
  const height = Math.min(img.height, Math.ceil(bounds.bottom)) - top;
  if (width < 8 || height < 8) return 0;
  const c = img.channels;
  const data = new Uint8Array(width * height * c);
  for (let y = 0; y < height; y++) data.set(img.data.subarray(((top + y) * img.width + left) * c, ((top + y) * img.width + left + width) * c), y * width * c);
  const crop = median3({ data, width, height, channels: c }, medianPasses);
  const acc = new Float64Array(3);
  laplacianSums(crop, acc);
  const [n, s, sq] = acc;
  const sigma = noiseSigma(crop);
  return Math.max(0, sq / n - (s / n) ** 2 - 20 * sigma * sigma);
}

/** acc = [count, sum, sum of squares] of the 4-neighbour Laplacian of the luma (RGB), 1 px inside. */
function laplacianSums(img: RawImage, acc: Float64Array): void {
  const { data: d, width: w, height: h, channels: c } = img;
  const at = (x: number, y: number): number => {
    const j = (y * w + x) * c;
    return luma(d[j], d[j + 1], d[j + 2]);
  };
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const lap = at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1) - 4 * at(x, y);
      acc[0]++;
      acc[1] += lap;
      acc[2] += lap * lap;
    }
  }
}
