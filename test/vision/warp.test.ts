// The warps, against answers known without them: the identity and whole-pixel shifts reproduce
// the source, a linear ramp stays linear under any turn (both kernels reproduce linear functions),
// pixels whose centre falls outside the source get the fill (or, beside and below it, its edge pixels).
import { expect } from 'chai';
import type { AffineMap, RawImage } from '../../src/vision/raw-image.js';
import { sourceRowsFor, warpRgbaBilinear, warpRgbBicubicRows } from '../../src/vision/warp.js';

function turned(deg: number, step: number, ox: number, oy: number): AffineMap {
  const a = (deg * Math.PI) / 180;
  return { ox, oy, dux: step * Math.cos(a), duy: step * Math.sin(a), dvx: -step * Math.sin(a), dvy: step * Math.cos(a) };
}

/** R = x, G = y, B = 2x + y (scaled into 0..255): linear in the pixel centre. */
function ramp(w: number, h: number): RawImage {
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.set([x * 2, y * 2, x + y], (y * w + x) * 3);
  return { data, width: w, height: h, channels: 3 };
}

const bicubic = (src: RawImage, map: AffineMap, w: number, h: number) =>
  warpRgbBicubicRows({ image: src, top: 0, fullHeight: src.height }, map, w, 0, h, [255, 0, 255]);

describe('vision warps', () => {
  const src = ramp(100, 90);

  it('the identity and a whole-pixel shift reproduce the source (bicubic and bilinear)', () => {
    const same = bicubic(src, turned(0, 1, 0, 0), 100, 90);
    expect([...same.image.data]).to.deep.equal([...src.data]);
    expect(same.inside.every((v) => v === 1)).to.equal(true);
    const shifted = bicubic(src, turned(0, 1, 7, 3), 50, 40);
    expect([...shifted.image.data.subarray(0, 3)]).to.deep.equal([14, 6, 10]);
    const rgba = warpRgbaBilinear(src, turned(0, 1, 7, 3), 50, 40, [0, 0, 0]);
    expect([...rgba.data.subarray(0, 4)]).to.deep.equal([14, 6, 10, 255]);
  });

  it('a ramp stays a ramp under a turn and a scale, within a level, away from the borders', () => {
    for (const map of [turned(5, 0.8, 30, 10), turned(-12, 1.3, 10, 40)]) {
      const out = bicubic(src, map, 40, 30).image.data;
      const lin = warpRgbaBilinear(src, map, 40, 30, [0, 0, 0]).data;
      for (let v = 2; v < 28; v++) {
        for (let u = 2; u < 38; u++) {
          const sx = map.ox + (u + 0.5) * map.dux + (v + 0.5) * map.dvx - 0.5;
          const sy = map.oy + (u + 0.5) * map.duy + (v + 0.5) * map.dvy - 0.5;
          const want = [2 * sx, 2 * sy, sx + sy];
          for (let c = 0; c < 3; c++) {
            expect(Math.abs(out[(v * 40 + u) * 3 + c] - want[c]), `bicubic ${u},${v}`).to.be.at.most(1);
            expect(Math.abs(lin[(v * 40 + u) * 4 + c] - want[c]), `bilinear ${u},${v}`).to.be.at.most(1);
          }
        }
      }
    }
  });

  it('pixels outside the source get the fill and are not marked inside; a band of rows equals the whole', () => {
    const out = bicubic(src, turned(0, 1, -10, 0), 30, 5);
    expect([...out.image.data.subarray(0, 3)]).to.deep.equal([255, 0, 255]);
    expect(out.inside[0]).to.equal(0);
    expect(out.inside.reduce((a, b) => a + b, 0)).to.equal(20 * 5);
    expect([...warpRgbaBilinear(src, turned(0, 1, -10, 0), 30, 5, [1, 2, 3]).data.subarray(0, 4)]).to.deep.equal([1, 2, 3, 255]);
    const map = turned(30, 0.9, 40, -10);
    const whole = bicubic(src, map, 60, 70);
    const { top, bottom } = sourceRowsFor(map, 60, 20, 50, src.height);
    const rows = { data: src.data.subarray(top * 300, bottom * 300), width: 100, height: bottom - top, channels: 3 as const };
    const band = warpRgbBicubicRows({ image: rows, top, fullHeight: src.height }, map, 60, 20, 50, [255, 0, 255]);
    expect([...band.image.data]).to.deep.equal([...whole.image.data.subarray(20 * 60 * 3, 50 * 60 * 3)]);
  });

  it('with edgesBelowAndBeside, only pixels above the source get the fill: beside and below it its edge pixels continue', () => {
    // The source (100 x 90) from (-10, -10): 10 rows above it, 10 columns left of it, 20 below and 10 right.
    const out = warpRgbaBilinear(src, turned(0, 1, -10, -10), 120, 120, [1, 2, 3], true).data;
    const at = (u: number, v: number) => [...out.subarray((v * 120 + u) * 4, (v * 120 + u) * 4 + 3)];
    expect(at(50, 5), 'above').to.deep.equal([1, 2, 3]);
    expect(at(0, 5), 'above, left').to.deep.equal([1, 2, 3]);
    expect(at(0, 40), 'left: column 0').to.deep.equal(at(10, 40));
    expect(at(115, 40), 'right: column 99').to.deep.equal(at(109, 40));
    expect(at(50, 115), 'below: row 89').to.deep.equal(at(50, 99));
    expect(at(0, 115), 'below, left: the corner').to.deep.equal([0, 178, 89]);
  });
});
