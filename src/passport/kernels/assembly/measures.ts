// The halo measure's tables and ring count, and the enhancement's statistics.

/** The person's colour groups in the halo measure: by luma, below 64, below 144, the rest. */
const GROUPS: i32 = 3;
/** Planes of the halo measure's tables: [< 0.5 count, old count, old R, G, B, then per group count, R, G, B]. */
const PLANES: i32 = 5 + 4 * GROUPS;

/**
 * The halo measure's summed-area tables (halo.ts): PLANES interleaved i32 planes, entry
 * ((y * (w + 1)) + x) * PLANES + k = sum of plane k over [0, x) x [0, y). source is read through
 * the three 256-entry tables at luts (R, G, B one after the other); the person (alpha >= 0.98,
 * no alpha < 0.5 within ringR: beyond the ring) from output, by colour group.
 */
export function summedAreaTables(
  source: usize, sc: i32, luts: usize, output: usize, oc: i32, alpha: usize, inside: usize, w: i32, h: i32, ringR: i32, t: usize,
): void {
  const stride = (w + 1) * PLANES;
  memory.fill(t, 0, <usize>stride << 2);
  for (let pass = 0; pass < 2; pass++) { // plane 0 first: the person's pixels are found with it
    for (let y = 0; y < h; y++) {
      const up = t + (<usize>(y * stride) << 2);
      memory.fill(up + (<usize>stride << 2), 0, pass == 0 ? <usize>(PLANES << 2) : <usize>0);
      for (let x = 0; x < w; x++) {
        const i = y * w + x;
        const p = up + (<usize>((x + 1) * PLANES) << 2);
        const o = p + (<usize>stride << 2);
        // entry (x + 1) = above (x + 1) + this row's sums so far (entry x - above x) + this pixel
        for (let k = pass; k < (pass == 0 ? 1 : PLANES); k++) {
          const q = <usize>k << 2;
          store<i32>(o + q, load<i32>(p + q) + load<i32>(o - (PLANES << 2) + q) - load<i32>(p - (PLANES << 2) + q));
        }
        const a = <f64>load<f32>(alpha + (<usize>i << 2));
        if (pass == 0) {
          if (a < 0.5) add(o, 0, 1, 0, 0, 0);
        } else if (load<u8>(inside + <usize>i) != 0 && a < 0.05) {
          const j = source + <usize>(i * sc);
          add(o, 1, load<u8>(luts + <usize>load<u8>(j)), load<u8>(luts + 256 + <usize>load<u8>(j, 1)), load<u8>(luts + 512 + <usize>load<u8>(j, 2)), 1);
        } else if (a >= 0.98 && box(t, w, h, x, y, ringR, 0) == 0) {
          const j = output + <usize>(i * oc);
          const y8 = (54 * <i32>load<u8>(j) + 183 * <i32>load<u8>(j, 1) + 19 * <i32>load<u8>(j, 2)) >> 8;
          add(o, 5 + 4 * (y8 < 64 ? 0 : y8 < 144 ? 1 : 2), load<u8>(j), load<u8>(j, 1), load<u8>(j, 2), 1);
        }
      }
    }
  }
}

/** Adds a count and (when `rgb`) a colour to the planes from k at entry o. */
@inline function add(o: usize, k: i32, r: i32, g: i32, b: i32, rgb: i32): void {
  for (let m = 0; m <= 3 * rgb; m++) {
    const q = o + (<usize>(k + m) << 2);
    store<i32>(q, load<i32>(q) + (m == 0 ? 1 : m == 1 ? r : m == 2 ? g : b));
  }
}

/** Sum of plane k of the tables over the window of radius d around (x, y). */
@inline function box(t: usize, w: i32, h: i32, x: i32, y: i32, d: i32, k: i32): i32 {
  const stride = (w + 1) * PLANES;
  const y0 = max(0, y - d) * stride;
  const y1 = min(h, y + d + 1) * stride;
  const x0 = max(0, x - d) * PLANES + k;
  const x1 = min(w, x + d + 1) * PLANES + k;
  return load<i32>(t + (<usize>(y1 + x1) << 2)) - load<i32>(t + (<usize>(y0 + x1) << 2)) - load<i32>(t + (<usize>(y1 + x0) << 2)) + load<i32>(t + (<usize>(y0 + x0) << 2));
}

/** Bytes of the halo measure's tables (summedAreaTables) for a w x h photo, with ringBlend's scratch after them. */
export function haloTableBytes(w: i32, h: i32): usize {
  return (<usize>((w + 1) * (h + 1) * PLANES) << 2) + 24 * (GROUPS + 4);
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

/** Colour vectors (three f64 at a pointer): the share s in 0..1 of the point of p..q nearest c, and its distance. */
@inline function along(p: usize, q: usize, c: usize): f64 {
  let dd: f64 = 0;
  let dc: f64 = 0;
  for (let k = 0; k < 24; k += 8) {
    const d = load<f64>(q + k) - load<f64>(p + k);
    dd += d * d;
    dc += d * (load<f64>(c + k) - load<f64>(p + k));
  }
  return dd > 0 ? max(0, min(1, dc / dd)) : 0;
}

@inline function toSegment(p: usize, q: usize, c: usize): f64 {
  const s = along(p, q, c);
  let e: f64 = 0;
  for (let k = 0; k < 24; k += 8) {
    const d = load<f64>(c + k) - load<f64>(p + k) - s * (load<f64>(q + k) - load<f64>(p + k));
    e += d * d;
  }
  return sqrt<f64>(e);
}

/** The share b of o in c = a f + b o (vectors from the new background), a, b >= 0, a + b <= 1, least squares;
 * -1 when that mix stays farther than `fit` from c (a colour of neither: no evidence of o). */
@inline function oldShare(f: usize, o: usize, c: usize, fit: f64): f64 {
  let uu: f64 = 0, vv: f64 = 0, uv: f64 = 0, uc: f64 = 0, vc: f64 = 0, cc: f64 = 0;
  for (let k = 0; k < 24; k += 8) {
    const u = load<f64>(f + k);
    const v = load<f64>(o + k);
    const x = load<f64>(c + k);
    uu += u * u;
    vv += v * v;
    uv += u * v;
    uc += u * x;
    vc += v * x;
    cc += x * x;
  }
  const det = uu * vv - uv * uv;
  let a = det > 1e-6 * uu * vv ? (uc * vv - vc * uv) / det : 0;
  let b = det > 1e-6 * uu * vv ? (vc * uu - uc * uv) / det : vc / vv;
  if (a < 0) { a = 0; b = vc / vv; }
  if (b < 0) { b = 0; a = uc / uu; }
  if (a + b > 1) { a = along(o, f, c); b = 1 - a; } // on the edge between O and F
  a = max(0, min(1, a));
  b = max(0, min(1, b));
  const e = cc - 2 * a * uc - 2 * b * vc + a * a * uu + b * b * vv + 2 * a * b * uv; // |c - a f - b o|^2
  return e <= fit * fit ? b : -1;
}

/**
 * The halo measure's blend (halo.ts) over the tables summedAreaTables wrote at t: for each ring
 * pixel (person side, alpha >= minAlpha, within ringR of a pixel with alpha < 0.5) the share of
 * the old background its colour C carries. The person is its colour groups' window means F_k
 * (radius r, each with at least minShare of the window), O the old background's, N the new
 * background. 0 when C lies within `explained` of a mix of N and one F_k or of two F_k (a person
 * colour, hair against skin, an edge over the new background), or when O is within `explained` of
 * N (a rim of it would not show) or the window has too little of O or of the person, or when O and
 * C both lie within `explained` of the line from black to F_0 (the dark group's own shade); else the
 * least b of C = N + a (F_k - N) + b (O - N) over the groups whose mix lies within `explained` of C
 * (0 when none does). blend[i] = -1 off the ring.
 */
export function ringBlend(
  t: usize, output: usize, oc: i32, alpha: usize, inside: usize, w: i32, h: i32, ringR: i32, r: i32,
  minAlpha: f64, explained: f64, minShare: f64, nR: f64, nG: f64, nB: f64, blend: usize,
): void {
  // scratch: F_k - N (NaN: too few in the window), O - N, C - N, zero (N - N), black - N
  const f = t + haloTableBytes(w, h) - 24 * (GROUPS + 4);
  const O = f + 24 * GROUPS;
  const C = O + 24;
  const N = C + 24;
  const K = N + 24;
  memory.fill(N, 0, 24);
  for (let k = 0; k < 3; k++) store<f64>(K + 8 * k, -(k == 0 ? nR : k == 1 ? nG : nB));
  for (let i = 0; i < w * h; i++) {
    const x = i % w;
    const y = i / w;
    const out = blend + (<usize>i << 2);
    store<f32>(out, -1);
    if (load<u8>(inside + <usize>i) == 0 || <f64>load<f32>(alpha + (<usize>i << 2)) < minAlpha || box(t, w, h, x, y, ringR, 0) <= 0) continue;
    store<f32>(out, 0);
    const area = <f64>((min(h, y + r + 1) - max(0, y - r)) * (min(w, x + r + 1) - max(0, x - r)));
    const oCount = <f64>box(t, w, h, x, y, r, 1);
    if (oCount < minShare * area) continue;
    for (let k = 0; k < 3; k++) {
      const n = k == 0 ? nR : k == 1 ? nG : nB;
      store<f64>(O + 8 * k, <f64>box(t, w, h, x, y, r, 2 + k) / oCount - n);
      store<f64>(C + 8 * k, <f64>load<u8>(output + <usize>(i * oc + k)) - n);
      for (let g = 0; g < GROUPS; g++) {
        const count = <f64>box(t, w, h, x, y, r, 5 + 4 * g);
        store<f64>(f + 24 * g + 8 * k, count < minShare * area ? NaN : <f64>box(t, w, h, x, y, r, 6 + 4 * g + k) / count - n);
      }
    }
    if (toSegment(N, N, O) <= explained) continue; // a rim of O would not show
    if (!isNaN(load<f64>(f)) && toSegment(K, f, O) <= explained && toSegment(K, f, C) <= explained) continue;
    let b: f64 = 2; // none of the groups in the window, or none whose mix with O fits: 0
    for (let g = 0; g < GROUPS && b > 0; g++) {
      const fg = f + 24 * g;
      if (isNaN(load<f64>(fg))) continue;
      let person = toSegment(N, fg, C) <= explained;
      for (let l = 0; l < g; l++) if (!isNaN(load<f64>(f + 24 * l)) && toSegment(f + 24 * l, fg, C) <= explained) person = true;
      const share = person ? 0 : oldShare(fg, O, C, explained);
      if (share >= 0) b = min(b, share);
    }
    if (b <= 1) store<f32>(out, <f32>b);
  }
}
