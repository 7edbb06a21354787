import { expect } from 'chai';
import sharp from 'sharp';
import { decodeInput, SHRINK_ON_LOAD_MIN_SIDE, WORKING_MIN_SIDE } from '../../src/passport/image.js';
import { processPassportPhoto } from '../../src/passport/process-passport-photo.js';
import { measureFace, PORTRAITS, readCorpus } from './helpers.js';

const WHITE = [255, 255, 255] as const;

/** A 3200 x 2400 picture whose every pixel differs from its neighbours (x, y and a mix of both). */
async function largeJpeg(orientation: number): Promise<Buffer> {
  const w = 3200;
  const h = 2400;
  const raw = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = (y * w + x) * 3;
      raw[o] = (x * 7) & 255;
      raw[o + 1] = (y * 5) & 255;
      raw[o + 2] = ((x >> 4) * 16 + (y >> 4) * 8) & 255;
    }
  }
  return sharp(raw, { raw: { width: w, height: h, channels: 3 } }).jpeg({ quality: 95 }).withMetadata({ orientation }).toBuffer();
}

describe('passport decode of large JPEGs', function () {
  this.timeout(120000);

  for (let orientation = 1; orientation <= 8; orientation++) {
    it(`EXIF orientation ${orientation}: a region decoded at full size equals the same rectangle of the whole oriented image`, async () => {
      const jpeg = await largeJpeg(orientation);
      const decoded = await decodeInput(jpeg, WHITE, true);
      const swap = orientation >= 5;
      expect(decoded.originalWidth).to.equal(swap ? 2400 : 3200);
      expect(decoded.originalHeight).to.equal(swap ? 3200 : 2400);
      // The working copy is reduced (shrink-on-load) but keeps WORKING_MIN_SIDE.
      expect(Math.max(decoded.image.width, decoded.image.height)).to.be.within(WORKING_MIN_SIDE, SHRINK_ON_LOAD_MIN_SIDE / 2);
      expect(decoded.shrink).to.be.above(1);
      const whole = await sharp(jpeg).autoOrient().raw().toBuffer({ resolveWithObject: true });
      // One rectangle inside the image and one that runs over its right and bottom edges (clipped).
      for (const b of [
        { left: 411, top: 257, right: 411 + 733, bottom: 257 + 519 },
        { left: decoded.originalWidth - 300, top: decoded.originalHeight - 200, right: decoded.originalWidth + 50, bottom: decoded.originalHeight + 40 },
      ]) {
        const region = await decoded.region(b);
        const width = Math.min(b.right, decoded.originalWidth) - b.left;
        const height = Math.min(b.bottom, decoded.originalHeight) - b.top;
        expect([region.left, region.top, region.image.width, region.image.height]).to.deep.equal([b.left, b.top, width, height]);
        const expected = await sharp(whole.data, { raw: whole.info }).extract({ left: b.left, top: b.top, width, height }).raw().toBuffer();
        let maxDiff = 0;
        for (let i = 0; i < expected.length; i++) maxDiff = Math.max(maxDiff, Math.abs(expected[i] - region.image.data[i]));
        expect(maxDiff, 'same pixels as orienting the whole image').to.be.at.most(1);
      }
    });
  }

  it('a 12 MP phone photo stored sideways: rendered from the full-size pixels, same geometry as the portrait itself', async () => {
    const portrait = PORTRAITS[0];
    const upright = await sharp(readCorpus(portrait.file)).removeAlpha().resize(3000, 3000, { kernel: 'lanczos3' })
      .extend({ left: 516, right: 516, extendWith: 'mirror' }).jpeg({ quality: 95 }).toBuffer();
    const phone = await sharp(upright).rotate(-90).jpeg({ quality: 90 }).withMetadata({ orientation: 6 }).toBuffer();
    const r = await processPassportPhoto(phone, { country: 'usa' });
    const small = await processPassportPhoto(readCorpus(portrait.file), { country: 'usa' });
    expect(r.measurements.input_width).to.equal(4032);
    expect(r.measurements.input_height).to.equal(3000);
    expect(r.measurements.decode_shrink).to.be.above(4);
    // Input pixels per output pixel counted on the full-size input: 3000 / 512 times the small one's.
    expect(r.measurements.source_px_per_output_px).to.be.closeTo((small.measurements.source_px_per_output_px * 3000) / 512, 0.1);
    expect(r.checks.find((c) => c.name === 'input_resolution')?.passed).to.equal(true);
    const [a, b] = await Promise.all([measureFace(r.photo.buffer), measureFace(small.photo.buffer)]);
    expect(a.eyeY).to.be.closeTo(b.eyeY, 0.01 * r.photo.height);
    expect(a.centerX).to.be.closeTo(b.centerX, 0.01 * r.photo.width);
    expect(r.measurements.head_height_ratio).to.be.closeTo(small.measurements.head_height_ratio, 0.01);
    const geometry = ['single_face', 'head_in_frame', 'head_height', 'eye_line', 'horizontal_centering', 'head_roll'];
    const outcome = (x: typeof r): Array<[string, boolean]> => x.checks.filter((c) => geometry.includes(c.name)).map((c) => [c.name, c.passed]);
    expect(outcome(r)).to.have.length(geometry.length);
    expect(outcome(r)).to.deep.equal(outcome(small));
  });
});
