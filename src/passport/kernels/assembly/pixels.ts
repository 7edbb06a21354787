// Pixel kernels of the passport pipeline, in AssemblyScript (compiled to kernels.wasm, with its
// bindings, by `npm run build:wasm`). Only kernels measured at least 1.5x faster than the best
// TypeScript or sharp version of their step are here (docs/passport.md, Speed). Arithmetic in f64,
// float32 stores rounded as Float32Array's, 8-bit stores as Uint8ClampedArray's (round half to even,
// clamp). Pointers are byte offsets into this module's memory, which ../pixels.ts fills and reads.

/** Where the caller may place its buffers (after this module's own static data). */
export function heapBase(): usize {
  return __heap_base;
}

@inline function clamp8(x: f64): u8 {
  // Uint8ClampedArray: NaN and negatives -> 0, above 255 -> 255, else round half to even.
  return x > 0 ? (x < 255 ? <u8>nearest<f64>(x) : 255) : 0;
}

@inline function f32at(p: usize, i: i32): f64 {
  return <f64>load<f32>(p + (<usize>i << 2));
}

/** boxMean's horizontal pass (background.ts): window means along each row of src into tmp (float32 planes). */
export function boxRows(src: usize, width: i32, height: i32, r: i32, tmp: usize): void {
  const full: f64 = 1.0 / <f64>(2 * r + 1);
  const xa = min(r + 1, width);
  const xb = max(xa, width - r - 1);
  const lim = min(r, width - 1);
  for (let y = 0; y < height; y++) {
    const s = src + (<usize>(y * width) << 2);
    const t = tmp + (<usize>(y * width) << 2);
    let acc: f64 = 0;
    for (let x = 0; x <= lim; x++) acc += f32at(s, x);
    let x = 0;
    for (; x < xa; x++) {
      store<f32>(t + (<usize>x << 2), <f32>(acc / <f64>(min(width - 1, x + r) - max(0, x - r) + 1)));
      if (x + r + 1 < width) acc += f32at(s, x + r + 1);
      if (x - r >= 0) acc -= f32at(s, x - r);
    }
    let pa = s + (<usize>(x + r + 1) << 2);
    let ps = s + (<usize>(x - r) << 2);
    let pt = t + (<usize>x << 2);
    for (; x < xb; x++) {
      store<f32>(pt, <f32>(acc * full));
      acc += <f64>load<f32>(pa) - <f64>load<f32>(ps);
      pa += 4;
      ps += 4;
      pt += 4;
    }
    for (; x < width; x++) {
      store<f32>(t + (<usize>x << 2), <f32>(acc / <f64>(min(width - 1, x + r) - max(0, x - r) + 1)));
      if (x - r >= 0) acc -= f32at(s, x - r);
    }
  }
}

/** boxMean's vertical pass: window means down each column of tmp into out; col: width f64 of scratch. */
export function boxColumns(tmp: usize, width: i32, height: i32, r: i32, out: usize, col: usize): void {
  memory.fill(col, 0, <usize>width << 3);
  const lim = min(r, height - 1);
  for (let y = 0; y <= lim; y++) {
    const t = tmp + (<usize>(y * width) << 2);
    for (let x = 0; x < width; x++) {
      const c = col + (<usize>x << 3);
      store<f64>(c, load<f64>(c) + f32at(t, x));
    }
  }
  for (let y = 0; y < height; y++) {
    const inv: f64 = 1.0 / <f64>(min(height - 1, y + r) - max(0, y - r) + 1);
    const o = out + (<usize>(y * width) << 2);
    const add = y + r + 1;
    const sub = y - r;
    if (add < height && sub >= 0) {
      const ta = tmp + (<usize>(add * width) << 2);
      const ts = tmp + (<usize>(sub * width) << 2);
      for (let x = 0; x < width; x++) {
        const cp = col + (<usize>x << 3);
        const c = load<f64>(cp);
        store<f32>(o + (<usize>x << 2), <f32>(c * inv));
        store<f64>(cp, c + f32at(ta, x) - f32at(ts, x));
      }
      continue;
    }
    for (let x = 0; x < width; x++) store<f32>(o + (<usize>x << 2), <f32>(load<f64>(col + (<usize>x << 3)) * inv));
    if (add < height) {
      const ta = tmp + (<usize>(add * width) << 2);
      for (let x = 0; x < width; x++) {
        const cp = col + (<usize>x << 3);
        store<f64>(cp, load<f64>(cp) + f32at(ta, x));
      }
    }
    if (sub >= 0) {
      const ts = tmp + (<usize>(sub * width) << 2);
      for (let x = 0; x < width; x++) {
        const cp = col + (<usize>x << 3);
        store<f64>(cp, load<f64>(cp) - f32at(ts, x));
      }
    }
  }
}

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

const UNDECIDED: u8 = 2;

/** One low row's four coefficient planes interpolated along x into buf (4 x w f64): background.ts, interpolateRow. */
function interpolateRow(aR: usize, aG: usize, aB: usize, bb: usize, r: i32, xa: usize, xb: usize, xt: usize, w: i32, buf: usize): void {
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
 * The tightened guided-filter output (background.ts, combineTightened): per half-resolution cell
 * whether no colour can bring its linear model onto the ramp [lo, hi] (decided 0 / 1, unless
 * !skipDecided), then t = smoothstep((q - lo) / (hi - lo)) with q = up(aR) R + up(aG) G + up(aB) B
 * + up(b) evaluated only where the cells a pixel interpolates disagree or are undecided; 0
 * outside `inside` (0: no such mask). Taps: bilinear upsampling along x (w) and y (h) as i32 i0,
 * i32 i1, f64 weight. Scratch: decided (lw x lh), both (lw), slots (2 x 4 x w f64).
 */
export function tighten(
  aR: usize, aG: usize, aB: usize, bb: usize, lw: i32, lh: i32,
  R: usize, G: usize, B: usize, w: i32, h: i32,
  xa: usize, xb: usize, xt: usize, ya: usize, yb: usize, yt: usize,
  lo: f64, hi: f64, inside: usize, skipDecided: bool,
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
  const span = hi - lo;
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
      let s = (<f64><f32>(vR * f32at(R, i) + vG * f32at(G, i) + vB * f32at(B, i) + vb) - lo) / span;
      s = s < 0 ? 0 : s > 1 ? 1 : s;
      store<f32>(t + (<usize>i << 2), <f32>(s * s * (3 - 2 * s)));
    }
  }
}

/** 2x2 mean of a float plane (odd edges average what exists) into out (ceil(w/2) x ceil(h/2)). */
function halve(src: usize, width: i32, height: i32, out: usize): void {
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

@inline function planeAt(scratch: usize, plane: usize, k: i32): usize {
  return scratch + <usize>k * plane;
}

/** o = a * b per value, rounded to float32 (background.ts, product). */
function multiply(a: usize, b: usize, n: i32, o: usize): void {
  for (let i = 0; i < n; i++) store<f32>(o + (<usize>i << 2), <f32>(f32at(a, i) * f32at(b, i)));
}

/** boxMean of a w x h plane into out (tmp, col: scratch). */
function box(src: usize, w: i32, h: i32, r: i32, out: usize, tmp: usize, col: usize): void {
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
  const mR = planeAt(scratch, plane, 13);
  const mG = planeAt(scratch, plane, 14);
  const mB = planeAt(scratch, plane, 15);
  const mP = planeAt(scratch, plane, 16);
  const mRP = planeAt(scratch, plane, 17);
  const mGP = planeAt(scratch, plane, 18);
  const mBP = planeAt(scratch, plane, 19);
  const vRR = planeAt(scratch, plane, 20);
  const vRG = planeAt(scratch, plane, 21);
  const vRB = planeAt(scratch, plane, 22);
  const vGG = planeAt(scratch, plane, 23);
  const vGB = planeAt(scratch, plane, 24);
  const vBB = planeAt(scratch, plane, 25);
  for (let i = 0; i < ln; i++) {
    const mr = f32at(mR, i);
    const mg = f32at(mG, i);
    const mb = f32at(mB, i);
    const mp = f32at(mP, i);
    const cr = f32at(mRP, i) - mr * mp;
    const cg = f32at(mGP, i) - mg * mp;
    const cb = f32at(mBP, i) - mb * mp;
    const rr = f32at(vRR, i) - mr * mr + eps;
    const rg = f32at(vRG, i) - mr * mg;
    const rb = f32at(vRB, i) - mr * mb;
    const gg = f32at(vGG, i) - mg * mg + eps;
    const gb = f32at(vGB, i) - mg * mb;
    const b2 = f32at(vBB, i) - mb * mb + eps;
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

/** background.ts' grow: `mask` (u8) grown by r pixels vertically or horizontally into out (zeroed here). */
function grow(mask: usize, w: i32, h: i32, r: i32, vertical: bool, out: usize): void {
  memory.fill(out, 0, <usize>(w * h));
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (load<u8>(mask + <usize>(y * w + x)) == 0) continue;
      if (vertical) {
        const y1 = min(h - 1, y + r);
        for (let yy = max(0, y - r); yy <= y1; yy++) store<u8>(out + <usize>(yy * w + x), 1);
      } else {
        const x0 = max(0, x - r);
        const x1 = min(w - 1, x + r);
        memory.fill(out + <usize>(y * w + x0), 1, <usize>(x1 - x0 + 1));
      }
    }
  }
}

/** The indices of the set pixels of mask (u8, n) into list (i32), in order; their count. */
function listSet(mask: usize, n: i32, list: usize): i32 {
  let k = 0;
  for (let i = 0; i < n; i++) {
    if (load<u8>(mask + <usize>i) != 0) {
      store<i32>(list + (<usize>k << 2), i);
      k++;
    }
  }
  return k;
}

/** Window sums (radius r) along x at the listed pixels, clipped at the borders: background.ts, sumAlongX. */
function sumAlongX(rows: usize, count: i32, w: i32, r: i32, src: usize, dst: usize): void {
  for (let k = 0; k < count; k++) {
    const i = load<i32>(rows + (<usize>k << 2));
    const x = i % w;
    let acc: f64 = 0;
    const end = i + min(r, w - 1 - x);
    for (let q = i - min(r, x); q <= end; q++) acc += f32at(src, q);
    store<f32>(dst + (<usize>i << 2), <f32>acc);
  }
}

/** The window sum at pixel i from the x-sums hs (background.ts, sumAlongY). */
@inline function sumAlongY(hs: usize, w: i32, h: i32, r: i32, i: i32): f64 {
  const y = i / w;
  let acc: f64 = 0;
  const end = i + min(r, h - 1 - y) * w;
  for (let q = i - min(r, y) * w; q <= end; q += w) acc += f32at(hs, q);
  return acc;
}

/** Pixels of pixel i's window inside the photo (background.ts, windowCount). */
@inline function windowCount(w: i32, h: i32, r: i32, i: i32): i32 {
  const x = i % w;
  const y = (i - x) / w;
  return (min(w - 1, x + r) - max(0, x - r) + 1) * (min(h - 1, y + r) - max(0, y - r) + 1);
}

/**
 * estimateForeground's scratch: three u8 masks (w x h, then aligned), three i32 index lists and
 * six f32 planes (w x h), eight half-resolution f32 planes, a box column (f64 per half-width).
 */
export function foregroundScratchBytes(w: i32, h: i32): i32 {
  const n = w * h;
  const lw = (w + 1) >> 1;
  return 3 * n + 16 + 9 * n * 4 + 8 * lw * ((h + 1) >> 1) * 4 + lw * 8;
}

/**
 * Foreground colours with the old background removed at the soft edge (background.ts,
 * estimateForeground: blur fusion, the wide pass at half resolution with radius r1, the narrow
 * pass at full resolution with radius r2 at the band 0 < alpha < 0.999 only). I: the photo's
 * R, G, B planes (0..1 f32); alpha (f32); out: the photo's RGB bytes, whose band pixels are
 * replaced. Taps: bilinear upsampling from half resolution along x (w) and y (h). scratch:
 * foregroundScratchBytes(w, h). Returns the band's pixel count.
 */
export function estimateForeground(
  R: usize, G: usize, B: usize, alpha: usize, w: i32, h: i32, r1: i32, r2: i32,
  xa: usize, xb: usize, xt: usize, ya: usize, yb: usize, yt: usize,
  out: usize, scratch: usize,
): i32 {
  const n = w * h;
  const lw = (w + 1) >> 1;
  const lh = (h + 1) >> 1;
  const ln = lw * lh;
  const nb = <usize>n;
  const fb = <usize>n << 2;
  const lb = <usize>ln << 2;
  // Layout: three u8 masks (n), three i32 lists (n), five f32 planes (n), meanA (n),
  // eight half-resolution f32 planes, then a box mean's tmp (ln) and col (lw f64).
  const bandMask = scratch;
  const rowsMask = bandMask + nb;
  const nearMask = rowsMask + nb;
  const band = (nearMask + nb + 15) & ~15;
  const rows = band + fb;
  const near = rows + fb;
  const hsA = near + fb;
  const fa = hsA + fb;
  const b1a = fa + fb;
  const hsF = b1a + fb;
  const hsB = hsF + fb;
  const meanA = hsB + fb;
  const lowA = meanA + fb;
  const bA1 = lowA + lb;
  const Il = bA1 + lb;
  const lfa = Il + lb;
  const lb1a = lfa + lb;
  const bF = lb1a + lb;
  const bB = bF + lb;
  const tmp = bB + lb;
  const col = tmp + lb;

  for (let i = 0; i < n; i++) {
    const a = f32at(alpha, i);
    store<u8>(bandMask + <usize>i, a > 0 && a < 0.999 ? 1 : 0);
  }
  const bandCount = listSet(bandMask, n, band);
  if (bandCount == 0) return 0;
  grow(bandMask, w, h, r2, true, rowsMask);
  const rowsCount = listSet(rowsMask, n, rows);
  grow(rowsMask, w, h, r2, false, nearMask);
  const nearCount = listSet(nearMask, n, near);
  memory.fill(hsA, 0, fb);
  memory.fill(fa, 0, fb);
  memory.fill(b1a, 0, fb);
  memory.fill(hsF, 0, fb);
  memory.fill(hsB, 0, fb);
  sumAlongX(rows, rowsCount, w, r2, alpha, hsA);
  for (let k = 0; k < bandCount; k++) {
    const i = load<i32>(band + (<usize>k << 2));
    store<f32>(meanA + (<usize>k << 2), <f32>(sumAlongY(hsA, w, h, r2, i) / <f64>windowCount(w, h, r2, i)));
  }
  halve(alpha, w, h, lowA);
  box(lowA, lw, lh, r1, bA1, tmp, col);
  for (let c = 0; c < 3; c++) {
    const Ic = c == 0 ? R : c == 1 ? G : B;
    halve(Ic, w, h, Il);
    // Blur fusion's smooth terms at half resolution: blurred foreground and background colours.
    for (let i = 0; i < ln; i++) {
      const o = <usize>i << 2;
      const v = f32at(Il, i);
      const a = f32at(lowA, i);
      store<f32>(lfa + o, <f32>(v * a));
      store<f32>(lb1a + o, <f32>(v * (1 - a)));
    }
    box(lfa, lw, lh, r1, bF, tmp, col);
    box(lb1a, lw, lh, r1, bB, tmp, col);
    for (let i = 0; i < ln; i++) {
      const o = <usize>i << 2;
      const m = f32at(bA1, i);
      store<f32>(bF + o, <f32>(f32at(bF, i) / (m + 1e-5)));
      store<f32>(bB + o, <f32>(f32at(bB, i) / (1 - m + 1e-5)));
    }
    // The wide pass fused (F1) and the narrow pass's weighted inputs, near the band only.
    for (let k = 0; k < nearCount; k++) {
      const i = load<i32>(near + (<usize>k << 2));
      const y = i / w;
      const x = i - y * w;
      const t0 = load<i32>(ya + (<usize>y << 2)) * lw;
      const t1 = load<i32>(yb + (<usize>y << 2)) * lw;
      const ty = load<f64>(yt + (<usize>y << 3));
      const a0 = load<i32>(xa + (<usize>x << 2));
      const a1 = load<i32>(xb + (<usize>x << 2));
      const tx = load<f64>(xt + (<usize>x << 3));
      const fTop = f32at(bF, t0 + a0) + (f32at(bF, t0 + a1) - f32at(bF, t0 + a0)) * tx;
      const f = fTop + (f32at(bF, t1 + a0) + (f32at(bF, t1 + a1) - f32at(bF, t1 + a0)) * tx - fTop) * ty;
      const bTop = f32at(bB, t0 + a0) + (f32at(bB, t0 + a1) - f32at(bB, t0 + a0)) * tx;
      const b = bTop + (f32at(bB, t1 + a0) + (f32at(bB, t1 + a1) - f32at(bB, t1 + a0)) * tx - bTop) * ty;
      const a = f32at(alpha, i);
      let v = f + a * (f32at(Ic, i) - a * f - (1 - a) * b);
      v = v < 0 ? 0 : v > 1 ? 1 : v;
      store<f32>(fa + (<usize>i << 2), <f32>(<f64><f32>v * a));
      store<f32>(b1a + (<usize>i << 2), <f32>(b * (1 - a)));
    }
    sumAlongX(rows, rowsCount, w, r2, fa, hsF);
    sumAlongX(rows, rowsCount, w, r2, b1a, hsB);
    // The narrow pass at the band.
    for (let k = 0; k < bandCount; k++) {
      const i = load<i32>(band + (<usize>k << 2));
      const a = f32at(alpha, i);
      const count = <f64>windowCount(w, h, r2, i);
      const m = f32at(meanA, k);
      const f = <f64><f32>(sumAlongY(hsF, w, h, r2, i) / count / (m + 1e-5));
      const b = <f64><f32>(sumAlongY(hsB, w, h, r2, i) / count / (1 - m + 1e-5));
      let v = f + a * (f32at(Ic, i) - a * f - (1 - a) * b);
      v = v < 0 ? 0 : v > 1 ? 1 : v;
      store<u8>(out + <usize>(i * 3 + c), clamp8(<f64><f32>v * 255));
    }
  }
  return bandCount;
}
