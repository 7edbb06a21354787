// Blur fusion: the foreground colours at the soft edge.
import { clamp8, f32at } from './common';
import { box, halve, interpolateRow, planeAt } from './guided';

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

