// Helpers and the box mean shared by the kernels.

@inline export function clamp8(x: f64): u8 {
  // Uint8ClampedArray: NaN and negatives -> 0, above 255 -> 255, else round half to even.
  return x > 0 ? (x < 255 ? <u8>nearest<f64>(x) : 255) : 0;
}

@inline export function f32at(p: usize, i: i32): f64 {
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

