import { expect } from 'chai';
import { isPassportCountry, PASSPORT_COUNTRIES, PASSPORT_SPECS, PRINT_ONLY_DPI, printCopySizePx, printSheetTiling } from '../../src/passport/specs.js';

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
        expect(s.eyeLineRatio === null, 'eye line ratio and mm are both set or both null').to.equal(s.eyeLineMm === null);
        const pairs = [[s.headHeightRatio, s.headHeightMm]];
        if (s.eyeLineRatio && s.eyeLineMm) pairs.push([s.eyeLineRatio, s.eyeLineMm]);
        for (const [ratio, mm] of pairs) {
          expect(ratio[0]).to.be.below(ratio[1]);
          expect(ratio[0] * s.print.heightMm).to.be.closeTo(mm[0], 1.5);
          expect(ratio[1] * s.print.heightMm).to.be.closeTo(mm[1], 1.5);
        }
        // The head must fit: the eye line can not be lower than the head's lower half allows.
        if (s.eyeLineRatio) expect(s.eyeLineRatio[1]).to.be.at.most(1);
        // A top margin and the largest head still leave room below the chin.
        if (s.topMarginMm) expect(s.topMarginMm[1] + s.headHeightMm[1]).to.be.below(s.print.heightMm);
      });
      it('names where its numbers come from (an official page, or at least two agreeing sources)', () => {
        expect(s.sources.length).to.be.at.least(1);
        for (const src of s.sources) {
          expect(src.states).to.be.a('string').and.not.equal('');
          if (src.kind !== 'spec') expect(src.url).to.match(/^https?:\/\//);
        }
        const fromSpec = s.sources.every((x) => x.kind === 'spec');
        const official = s.sources.filter((x) => x.kind === 'official').length;
        const secondary = s.sources.filter((x) => x.kind === 'secondary').length;
        expect(fromSpec || official >= 1 || secondary >= 2, 'verified').to.equal(true);
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
        if (s.fileSizeKb.max !== null) expect(s.fileSizeKb.max).to.be.above(s.fileSizeKb.min ?? 0);
        // A printed-only document (no pixel size of its own) is made at PRINT_ONLY_DPI.
        if (s.digital.minWidth === s.digital.maxWidth && !s.digital.square) expect(s.dpi).to.equal(PRINT_ONLY_DPI);
      });
    });
  }

  it('is JSON-serialisable as returned by GET /passport-photo/specs', () => {
    const round = JSON.parse(JSON.stringify(PASSPORT_SPECS)) as typeof PASSPORT_SPECS;
    expect(round.usa.headHeightRatio).to.deep.equal([0.5, 0.6875]);
    expect(round.usa.fileSizeKb).to.deep.equal({ min: null, max: 240 });
    expect(round.india_visa.digital.maxWidth).to.equal(1000);
    expect(round.uk.eyeLineRatio).to.equal(null);
    expect(round.japan.topMarginMm).to.deep.equal([2, 6]);
  });

  it('the added documents carry the numbers their sources state', () => {
    const mm = (c: keyof typeof PASSPORT_SPECS) => ({ size: [PASSPORT_SPECS[c].print.widthMm, PASSPORT_SPECS[c].print.heightMm], head: PASSPORT_SPECS[c].headHeightMm });
    expect(mm('uk')).to.deep.equal({ size: [35, 45], head: [29, 34] });
    expect(mm('schengen_visa')).to.deep.equal({ size: [35, 45], head: [32, 36] });
    expect(mm('canada')).to.deep.equal({ size: [50, 70], head: [31, 36] });
    expect(mm('china')).to.deep.equal({ size: [33, 48], head: [28, 33] });
    expect(mm('japan')).to.deep.equal({ size: [35, 45], head: [32, 36] });
    expect(PASSPORT_SPECS.china.topMarginMm).to.deep.equal([3, 5]);
    expect(PASSPORT_SPECS.china.fileSizeKb).to.deep.equal({ min: 30, max: 80 });
    expect([PASSPORT_SPECS.uk.digital.width, PASSPORT_SPECS.uk.digital.height]).to.deep.equal([413, 531]);
    expect([PASSPORT_SPECS.canada.digital.width, PASSPORT_SPECS.canada.digital.height]).to.deep.equal([591, 827]);
    expect([PASSPORT_SPECS.china.digital.width, PASSPORT_SPECS.china.digital.height]).to.deep.equal([390, 567]);
    for (const c of ['uk', 'schengen_visa', 'canada', 'china', 'japan'] as const) {
      expect(PASSPORT_SPECS[c].eyeLineRatio, c).to.equal(null);
      expect(PASSPORT_SPECS[c].editedPhotoWarning, c).to.be.a('string');
    }
  });
});
