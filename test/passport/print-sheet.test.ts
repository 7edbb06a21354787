import { expect } from 'chai';
import sharp from 'sharp';
import { CUT_LINE, makePrintSheet } from '../../src/passport/print-sheet.js';
import { processPassportPhoto } from '../../src/passport/process-passport-photo.js';
import { PASSPORT_COUNTRIES, PASSPORT_SPECS, printCopySizePx, printSheetTiling } from '../../src/passport/specs.js';
import { decodeRgb, PORTRAITS, readCorpus } from './helpers.js';

describe('print sheet', function () {
  this.timeout(120_000);

  it('4x6 in at 300 DPI: 1800x1200, copies as tiled, cut lines present, photos in every cell', async () => {
    const r = await processPassportPhoto(readCorpus(PORTRAITS[0].file), { country: 'usa', includePrintSheet: true });
    const sheet = r.printSheet;
    expect(sheet).to.not.equal(null);
    if (!sheet) return;
    const meta = await sharp(sheet.buffer).metadata();
    expect([meta.width, meta.height, sheet.width, sheet.height]).to.deep.equal([1800, 1200, 1800, 1200]);
    expect(meta.density).to.equal(300);
    expect(sheet.dpi).to.equal(300);
    expect(meta.format).to.equal('jpeg');
    const spec = PASSPORT_SPECS.usa;
    const { width: cw, height: ch } = printCopySizePx(spec);
    expect([cw, ch]).to.deep.equal([600, 600]); // 2 x 2 in at 300 DPI
    const expected = Math.floor(1800 / cw) * Math.floor(1200 / ch);
    expect(sheet.copies).to.equal(expected).and.equal(printSheetTiling(spec).copies).and.equal(6);

    const img = await decodeRgb(sheet.buffer);
    const px = (x: number, y: number): number[] => {
      const j = (y * img.width + x) * 3;
      return [img.data[j], img.data[j + 1], img.data[j + 2]];
    };
    const isLine = (x: number, y: number): boolean => px(x, y).every((v, i) => Math.abs(v - CUT_LINE.rgb[i]) <= 24);
    const share = (pts: Array<[number, number]>): number => pts.filter(([x, y]) => isLine(x, y)).length / pts.length;
    const ys = Array.from({ length: 1200 }, (_, y) => y);
    const xs = Array.from({ length: 1800 }, (_, x) => x);
    // vertical cut lines at the copy boundaries (the two 1 px frames meet at x = 599 / 600), and the outer frame
    for (const x of [0, 599, 600, 1199, 1200, 1799]) expect(share(ys.map((y) => [x, y])), `column ${x}`).to.be.above(0.95);
    for (const y of [0, 599, 600, 1199]) expect(share(xs.map((x) => [x, y])), `row ${y}`).to.be.above(0.95);
    // not a line in the middle of a copy
    expect(share(ys.map((y) => [300, y]))).to.be.below(0.2);
    // each cell holds the photo: the cell equals the photo (same JPEG-decoded pixels within tolerance)
    const photo = await decodeRgb(r.photo.buffer);
    for (let row = 0; row < 2; row++) {
      for (let col = 0; col < 3; col++) {
        let diff = 0;
        let n = 0;
        for (let y = 50; y < 550; y += 7) {
          for (let x = 50; x < 550; x += 7) {
            const a = px(col * 600 + x, row * 600 + y);
            const j = (y * 600 + x) * 3;
            diff += Math.abs(a[0] - photo.data[j]) + Math.abs(a[1] - photo.data[j + 1]) + Math.abs(a[2] - photo.data[j + 2]);
            n += 3;
          }
        }
        expect(diff / n, `cell ${row},${col}`).to.be.below(4);
      }
    }
  });

  it('centres a grid with gaps when the layout asks for them', async () => {
    const spec = { ...PASSPORT_SPECS.usa, printSheet: { ...PASSPORT_SPECS.usa.printSheet, gapPx: 60, columns: 2, rows: 1, copies: 2 } };
    const photo = { data: new Uint8Array(600 * 600 * 3).fill(90), width: 600, height: 600, channels: 3 as const };
    const sheet = await makePrintSheet(photo, spec);
    expect(sheet.copies).to.equal(printSheetTiling(spec).copies).and.equal(2);
    expect(sheet.positions).to.deep.equal([{ x: 270, y: 300 }, { x: 930, y: 300 }]);
    const img = await decodeRgb(sheet.buffer);
    const at = (x: number, y: number): number => img.data[(y * 1800 + x) * 3];
    expect(at(100, 100)).to.be.above(240); // margin stays white
    expect(at(900, 600)).to.be.above(240); // gap stays white
    expect(at(570, 600)).to.be.closeTo(90, 8); // inside a copy
    expect(at(270, 600)).to.be.closeTo(CUT_LINE.rgb[0], 30); // cut line on the copy's outline
  });

  for (const country of PASSPORT_COUNTRIES) {
    const spec = PASSPORT_SPECS[country];
    it(`${country}: its layout (${spec.printSheet.columns} x ${spec.printSheet.rows}, gap ${spec.printSheet.gapPx} px) tiles its print size on the sheet`, async () => {
      // A flat photo at the record's pixel size, resized to the print size at the sheet's DPI.
      const photo = { data: new Uint8Array(spec.digital.width * spec.digital.height * 3).fill(90), width: spec.digital.width, height: spec.digital.height, channels: 3 as const };
      const sheet = await makePrintSheet(photo, spec);
      const { width: cw, height: ch } = printCopySizePx(spec);
      expect([cw, ch]).to.deep.equal([Math.round(spec.print.widthIn * 300), Math.round(spec.print.heightIn * 300)]);
      expect(sheet.copies).to.equal(spec.printSheet.copies).and.equal(sheet.positions.length);
      const img = await decodeRgb(sheet.buffer);
      const at = (x: number, y: number): number => img.data[(y * 1800 + x) * 3];
      for (const { x, y } of sheet.positions) {
        expect(x).to.be.at.least(0);
        expect(y).to.be.at.least(0);
        expect(x + cw).to.be.at.most(1800);
        expect(y + ch).to.be.at.most(1200);
        expect(at(x + (cw >> 1), y + (ch >> 1)), 'inside a copy').to.be.closeTo(90, 8);
      }
      // copies do not overlap and keep the layout's gap between them
      const xs = [...new Set(sheet.positions.map((p) => p.x))].sort((a, b) => a - b);
      for (let i = 1; i < xs.length; i++) expect(xs[i] - xs[i - 1]).to.equal(cw + spec.printSheet.gapPx);
      if (spec.printSheet.gapPx > 2 && xs.length > 1) expect(at(xs[1] - (spec.printSheet.gapPx >> 1), sheet.positions[0].y + (ch >> 1)), 'gap stays white').to.be.above(240);
    });
  }
});
