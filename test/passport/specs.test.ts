import { expect } from 'chai';
import { isPassportCountry, PASSPORT_COUNTRIES, PASSPORT_SPECS, printCopySizePx, printSheetTiling } from '../../src/passport/specs.js';

describe('passport specs (data)', () => {
  it('has one record per country, keyed by its own name', () => {
    expect(Object.keys(PASSPORT_SPECS).sort()).to.deep.equal([...PASSPORT_COUNTRIES].sort());
    for (const c of PASSPORT_COUNTRIES) expect(PASSPORT_SPECS[c].country).to.equal(c);
    expect(isPassportCountry('usa')).to.equal(true);
    expect(isPassportCountry('france')).to.equal(false);
    expect(isPassportCountry(undefined)).to.equal(false);
  });

  for (const c of PASSPORT_COUNTRIES) {
    describe(c, () => {
      const s = PASSPORT_SPECS[c];
      it('pixel size lies in the accepted range and matches print size x DPI', () => {
        expect(s.digital.width).to.be.within(s.digital.minWidth, s.digital.maxWidth);
        expect(s.digital.height).to.be.within(s.digital.minHeight, s.digital.maxHeight);
        expect(s.digital.width / s.print.widthIn).to.be.closeTo(s.dpi, 0.5);
        expect(s.digital.height / s.print.heightIn).to.be.closeTo(s.dpi, 0.5);
        expect(s.print.widthMm / 25.4).to.be.closeTo(s.print.widthIn, 0.02);
        if (s.digital.square) expect(s.digital.width).to.equal(s.digital.height);
      });
      it('ratios and mm ranges describe the same geometry', () => {
        for (const [ratio, mm] of [[s.headHeightRatio, s.headHeightMm], [s.eyeLineRatio, s.eyeLineMm]] as const) {
          expect(ratio[0]).to.be.below(ratio[1]);
          expect(ratio[0] * s.print.heightMm).to.be.closeTo(mm[0], 1.5);
          expect(ratio[1] * s.print.heightMm).to.be.closeTo(mm[1], 1.5);
        }
        // The head must fit: the eye line can not be lower than the head's lower half allows.
        expect(s.eyeLineRatio[1]).to.be.at.most(1);
      });
      it('print-sheet layout data equals the computed tiling', () => {
        const t = printSheetTiling(s);
        expect({ columns: s.printSheet.columns, rows: s.printSheet.rows, copies: s.printSheet.copies }).to.deep.equal(t);
        expect(s.printSheet.widthPx).to.equal(s.printSheet.widthIn * s.printSheet.dpi);
        expect(s.printSheet.heightPx).to.equal(s.printSheet.heightIn * s.printSheet.dpi);
        const copy = printCopySizePx(s);
        expect(t.columns * copy.width).to.be.at.most(s.printSheet.widthPx);
        expect(t.rows * copy.height).to.be.at.most(s.printSheet.heightPx);
      });
      it('background, format and size limits are set', () => {
        expect(s.background.hex).to.match(/^#[0-9A-F]{6}$/);
        expect(s.background.rgb).to.have.length(3);
        expect(s.format).to.equal('jpeg');
        expect(s.fileSizeKb.max).to.be.above(s.fileSizeKb.min ?? 0);
      });
    });
  }

  it('is JSON-serialisable as returned by GET /passport-photo/specs', () => {
    const round = JSON.parse(JSON.stringify(PASSPORT_SPECS)) as typeof PASSPORT_SPECS;
    expect(round.usa.headHeightRatio).to.deep.equal([0.5, 0.6875]);
    expect(round.usa.fileSizeKb).to.deep.equal({ min: null, max: 240 });
    expect(round.india_visa.digital.maxWidth).to.equal(1000);
  });
});
