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

/** Distance from colour p to the segment a-b (halo.ts, distanceToSegment). */
function distanceToSegment(p0: f64, p1: f64, p2: f64, a0: f64, a1: f64, a2: f64, b0: f64, b1: f64, b2: f64): f64 {
  const d0 = b0 - a0;
  const d1 = b1 - a1;
  const d2 = b2 - a2;
  const len2 = d0 * d0 + d1 * d1 + d2 * d2;
  let t: f64 = len2 > 0 ? ((p0 - a0) * d0 + (p1 - a1) * d1 + (p2 - a2) * d2) / len2 : 0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  return length3(p0 - a0 - t * d0, p1 - a1 - t * d1, p2 - a2 - t * d2);
}

@inline function windowSum(t: usize, a: i32, b: i32, c: i32, d: i32, k: i32): i32 {
  return load<i32>(t + (<usize>(a + k) << 2)) - load<i32>(t + (<usize>(b + k) << 2)) - load<i32>(t + (<usize>(c + k) << 2)) + load<i32>(t + (<usize>(d + k) << 2));
}

/**
 * The halo measure's count (halo.ts, countRing) over the tables summedAreaTables wrote at t: ring
 * pixels (person side, within ringR of a non-person pixel) and, among them, those that look like
 * the old background (window radius r); counts[0] = ring, counts[1] = halo (i32).
 */
export function countRing(
  t: usize, output: usize, oc: i32, alpha: usize, inside: usize, w: i32, h: i32, ringR: i32, r: i32,
  minAlpha: f64, oldDistance: f64, newDistance: f64, minShare: f64, bgR: f64, bgG: f64, bgB: f64, counts: usize,
): void {
  const P = 9;
  const stride = (w + 1) * P;
  let ring: i32 = 0;
  let halo: i32 = 0;
  for (let y = 0; y < h; y++) {
    const n0 = max(0, y - ringR) * stride;
    const n1 = min(h, y + ringR + 1) * stride;
    const wy0 = max(0, y - r);
    const wy1 = min(h, y + r + 1);
    const m0 = wy0 * stride;
    const m1 = wy1 * stride;
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (load<u8>(inside + <usize>i) == 0 || <f64>load<f32>(alpha + (<usize>i << 2)) < minAlpha) continue;
      const nx0 = max(0, x - ringR) * P;
      const nx1 = min(w, x + ringR + 1) * P;
      if (windowSum(t, n1 + nx1, n0 + nx1, n1 + nx0, n0 + nx0, 0) <= 0) continue; // no non-person pixel within reach
      ring++;
      const wx0 = max(0, x - r);
      const wx1 = min(w, x + r + 1);
      const area = <f64>((wx1 - wx0) * (wy1 - wy0));
      const a = m1 + wx1 * P;
      const b = m0 + wx1 * P;
      const c = m1 + wx0 * P;
      const d = m0 + wx0 * P;
      const bgCount = <f64>windowSum(t, a, b, c, d, 1);
      if (bgCount < minShare * area) continue; // no old background nearby to compare with
      const j = output + <usize>(i * oc);
      const R = <f64>load<u8>(j);
      const G = <f64>load<u8>(j, 1);
      const B = <f64>load<u8>(j, 2);
      const inv = 1 / bgCount;
      const dOld = length3(R - <f64>windowSum(t, a, b, c, d, 3) * inv, G - <f64>windowSum(t, a, b, c, d, 4) * inv, B - <f64>windowSum(t, a, b, c, d, 5) * inv);
      const dNew = length3(R - bgR, G - bgG, B - bgB);
      if (dOld > oldDistance || dNew < newDistance) continue;
      const fgCount = <f64>windowSum(t, a, b, c, d, 2);
      if (fgCount > minShare * area) {
        const f = 1 / fgCount;
        if (distanceToSegment(R, G, B, bgR, bgG, bgB, <f64>windowSum(t, a, b, c, d, 6) * f, <f64>windowSum(t, a, b, c, d, 7) * f, <f64>windowSum(t, a, b, c, d, 8) * f) <= dOld) continue;
      }
      halo++;
    }
  }
  store<i32>(counts, ring);
  store<i32>(counts, halo, 4);
}
