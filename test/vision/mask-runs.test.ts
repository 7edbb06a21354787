// The widest band of a mask: a band's width across it, whatever its direction.
import { expect } from 'chai';
import { widestRun } from '../../src/vision/mask-runs.js';

function mask(w: number, h: number, set: (x: number, y: number) => boolean): Uint8Array {
  const m = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) m[y * w + x] = set(x, y) ? 1 : 0;
  return m;
}

describe('vision/mask-runs', () => {
  it('reads a vertical and a horizontal band by their width, not their length', () => {
    expect(widestRun(mask(40, 30, (x) => x >= 10 && x < 15), 40, 30)).to.equal(5);
    expect(widestRun(mask(40, 30, (_, y) => y >= 3 && y < 6), 40, 30)).to.equal(3);
  });

  it('reads a diagonal band by its width across, not by a row through it (sqrt 2 longer)', () => {
    // |x - y| < k: 2k - 1 pixels along a row, (2k - 1) / sqrt 2 across (3.5 and 4.9 px); a diagonal
    // step crosses two of its pixel lines, so the reading is within one such step (1.4 px) above.
    const band = (k: number) => widestRun(mask(60, 60, (x, y) => Math.abs(x - y) < k), 60, 60);
    expect(band(3), 'a row through it is 5 px').to.equal(4);
    expect(band(4), 'a row through it is 7 px').to.equal(6);
    expect(widestRun(mask(60, 60, (x, y) => Math.abs(x + y - 59) < 3), 60, 60), 'the other diagonal').to.equal(4);
  });

  it('takes the widest of several bands; an empty mask is 0; a filled one its shorter side', () => {
    expect(widestRun(mask(40, 30, (x, y) => (x >= 2 && x < 4 && y < 15) || (y >= 20 && y < 27 && x > 10)), 40, 30)).to.equal(7);
    expect(widestRun(new Uint8Array(12), 4, 3)).to.equal(0);
    expect(widestRun(new Uint8Array(12).fill(1), 4, 3)).to.equal(3);
  });
});
