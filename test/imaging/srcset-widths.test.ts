// srcset w=auto's width choice (src/imaging/srcset-widths.ts) on byte curves whose bytes at every
// width are known in closed form: sampled from bytes = c·w² (and c·w^1.6), the interpolation must
// give back the formula's bytes between samples, and the chosen widths must step by bytesStep
// (each step checked against the formula, not against the code's own interpolation).
import { expect } from 'chai';
import { byteCurveKey, bytesAt, chooseAutoWidths, sampleWidths, MAX_AUTO_WIDTH, type ByteCurve } from '../../src/imaging/srcset-widths.js';

const power = (c: number, p: number) => (w: number) => c * w ** p;

function curveOf(bytes: (w: number) => number, largest: number): ByteCurve {
  const widths = sampleWidths(largest);
  return { widths, bytes: widths.map((w) => Math.round(bytes(w))) };
}

function steps(widths: number[], bytes: (w: number) => number): number[] {
  return widths.slice(1).map((w, i) => bytes(w) - bytes(widths[i]));
}

describe('srcset w=auto widths', () => {
  it('samples widths from 64 px up to the largest (capped at 4096), each at most 1.3× the one before (rounded up)', () => {
    const widths = sampleWidths(2560);
    expect(widths[0]).to.equal(64);
    expect(widths[widths.length - 1]).to.equal(2560);
    for (let i = 1; i < widths.length; i++) expect(widths[i]).to.be.above(widths[i - 1]).and.at.most(Math.ceil(widths[i - 1] * 1.3));
    expect(sampleWidths(9000).at(-1)).to.equal(MAX_AUTO_WIDTH);
    expect(sampleWidths(40)).to.deep.equal([40]);
  });

  it('interpolates a power-law curve within 0.5 % between samples and extrapolates beyond them', () => {
    for (const p of [2, 1.6]) {
      const bytes = power(0.5, p);
      const curve = curveOf(bytes, 2560);
      for (const w of [30, 100, 333, 777, 1500, 2559, 3000]) expect(bytesAt(curve, w) / bytes(w), `p=${p} w=${w}`).to.be.within(0.995, 1.005);
    }
  });

  it('steps by bytesStep from min_w and ends at max_w (the last step may be shorter, never under half a step)', () => {
    const bytes = power(0.02, 2); // 131 kB at 2560 px
    const curve = curveOf(bytes, 2560);
    const widths = chooseAutoWidths(curve, { minWidth: 200, maxWidth: 2560, bytesStep: 20_000, maxImages: 20 });
    expect(widths[0]).to.equal(200);
    expect(widths.at(-1)).to.equal(2560);
    const s = steps(widths, bytes);
    for (const step of s.slice(0, -1)) expect(step / 20_000).to.be.within(0.99, 1.02);
    expect(s.at(-1)! / 20_000).to.be.within(0.5, 1.5);
    expect(widths).to.have.length(Math.round((bytes(2560) - bytes(200)) / 20_000) + 1);
  });

  it('when max_images binds: exactly max_images widths, evenly spaced in bytes (each step above bytesStep)', () => {
    const bytes = power(0.02, 2);
    const curve = curveOf(bytes, 2560);
    const widths = chooseAutoWidths(curve, { minWidth: 200, maxWidth: 2560, bytesStep: 5_000, maxImages: 8 });
    expect(widths).to.have.length(8);
    expect([widths[0], widths.at(-1)]).to.deep.equal([200, 2560]);
    const s = steps(widths, bytes);
    const even = (bytes(2560) - bytes(200)) / 7;
    for (const step of s) expect(step / even).to.be.within(0.98, 1.02);
    expect(even).to.be.above(5_000);
  });

  it('min_w equal to max_w (or max_images 1) gives max_w alone; a step larger than the whole range gives both ends', () => {
    const curve = curveOf(power(0.02, 2), 1000);
    expect(chooseAutoWidths(curve, { minWidth: 500, maxWidth: 500, bytesStep: 20_000, maxImages: 8 })).to.deep.equal([500]);
    expect(chooseAutoWidths(curve, { minWidth: 200, maxWidth: 1000, bytesStep: 20_000, maxImages: 1 })).to.deep.equal([1000]);
    expect(chooseAutoWidths(curve, { minWidth: 200, maxWidth: 1000, bytesStep: 10_000_000, maxImages: 8 })).to.deep.equal([200, 1000]);
  });

  it('a render that came out smaller at a larger width does not make the widths go back', () => {
    const curve: ByteCurve = { widths: [100, 200, 300, 400], bytes: [10_000, 40_000, 35_000, 90_000] };
    const widths = chooseAutoWidths(curve, { minWidth: 100, maxWidth: 400, bytesStep: 10_000, maxImages: 20 });
    for (let i = 1; i < widths.length; i++) expect(widths[i]).to.be.above(widths[i - 1]);
  });

  it('refuses options that are not positive integers (a missing one would never reach max_w)', () => {
    const curve = curveOf(power(0.02, 2), 1000);
    expect(() => chooseAutoWidths(curve, { minWidth: NaN, maxWidth: 1000, bytesStep: 20_000, maxImages: 8 })).to.throw(RangeError);
    expect(() => chooseAutoWidths(curve, { minWidth: 200, maxWidth: 1000, bytesStep: 0, maxImages: 8 })).to.throw(RangeError);
  });

  it('keys curves by format and quality, with only letters, digits and _', () => {
    expect(byteCurveKey('webp', 80)).to.equal('webp_q80');
    expect(byteCurveKey('jpeg', 'auto:eco')).to.equal('jpeg_qauto_eco');
  });
});
