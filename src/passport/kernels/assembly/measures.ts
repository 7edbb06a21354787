// The halo measure's tables and ring count, and the enhancement's statistics.
import { f32at } from './common';

/**
 * The halo measure's summed-area tables (halo.ts): nine interleaved i32 planes, entry
 * ((y * (w + 1)) + x) * 9 + k = sum of plane k over [0, x) x [0, y). source is read through the
 * three 256-entry tables at luts (R, G, B one after the other).
 */
export function summedAreaTables(
  source: usize, sc: i32, luts: usize, output: usize, oc: i32, alpha: usize, inside: usize, w: i32, h: i32, t: usize,
): void {
  const P = 9;
  const stride = (w + 1) * P;
  memory.fill(t, 0, <usize>stride << 2);
  for (let y = 0; y < h; y++) {
    let n0: i32 = 0;
    let n1: i32 = 0;
    let n2: i32 = 0;
    let s3: i32 = 0;
    let s4: i32 = 0;
    let s5: i32 = 0;
    let s6: i32 = 0;
    let s7: i32 = 0;
    let s8: i32 = 0;
    const up = t + (<usize>(y * stride) << 2);
    const cur = up + (<usize>stride << 2);
    memory.fill(cur, 0, P << 2);
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const a = <f64>load<f32>(alpha + (<usize>i << 2));
      if (a < 0.5) n0++;
      if (load<u8>(inside + <usize>i) != 0 && a < 0.05) {
        n1++;
        const j = source + <usize>(i * sc);
        s3 += <i32>load<u8>(luts + <usize>load<u8>(j));
        s4 += <i32>load<u8>(luts + 256 + <usize>load<u8>(j, 1));
        s5 += <i32>load<u8>(luts + 512 + <usize>load<u8>(j, 2));
      }
      if (a >= 0.98) {
        n2++;
        const j = output + <usize>(i * oc);
        s6 += <i32>load<u8>(j);
        s7 += <i32>load<u8>(j, 1);
        s8 += <i32>load<u8>(j, 2);
      }
      const o = cur + (<usize>((x + 1) * P) << 2);
      const p = up + (<usize>((x + 1) * P) << 2);
      store<i32>(o, load<i32>(p) + n0);
      store<i32>(o, load<i32>(p, 4) + n1, 4);
      store<i32>(o, load<i32>(p, 8) + n2, 8);
      store<i32>(o, load<i32>(p, 12) + s3, 12);
      store<i32>(o, load<i32>(p, 16) + s4, 16);
      store<i32>(o, load<i32>(p, 20) + s5, 20);
      store<i32>(o, load<i32>(p, 24) + s6, 24);
      store<i32>(o, load<i32>(p, 28) + s7, 28);
      store<i32>(o, load<i32>(p, 32) + s8, 32);
    }
  }
}


/**
 * The enhancement's statistics (enhance.ts, levelStats): histograms (u32 x 256 each) of the
 * per-pixel min and max channel over the pixels whose weight (f32; 0 = no weights) is >= 0.5,
 * and [counted, neutral, R, G, B sums of the near-neutral pixels] as f64 into stats.
 */
export function levelStats(d: usize, n: i32, weight: usize, maxChroma: i32, histMin: usize, histMax: usize, stats: usize): void {
  memory.fill(histMin, 0, 1024);
  memory.fill(histMax, 0, 1024);
  let counted: i32 = 0;
  let neutral: i32 = 0;
  let sr: f64 = 0;
  let sg: f64 = 0;
  let sb: f64 = 0;
  for (let i = 0; i < n; i++) {
    const j = d + <usize>(i * 3);
    const r = <i32>load<u8>(j);
    const g = <i32>load<u8>(j, 1);
    const b = <i32>load<u8>(j, 2);
    const mx = max(r, max(g, b));
    const mn = min(r, min(g, b));
    if (weight == 0 || <f64>load<f32>(weight + (<usize>i << 2)) >= 0.5) {
      const pm = histMin + (<usize>mn << 2);
      store<u32>(pm, load<u32>(pm) + 1);
      const px = histMax + (<usize>mx << 2);
      store<u32>(px, load<u32>(px) + 1);
      counted++;
    }
    if (mx - mn < maxChroma && mx < 250 && mn > 30) {
      neutral++;
      sr += <f64>r;
      sg += <f64>g;
      sb += <f64>b;
    }
  }
  store<f64>(stats, <f64>counted);
  store<f64>(stats, <f64>neutral, 8);
  store<f64>(stats, sr, 16);
  store<f64>(stats, sg, 24);
  store<f64>(stats, sb, 32);
}


/** Euclidean length of (a, b, c). */
@inline function length3(a: f64, b: f64, c: f64): f64 {
  return sqrt<f64>(a * a + b * b + c * c);
}

@inline function windowSum(t: usize, a: i32, b: i32, c: i32, d: i32, k: i32): i32 {
  return load<i32>(t + (<usize>(a + k) << 2)) - load<i32>(t + (<usize>(b + k) << 2)) - load<i32>(t + (<usize>(c + k) << 2)) + load<i32>(t + (<usize>(d + k) << 2));
}

/**
 * The halo measure's blend (halo.ts) over the tables summedAreaTables wrote at t: for each ring
 * pixel (person side, alpha >= minAlpha, within ringR of a pixel with alpha < 0.5) the share of
 * the old background its colour C carries, C = N + a (F - N) + b (O - N) with a, b >= 0,
 * a + b <= 1 (F, O: the window means of the person and of the old background, radius r; N: the new
 * background), least squares; 0 when C lies within `explained` of a person / new-background mix,
 * or when O is within `explained` of N (a rim of it would not show) or the window has too little
 * of either. blend[i] = -1 off the ring.
 */
export function ringBlend(
  t: usize, output: usize, oc: i32, alpha: usize, inside: usize, w: i32, h: i32, ringR: i32, r: i32,
  minAlpha: f64, explained: f64, minShare: f64, nR: f64, nG: f64, nB: f64, blend: usize,
): void {
  const P = 9;
  const stride = (w + 1) * P;
  for (let y = 0; y < h; y++) {
    const n0 = max(0, y - ringR) * stride;
    const n1 = min(h, y + ringR + 1) * stride;
    const m0 = max(0, y - r) * stride;
    const m1 = min(h, y + r + 1) * stride;
    const rows = <f64>(min(h, y + r + 1) - max(0, y - r));
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const out = blend + (<usize>i << 2);
      store<f32>(out, -1);
      if (load<u8>(inside + <usize>i) == 0 || <f64>load<f32>(alpha + (<usize>i << 2)) < minAlpha) continue;
      if (windowSum(t, n1 + min(w, x + ringR + 1) * P, n0 + min(w, x + ringR + 1) * P, n1 + max(0, x - ringR) * P, n0 + max(0, x - ringR) * P, 0) <= 0) continue;
      store<f32>(out, 0);
      const wx0 = max(0, x - r) * P;
      const wx1 = min(w, x + r + 1) * P;
      const area = rows * <f64>((wx1 - wx0) / P);
      const oCount = <f64>windowSum(t, m1 + wx1, m0 + wx1, m1 + wx0, m0 + wx0, 1);
      const fCount = <f64>windowSum(t, m1 + wx1, m0 + wx1, m1 + wx0, m0 + wx0, 2);
      if (oCount < minShare * area || fCount < minShare * area) continue;
      // v = O - N, u = F - N, c = C - N
      const v0 = <f64>windowSum(t, m1 + wx1, m0 + wx1, m1 + wx0, m0 + wx0, 3) / oCount - nR;
      const v1 = <f64>windowSum(t, m1 + wx1, m0 + wx1, m1 + wx0, m0 + wx0, 4) / oCount - nG;
      const v2 = <f64>windowSum(t, m1 + wx1, m0 + wx1, m1 + wx0, m0 + wx0, 5) / oCount - nB;
      const u0 = <f64>windowSum(t, m1 + wx1, m0 + wx1, m1 + wx0, m0 + wx0, 6) / fCount - nR;
      const u1 = <f64>windowSum(t, m1 + wx1, m0 + wx1, m1 + wx0, m0 + wx0, 7) / fCount - nG;
      const u2 = <f64>windowSum(t, m1 + wx1, m0 + wx1, m1 + wx0, m0 + wx0, 8) / fCount - nB;
      const j = output + <usize>(i * oc);
      const c0 = <f64>load<u8>(j) - nR;
      const c1 = <f64>load<u8>(j, 1) - nG;
      const c2 = <f64>load<u8>(j, 2) - nB;
      const vv = v0 * v0 + v1 * v1 + v2 * v2;
      if (vv <= explained * explained) continue;
      const uu = u0 * u0 + u1 * u1 + u2 * u2;
      const uv = u0 * v0 + u1 * v1 + u2 * v2;
      const uc = u0 * c0 + u1 * c1 + u2 * c2;
      const vc = v0 * c0 + v1 * c1 + v2 * c2;
      // Without the old background: the nearest person / new-background mix (a in 0..1).
      let a0 = uu > 0 ? uc / uu : 0;
      a0 = a0 < 0 ? 0 : a0 > 1 ? 1 : a0;
      if (length3(c0 - a0 * u0, c1 - a0 * u1, c2 - a0 * u2) <= explained) continue;
      // With it: the least-squares (a, b), kept inside the triangle a, b >= 0, a + b <= 1.
      const det = uu * vv - uv * uv;
      let a = det > 1e-6 * uu * vv ? (uc * vv - vc * uv) / det : 0;
      let b = det > 1e-6 * uu * vv ? (vc * uu - uc * uv) / det : vc / vv;
      if (a < 0) { a = 0; b = vc / vv; }
      if (b < 0) b = 0;
      if (a + b > 1) {
        // on the edge between F and O: C - O = s (F - O)
        const d0 = u0 - v0;
        const d1 = u1 - v1;
        const d2 = u2 - v2;
        const dd = d0 * d0 + d1 * d1 + d2 * d2;
        let s = dd > 0 ? (d0 * (c0 - v0) + d1 * (c1 - v1) + d2 * (c2 - v2)) / dd : 0;
        s = s < 0 ? 0 : s > 1 ? 1 : s;
        b = 1 - s;
      }
      store<f32>(out, <f32>(b < 0 ? 0 : b > 1 ? 1 : b));
    }
  }
}
