// The width of the widest band in a binary mask, as a rim's width is read: per set pixel its run of
// set pixels along the row, the column and both diagonals (a diagonal step is sqrt 2 long); across
// a band the shortest of these is its width (a diagonal run reads up to one step, 1.4 px, over), the
// others run along it.
// The largest over the mask, rounded. Where bands cross, or at a sharp corner, every run is long and
// the width reads larger.
const DIRECTIONS = [[1, 0, 1], [0, 1, 1], [1, 1, Math.SQRT2], [1, -1, Math.SQRT2]] as const;

export function widestRun(mask: Uint8Array, w: number, h: number): number {
  const across = new Float32Array(w * h).fill(Infinity);
  for (const [dx, dy, step] of DIRECTIONS) {
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        if (!mask[y * w + x]) continue;
        const px = x - dx;
        const py = y - dy;
        if (px >= 0 && py >= 0 && py < h && mask[py * w + px]) continue;
        let n = 0; // a run starts here: its length, then each of its pixels keeps the shortest
        while (x + n * dx < w && y + n * dy >= 0 && y + n * dy < h && mask[(y + n * dy) * w + x + n * dx]) n++;
        for (let k = 0; k < n; k++) {
          const i = (y + k * dy) * w + x + k * dx;
          across[i] = Math.min(across[i], n * step);
        }
      }
    }
  }
  let widest = 0;
  for (let i = 0; i < across.length; i++) if (mask[i]) widest = Math.max(widest, across[i]);
  return Math.round(widest);
}
