// The width of the widest band in a binary mask, as a rim's width is read: per set pixel the
// shorter of its row's and its column's run of set pixels (across a band one is its width, the
// other runs along it), the largest over the mask. Where bands cross, or at a sharp corner, both
// runs are long and the width reads larger.
export function widestRun(mask: Uint8Array, w: number, h: number): number {
  const across = new Uint16Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; ) {
      let e = x;
      while (e < w && mask[y * w + e]) e++;
      for (let k = x; k < e; k++) across[y * w + k] = e - x;
      x = e > x ? e : x + 1;
    }
  }
  let widest = 0;
  for (let x = 0; x < w; x++) {
    for (let y = 0; y < h; ) {
      let e = y;
      while (e < h && mask[e * w + x]) e++;
      for (let k = y; k < e; k++) widest = Math.max(widest, Math.min(e - y, across[k * w + x]));
      y = e > y ? e : y + 1;
    }
  }
  return widest;
}
