// The colour guided filter: half-resolution coefficients and the tightened output at the soft edge.
import { boxColumns, boxRows, f32at } from './common';

/** A cell whose linear model can reach the tightening ramp: its pixels are evaluated. */
const UNDECIDED: u8 = 2;

/** One low row's four coefficient planes interpolated along x into buf (4 x w f64): background.ts, interpolateRow. */
export function interpolateRow(aR: usize, aG: usize, aB: usize, bb: usize, r: i32, xa: usize, xb: usize, xt: usize, w: i32, buf: usize): void {
  for (let p = 0; p < 4; p++) {
    const P = p == 0 ? aR : p == 1 ? aG : p == 2 ? aB : bb;
    const o = buf + (<usize>(p * w) << 3);
    for (let x = 0; x < w; x++) {
      const ia = r + load<i32>(xa + (<usize>x << 2));
      const ib = r + load<i32>(xb + (<usize>x << 2));
      const va = f32at(P, ia);
      store<f64>(o + (<usize>x << 3), va + (f32at(P, ib) - va) * load<f64>(xt + (<usize>x << 3)));
    }
  }
}

/**
 * The tightened guided-filter output (background.ts, refineMask): per half-resolution cell
 * whether no colour can bring its linear model onto the ramp [lo, hi] (decided 0 / 1, unless
 * !skipDecided), then t = smoothstep((q - lo) / (hi - lo)) with q = up(aR) R + up(aG) G + up(aB) B
 * + up(b) evaluated only where the cells a pixel interpolates disagree or are undecided; 0 outside
 * `inside` (0: no such mask); from pixel unsureFrom on, where prob (0: none) < unsureBelow, the ramp
 * starts at unsureLo (>= lo: a decided cell stays so). Taps: bilinear upsampling along x (w) and y
 * (h) as i32 i0, i32 i1, f64 weight. Scratch: decided (lw x lh), both (lw), slots (2 x 4 x w f64).
 */
export function tighten(
  aR: usize, aG: usize, aB: usize, bb: usize, lw: i32, lh: i32,
  R: usize, G: usize, B: usize, w: i32, h: i32,
  xa: usize, xb: usize, xt: usize, ya: usize, yb: usize, yt: usize,
  lo: f64, hi: f64, prob: usize, unsureFrom: i32, unsureBelow: f64, unsureLo: f64, inside: usize, skipDecided: bool,
  decided: usize, both: usize, slots: usize, t: usize,
): void {
  const ln = lw * lh;
  for (let i = 0; i < ln; i++) {
    if (!skipDecided) {
      store<u8>(decided + <usize>i, UNDECIDED);
      continue;
    }
    const r = f32at(aR, i);
    const g = f32at(aG, i);
    const bl = f32at(aB, i);
    const c = f32at(bb, i);
    const pos = (r > 0 ? r : 0) + (g > 0 ? g : 0) + (bl > 0 ? bl : 0);
    const neg = (r < 0 ? r : 0) + (g < 0 ? g : 0) + (bl < 0 ? bl : 0);
    const margin = 1e-5 * (1 + pos - neg + abs<f64>(c));
    store<u8>(decided + <usize>i, c + pos + margin < lo ? 0 : c + neg - margin > hi ? 1 : UNDECIDED);
  }
  memory.fill(t, 0, <usize>(w * h) << 2);
  let slot0 = -1;
  let slot1 = -1;
  for (let y = 0; y < h; y++) {
    const ry0 = load<i32>(ya + (<usize>y << 2));
    const ry1 = load<i32>(yb + (<usize>y << 2));
    const ra = ry0 * lw;
    const rb = ry1 * lw;
    let open = false;
    for (let x = 0; x < lw; x++) {
      const v = load<u8>(decided + <usize>(ra + x));
      const bv: u8 = v == load<u8>(decided + <usize>(rb + x)) ? v : UNDECIDED;
      store<u8>(both + <usize>x, bv);
      if (bv != 0) open = true;
    }
    if (!open) continue; // the whole row is 0 (already)
    const row = y * w;
    let fetched = false;
    let tp: usize = 0;
    let bt: usize = 0;
    const ty = load<f64>(yt + (<usize>y << 3));
    for (let x = 0; x < w; x++) {
      const i = row + x;
      if (inside != 0 && load<u8>(inside + <usize>i) == 0) continue;
      const c = load<u8>(both + <usize>load<i32>(xa + (<usize>x << 2)));
      if (c != UNDECIDED && c == load<u8>(both + <usize>load<i32>(xb + (<usize>x << 2)))) {
        store<f32>(t + (<usize>i << 2), <f32>c);
        continue;
      }
      if (!fetched) {
        // The interpolated coefficient rows of ry0 and ry1, each kept in the slot of its parity.
        tp = slots + (<usize>((ry0 & 1) * 4 * w) << 3);
        if ((ry0 & 1 ? slot1 : slot0) != ry0) {
          interpolateRow(aR, aG, aB, bb, ry0 * lw, xa, xb, xt, w, tp);
          if (ry0 & 1) slot1 = ry0;
          else slot0 = ry0;
        }
        bt = slots + (<usize>((ry1 & 1) * 4 * w) << 3);
        if ((ry1 & 1 ? slot1 : slot0) != ry1) {
          interpolateRow(aR, aG, aB, bb, ry1 * lw, xa, xb, xt, w, bt);
          if (ry1 & 1) slot1 = ry1;
          else slot0 = ry1;
        }
        fetched = true;
      }
      const tR = load<f64>(tp + (<usize>x << 3));
      const tG = load<f64>(tp + (<usize>(w + x) << 3));
      const tB = load<f64>(tp + (<usize>(2 * w + x) << 3));
      const tb = load<f64>(tp + (<usize>(3 * w + x) << 3));
      const vR = <f64><f32>(tR + (load<f64>(bt + (<usize>x << 3)) - tR) * ty);
      const vG = <f64><f32>(tG + (load<f64>(bt + (<usize>(w + x) << 3)) - tG) * ty);
      const vB = <f64><f32>(tB + (load<f64>(bt + (<usize>(2 * w + x) << 3)) - tB) * ty);
      const vb = <f64><f32>(tb + (load<f64>(bt + (<usize>(3 * w + x) << 3)) - tb) * ty);
      const l = prob != 0 && i >= unsureFrom && f32at(prob, i) < unsureBelow ? unsureLo : lo;
      let s = (<f64><f32>(vR * f32at(R, i) + vG * f32at(G, i) + vB * f32at(B, i) + vb) - l) / (hi - l);
      s = s < 0 ? 0 : s > 1 ? 1 : s;
      store<f32>(t + (<usize>i << 2), <f32>(s * s * (3 - 2 * s)));
    }
  }
}

/** 2x2 mean of a float plane (odd edges average what exists) into out (ceil(w/2) x ceil(h/2)). */
export function halve(src: usize, width: i32, height: i32, out: usize): void {
  const w2 = (width + 1) >> 1;
  const h2 = (height + 1) >> 1;
  for (let y = 0; y < h2; y++) {
    const y0 = 2 * y;
    const y1 = min(height - 1, y0 + 1);
    for (let x = 0; x < w2; x++) {
      const x0 = 2 * x;
      const x1 = min(width - 1, x0 + 1);
      const v = 0.25 * (f32at(src, y0 * width + x0) + f32at(src, y0 * width + x1) + f32at(src, y1 * width + x0) + f32at(src, y1 * width + x1));
      store<f32>(out + (<usize>(y * w2 + x) << 2), <f32>v);
    }
  }
}

@inline export function planeAt(scratch: usize, plane: usize, k: i32): usize {
  return scratch + <usize>k * plane;
}

/** o = a * b per value, rounded to float32 (background.ts, product). */
function multiply(a: usize, b: usize, n: i32, o: usize): void {
  for (let i = 0; i < n; i++) store<f32>(o + (<usize>i << 2), <f32>(f32at(a, i) * f32at(b, i)));
}

/** boxMean of a w x h plane into out (tmp, col: scratch). */
export function box(src: usize, w: i32, h: i32, r: i32, out: usize, tmp: usize, col: usize): void {
  boxRows(src, w, h, r, tmp);
  boxColumns(tmp, w, h, r, out, col);
}

/** guidedCoefficients' scratch: 31 half-resolution f32 planes (halved inputs, products, means, a and b, a box tmp) and a box column. */
export function guidedScratchBytes(w: i32, h: i32): i32 {
  const lw = (w + 1) >> 1;
  return 31 * lw * ((h + 1) >> 1) * 4 + lw * 8;
}

/**
 * The colour guided filter's linear coefficients at half resolution (background.ts,
 * guidedFilterCoefficients; He & Sun's fast variant): the guide's R, G, B planes and the mask p
 * (w x h f32) halved, their window means (radius rl) and those of the six guide products and
 * three guide-mask products, the 3x3 covariance solve per cell (eps on the diagonal), and the
 * window means of a and b, into out: four planes aR, aG, aB, b of ceil(w/2) x ceil(h/2).
 * scratch: guidedScratchBytes(w, h).
 */
export function guidedCoefficients(R: usize, G: usize, B: usize, p: usize, w: i32, h: i32, rl: i32, eps: f64, out: usize, scratch: usize): void {
  const lw = (w + 1) >> 1;
  const lh = (h + 1) >> 1;
  const ln = lw * lh;
  const plane = <usize>ln << 2;
  // 0-3: halved R, G, B, p; 4-12: products; 13-25: their means; 26-29: a, b; 30: box tmp; then col.
  halve(R, w, h, planeAt(scratch, plane, 0));
  halve(G, w, h, planeAt(scratch, plane, 1));
  halve(B, w, h, planeAt(scratch, plane, 2));
  halve(p, w, h, planeAt(scratch, plane, 3));
  multiply(planeAt(scratch, plane, 0), planeAt(scratch, plane, 3), ln, planeAt(scratch, plane, 4));
  multiply(planeAt(scratch, plane, 1), planeAt(scratch, plane, 3), ln, planeAt(scratch, plane, 5));
  multiply(planeAt(scratch, plane, 2), planeAt(scratch, plane, 3), ln, planeAt(scratch, plane, 6));
  multiply(planeAt(scratch, plane, 0), planeAt(scratch, plane, 0), ln, planeAt(scratch, plane, 7));
  multiply(planeAt(scratch, plane, 0), planeAt(scratch, plane, 1), ln, planeAt(scratch, plane, 8));
  multiply(planeAt(scratch, plane, 0), planeAt(scratch, plane, 2), ln, planeAt(scratch, plane, 9));
  multiply(planeAt(scratch, plane, 1), planeAt(scratch, plane, 1), ln, planeAt(scratch, plane, 10));
  multiply(planeAt(scratch, plane, 1), planeAt(scratch, plane, 2), ln, planeAt(scratch, plane, 11));
  multiply(planeAt(scratch, plane, 2), planeAt(scratch, plane, 2), ln, planeAt(scratch, plane, 12));
  const tmp = planeAt(scratch, plane, 30);
  const col = planeAt(scratch, plane, 31);
  for (let k = 0; k < 13; k++) box(planeAt(scratch, plane, k), lw, lh, rl, planeAt(scratch, plane, 13 + k), tmp, col);
  for (let i = 0; i < ln; i++) { // window means (planes 13-25) of R, G, B, p, Rp, Gp, Bp, RR, RG, RB, GG, GB, BB
    const mr = f32at(planeAt(scratch, plane, 13), i);
    const mg = f32at(planeAt(scratch, plane, 14), i);
    const mb = f32at(planeAt(scratch, plane, 15), i);
    const mp = f32at(planeAt(scratch, plane, 16), i);
    const cr = f32at(planeAt(scratch, plane, 17), i) - mr * mp;
    const cg = f32at(planeAt(scratch, plane, 18), i) - mg * mp;
    const cb = f32at(planeAt(scratch, plane, 19), i) - mb * mp;
    const rr = f32at(planeAt(scratch, plane, 20), i) - mr * mr + eps;
    const rg = f32at(planeAt(scratch, plane, 21), i) - mr * mg;
    const rb = f32at(planeAt(scratch, plane, 22), i) - mr * mb;
    const gg = f32at(planeAt(scratch, plane, 23), i) - mg * mg + eps;
    const gb = f32at(planeAt(scratch, plane, 24), i) - mg * mb;
    const b2 = f32at(planeAt(scratch, plane, 25), i) - mb * mb + eps;
    // inverse of the symmetric 3x3 covariance matrix (adjugate / determinant)
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
    const o = <usize>i << 2;
    store<f32>(planeAt(scratch, plane, 26) + o, <f32>ar);
    store<f32>(planeAt(scratch, plane, 27) + o, <f32>ag);
    store<f32>(planeAt(scratch, plane, 28) + o, <f32>ab);
    store<f32>(planeAt(scratch, plane, 29) + o, <f32>(mp - ar * mr - ag * mg - ab * mb));
  }
  for (let k = 0; k < 4; k++) box(planeAt(scratch, plane, 26 + k), lw, lh, rl, out + <usize>k * plane, tmp, col);
}

