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
//  3. Feather: a 3x3 mean removes stair-steps of the tightening.
//  4. Foreground colour estimation, "blur fusion" (Forte & Pitie 2021, two passes): at pixels with
//     0 < alpha < 1 the old background's colour is removed from the pixel before compositing.
import { boxMean, type RawImage, type Rgb } from './image.js';

export const MASK_REFINEMENT = {
  /** Guided-filter window radius as a share of the output height (7 px at 600 px), at least 2 px. */
  guidedRadiusShare: 0.012,
  /** Guided-filter regularisation on 0..1 colours: smaller follows photo edges more closely. */
  guidedEps: 0.0015,
  /** Tightening ramp over the filtered mask. */
  tightenLow: 0.3,
  tightenHigh: 0.8,
  /** Feather radius in output pixels (3x3 mean). */
  featherRadius: 1,
  /** Blur-fusion window radii as shares of the output height (30 px and 3 px at 600 px). */
  fusionRadiiShare: [0.05, 0.005] as const,
} as const;

function guidedFilterColor(rgb: RawImage, p: Float32Array, r: number, eps: number): Float32Array {
  const { width: w, height: h, data } = rgb;
  const n = w * h;
  const Ir = new Float32Array(n);
  const Ig = new Float32Array(n);
  const Ib = new Float32Array(n);
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    Ir[i] = data[j] / 255;
    Ig[i] = data[j + 1] / 255;
    Ib[i] = data[j + 2] / 255;
  }
  const prod = (a: Float32Array, b: Float32Array): Float32Array => {
    const o = new Float32Array(n);
    for (let i = 0; i < n; i++) o[i] = a[i] * b[i];
    return o;
  };
  const box = (a: Float32Array): Float32Array => boxMean(a, w, h, r);
  const mR = box(Ir);
  const mG = box(Ig);
  const mB = box(Ib);
  const mP = box(p);
  const mRP = box(prod(Ir, p));
  const mGP = box(prod(Ig, p));
  const mBP = box(prod(Ib, p));
  const vRR = box(prod(Ir, Ir));
  const vRG = box(prod(Ir, Ig));
  const vRB = box(prod(Ir, Ib));
  const vGG = box(prod(Ig, Ig));
  const vGB = box(prod(Ig, Ib));
  const vBB = box(prod(Ib, Ib));
  const aR = new Float32Array(n);
  const aG = new Float32Array(n);
  const aB = new Float32Array(n);
  const bb = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const mr = mR[i];
    const mg = mG[i];
    const mb = mB[i];
    const mp = mP[i];
    const cr = mRP[i] - mr * mp;
    const cg = mGP[i] - mg * mp;
    const cb = mBP[i] - mb * mp;
    const rr = vRR[i] - mr * mr + eps;
    const rg = vRG[i] - mr * mg;
    const rb = vRB[i] - mr * mb;
    const gg = vGG[i] - mg * mg + eps;
    const gb = vGB[i] - mg * mb;
    const b2 = vBB[i] - mb * mb + eps;
    // inverse of the symmetric 3x3 covariance matrix
    const i00 = gg * b2 - gb * gb;
    const i01 = gb * rb - rg * b2;
    const i02 = rg * gb - gg * rb;
    const i11 = rr * b2 - rb * rb;
    const i12 = rb * rg - rr * gb;
    const i22 = rr * gg - rg * rg;
    const det = rr * i00 + rg * i01 + rb * i02;
    const ar = (i00 * cr + i01 * cg + i02 * cb) / det;
    const ag = (i01 * cr + i11 * cg + i12 * cb) / det;
    const ab = (i02 * cr + i12 * cg + i22 * cb) / det;
    aR[i] = ar;
    aG[i] = ag;
    aB[i] = ab;
    bb[i] = mp - ar * mr - ag * mg - ab * mb;
  }
  const maR = box(aR);
  const maG = box(aG);
  const maB = box(aB);
  const mbb = box(bb);
  const q = new Float32Array(n);
  for (let i = 0; i < n; i++) q[i] = maR[i] * Ir[i] + maG[i] * Ig[i] + maB[i] * Ib[i] + mbb[i];
  return q;
}

/**
 * Refined alpha (0..1) at the photo's resolution. `prob` is the person probability resampled to
 * the photo; `inside` marks pixels that came from the source image (others are background fill).
 */
export function refineMask(rgb: RawImage, prob: Float32Array, inside?: Uint8Array): Float32Array {
  const { width: w, height: h } = rgb;
  const n = w * h;
  const r = Math.max(2, Math.round(MASK_REFINEMENT.guidedRadiusShare * h));
  const q = guidedFilterColor(rgb, prob, r, MASK_REFINEMENT.guidedEps);
  const lo = MASK_REFINEMENT.tightenLow;
  const span = MASK_REFINEMENT.tightenHigh - lo;
  const t = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let x = (q[i] - lo) / span;
    x = x < 0 ? 0 : x > 1 ? 1 : x;
    t[i] = x * x * (3 - 2 * x);
    if (inside && !inside[i]) t[i] = 0;
  }
  const alpha = boxMean(t, w, h, MASK_REFINEMENT.featherRadius);
  if (inside) for (let i = 0; i < n; i++) if (!inside[i]) alpha[i] = 0;
  return alpha;
}

function fusionPass(
  image: Float32Array[],
  F: Float32Array[],
  B: Float32Array[],
  alpha: Float32Array,
  w: number,
  h: number,
  r: number,
): { F: Float32Array[]; B: Float32Array[] } {
  const n = w * h;
  const bA = boxMean(alpha, w, h, r);
  const outF: Float32Array[] = [];
  const outB: Float32Array[] = [];
  for (let c = 0; c < 3; c++) {
    const fa = new Float32Array(n);
    const b1a = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      fa[i] = F[c][i] * alpha[i];
      b1a[i] = B[c][i] * (1 - alpha[i]);
    }
    const bF = boxMean(fa, w, h, r);
    const bB = boxMean(b1a, w, h, r);
    const f = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const a = alpha[i];
      const blurredF = bF[i] / (bA[i] + 1e-5);
      const blurredB = bB[i] / (1 - bA[i] + 1e-5);
      bB[i] = blurredB;
      let v = blurredF + a * (image[c][i] - a * blurredF - (1 - a) * blurredB);
      v = v < 0 ? 0 : v > 1 ? 1 : v;
      f[i] = v;
    }
    outF.push(f);
    outB.push(bB);
  }
  return { F: outF, B: outB };
}

/** Foreground colours (RGB, 0..255) with the old background removed from semi-transparent pixels. */
export function estimateForeground(rgb: RawImage, alpha: Float32Array): RawImage {
  const { width: w, height: h, data } = rgb;
  const n = w * h;
  const I: Float32Array[] = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    I[0][i] = data[j] / 255;
    I[1][i] = data[j + 1] / 255;
    I[2][i] = data[j + 2] / 255;
  }
  const [s1, s2] = MASK_REFINEMENT.fusionRadiiShare;
  const r1 = Math.max(3, Math.round(s1 * h));
  const r2 = Math.max(1, Math.round(s2 * h));
  const p1 = fusionPass(I, I, I, alpha, w, h, r1);
  const p2 = fusionPass(I, p1.F, p1.B, alpha, w, h, r2);
  const out = new Uint8Array(n * 3);
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    // Fully opaque pixels keep their exact original values.
    if (alpha[i] >= 0.999) {
      out[j] = data[j];
      out[j + 1] = data[j + 1];
      out[j + 2] = data[j + 2];
    } else {
      out[j] = Math.round(p2.F[0][i] * 255);
      out[j + 1] = Math.round(p2.F[1][i] * 255);
      out[j + 2] = Math.round(p2.F[2][i] * 255);
    }
  }
  return { data: out, width: w, height: h, channels: 3 };
}

/** out = alpha * fg + (1 - alpha) * background. */
export function compositeOnBackground(fg: RawImage, alpha: Float32Array, background: Rgb): RawImage {
  const n = fg.width * fg.height;
  const out = new Uint8Array(n * 3);
  const d = fg.data;
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    const a = alpha[i];
    out[j] = Math.round(d[j] * a + background[0] * (1 - a));
    out[j + 1] = Math.round(d[j + 1] * a + background[1] * (1 - a));
    out[j + 2] = Math.round(d[j + 2] * a + background[2] * (1 - a));
  }
  return { data: out, width: fg.width, height: fg.height, channels: 3 };
}

/** Fills pixels that did not come from the source (crop beyond the image) with the background. */
export function fillOutside(img: RawImage, inside: Uint8Array, background: Rgb): RawImage {
  const out = new Uint8Array(img.data);
  for (let i = 0, j = 0; i < inside.length; i++, j += 3) {
    if (!inside[i]) {
      out[j] = background[0];
      out[j + 1] = background[1];
      out[j + 2] = background[2];
    }
  }
  return { ...img, data: out };
}
