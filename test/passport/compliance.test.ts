import { expect } from 'chai';
import sharp from 'sharp';
import { decide } from '../../src/passport/compliance.js';
import { encodeWithinLimit, JPEG_QUALITY_STEPS } from '../../src/passport/encode.js';
import { processPassportPhoto } from '../../src/passport/process-passport-photo.js';
import { PASSPORT_SPECS } from '../../src/passport/specs.js';
import { decodeRgb } from './helpers.js';
import { PORTRAITS, processed, readCorpus } from './helpers.js';

const REQUIRED = [
  'single_face',
  'head_height',
  'eye_line',
  'horizontal_centering',
  'head_roll',
  'background_uniformity',
  'background_color',
  'exposure',
  'sharpness',
  'input_resolution',
];

describe('compliance report', function () {
  this.timeout(120_000);

  it('decides with margins: borderline when one measure moved by its margin could change the decision', () => {
    const max = (value: number, limit = 0.16, margin = 0.04) => ({ value, limit, margin, atLeast: false });
    const min = (value: number, limit = 0.55, margin = 0.05) => ({ value, limit, margin, atLeast: true });
    expect(decide([max(0.05), min(0.9)]).status).to.equal('pass');
    expect(decide([max(0.13), min(0.9)]).status, 'passing, near its limit').to.equal('borderline');
    expect(decide([max(0.19), min(0.9)]).status, 'failing, near its limit').to.equal('borderline');
    expect(decide([max(0.25), min(0.9)]).status).to.equal('fail');
    expect(decide([max(0.19), min(0.3)]).status, 'one failure is far from its limit').to.equal('fail');
    expect(decide([max(0.13), min(0.58)]).closest.limit, 'the closest call is reported').to.equal(0.55);
  });

  it('has the required checks as {name, passed, value, expected}; a clean corpus photo passes the geometry', async () => {
    const r = await processed(PORTRAITS[1], { country: 'india' });
    const names = r.checks.map((c) => c.name);
    for (const n of REQUIRED) expect(names, n).to.include(n);
    for (const c of r.checks) {
      expect(c).to.have.all.keys('name', 'passed', 'status', 'value', 'expected', 'severity', 'message', 'measure', 'limit', 'margin');
      expect(c.message).to.be.a('string').and.not.equal('');
      expect(c.passed).to.be.a('boolean');
      expect(c.expected).to.be.a('string').and.not.equal('');
    }
    const passed = (n: string): boolean | undefined => r.checks.find((c) => c.name === n)?.passed;
    for (const n of ['single_face', 'head_height', 'eye_line', 'horizontal_centering', 'head_roll', 'background_uniformity', 'background_color', 'exposure', 'sharpness', 'file_size', 'dimensions']) {
      expect(passed(n), n).to.equal(true);
    }
    expect(r.measurements.output_faces).to.equal(1);
    // india has no edited-photo advisory
    expect(r.warnings.join(' ')).to.not.match(/travel\.state\.gov/);
  });

  it('usa: warns that digitally edited photos may be rejected, only when edited', async () => {
    const edited = await processed(PORTRAITS[0], { country: 'usa' });
    expect(edited.warnings.join(' ')).to.match(/travel\.state\.gov.*may be rejected/);
    const untouched = await processed(PORTRAITS[0], { country: 'usa', removeBackground: false, enhance: false });
    expect(untouched.warnings.join(' ')).to.not.match(/travel\.state\.gov/);
    // the original grey-beige studio background is not the spec white
    expect(untouched.checks.find((c) => c.name === 'background_color')?.passed).to.equal(false);
  });

  it('low resolution input: input_resolution fails and a warning says so', async () => {
    const r = await processed(PORTRAITS[2], { country: 'usa' });
    const c = r.checks.find((x) => x.name === 'input_resolution');
    expect(c?.passed).to.equal(false);
    expect(c?.value).to.be.below(0.5);
    expect(r.warnings.join(' ')).to.match(/upscaled/);
  });

  it('a blurred photo fails sharpness; an underexposed one fails exposure unless enhancement corrects it', async () => {
    const input = readCorpus(PORTRAITS[0].file);
    const blurred = await processPassportPhoto(await sharp(input).blur(2).png().toBuffer(), { country: 'usa' });
    expect(blurred.checks.find((c) => c.name === 'sharpness')?.passed).to.equal(false);
    const darkInput = await sharp(input).linear(0.3, 0).png().toBuffer();
    const asIs = await processPassportPhoto(darkInput, { country: 'usa', enhance: false });
    expect(asIs.checks.find((c) => c.name === 'exposure')?.passed).to.equal(false);
    const corrected = await processPassportPhoto(darkInput, { country: 'usa' });
    expect(corrected.checks.find((c) => c.name === 'exposure')?.passed).to.equal(true);
    const e = corrected.measurements.enhancement!;
    expect(e.gamma).to.be.within(0.45, 0.8); // brightened beyond the old mild limit, within the new one
    expect(e.faceLumaAfter).to.be.within(90, 215);
    expect(e.changes.join(' ')).to.match(/^Exposure: face brightness/);
  });

  it('file size: quality is stepped down until the kB limit holds (never padded)', async () => {
    const r = await processed(PORTRAITS[1], { country: 'usa' });
    expect(r.photo.quality).to.equal(JPEG_QUALITY_STEPS[0]);
    const pixels = await decodeRgb(r.photo.buffer);
    const tight = { ...PASSPORT_SPECS.usa, fileSizeKb: { min: null, max: 40 } };
    const small = await encodeWithinLimit(pixels, tight, false);
    expect(small.buffer.length).to.be.at.most(40_000);
    expect(small.quality).to.be.below(JPEG_QUALITY_STEPS[0]);
    const meta = await sharp(small.buffer).metadata();
    expect(meta.density).to.equal(300);
    // impossible limit: the smallest attempt is returned and the caller's file_size check fails
    const impossible = await encodeWithinLimit(pixels, { ...tight, fileSizeKb: { min: null, max: 1 } }, false);
    expect(impossible.quality).to.equal(JPEG_QUALITY_STEPS[JPEG_QUALITY_STEPS.length - 1]);
    expect(impossible.buffer.length).to.be.above(1000);
  });
});
