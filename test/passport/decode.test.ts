import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { dctScale, decodeInput, LARGE_WORKING_MIN_SIDE, largeWorkingShrink, SHRINK_ON_LOAD_MIN_SIDE, WORKING_MIN_SIDE } from '../../src/passport/image.js';
import { processPassportPhoto } from '../../src/passport/process-passport-photo.js';
import { PASSPORT_SPECS } from '../../src/passport/specs.js';
import { measureFace, PORTRAITS, readCorpus } from './helpers.js';

const WHITE = [255, 255, 255] as const;

const W = 3200;
const H = 2400;

/** A W x H JPEG (quality 95, EXIF `orientation`) of channel values `value(x, y, c)`, blurred by `sigma` when set. */
async function syntheticJpeg(orientation: number, value: (x: number, y: number, c: number) => number, sigma?: number): Promise<Buffer> {
  const raw = Buffer.alloc(W * H * 3);
  for (let y = 0, o = 0; y < H; y++) {
    for (let x = 0; x < W; x++) for (let c = 0; c < 3; c++) raw[o++] = value(x, y, c);
  }
  const image = sharp(raw, { raw: { width: W, height: H, channels: 3 } });
  return (sigma ? image.blur(sigma) : image).jpeg({ quality: 95 }).withMetadata({ orientation }).toBuffer();
}

/** Every pixel differs from its neighbours (x, y and a mix of both). */
const largeJpeg = (orientation: number): Promise<Buffer> =>
  syntheticJpeg(orientation, (x, y, c) => (c === 0 ? x * 7 : c === 1 ? y * 5 : (x >> 4) * 16 + (y >> 4) * 8) & 255);

/**
 * Soft-edged blocks on gradients: a rectangle one pixel off, or turned the wrong way, differs by
 * tens of levels along every block edge; two reductions of the same rectangle differ by about 1.
 */
const blocksJpeg = (orientation: number): Promise<Buffer> =>
  syntheticJpeg(orientation, (x, y, c) => (c === 0 ? Math.floor((x / W) * 255) : c === 1 ? Math.floor((y / H) * 255) : ((x >> 6) + (y >> 6)) & 1 ? 200 : 40), 2);

describe('passport decode of large JPEGs', function () {
  this.timeout(120000);

  for (let orientation = 1; orientation <= 8; orientation++) {
    it(`EXIF orientation ${orientation}: a region decoded at full size equals the same rectangle of the whole oriented image`, async () => {
      const jpeg = await largeJpeg(orientation);
      const decoded = await decodeInput(jpeg, WHITE, true);
      const swap = orientation >= 5;
      expect(decoded.originalWidth).to.equal(swap ? H : W);
      expect(decoded.originalHeight).to.equal(swap ? W : H);
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

  it('largeWorkingShrink: 1/4 where that keeps LARGE_WORKING_MIN_SIDE (48 MP), else half size (12 MP)', () => {
    for (const longSide of [3000, 4032, 6000, 7999, 8000, 8064]) {
      const s = largeWorkingShrink(longSide);
      expect(s, `${longSide} px`).to.equal(longSide >= 4 * LARGE_WORKING_MIN_SIDE ? 4 : 2);
      expect(dctScale(s, 4 * 2016, 4 * 1512)).to.equal(s);
    }
  });

  it('dctScale: the largest of 1/8, 1/4, 1/2 that does not reduce further than asked and divides the stored size', () => {
    expect(dctScale(1.9, 3200, 2400)).to.equal(1);
    expect(dctScale(2.25, 3200, 2400)).to.equal(2);
    expect(dctScale(4.5, 3200, 2400)).to.equal(4);
    expect(dctScale(9, 3200, 2400)).to.equal(8);
    expect(dctScale(9, 3004, 2400)).to.equal(4);
    expect(dctScale(2.25, 3001, 2400)).to.equal(1);
  });

  for (let orientation = 1; orientation <= 8; orientation++) {
    it(`EXIF orientation ${orientation}: a reduced region decoded DCT-scaled matches the same rectangle of the whole oriented image reduced by lanczos`, async () => {
      const jpeg = await blocksJpeg(orientation);
      const decoded = await decodeInput(jpeg, WHITE, true);
      const whole = await sharp(jpeg).autoOrient().raw().toBuffer({ resolveWithObject: true });
      const b = { left: 411, top: 257, right: 411 + 1333, bottom: 257 + 919 };
      for (const [reduce, scale] of [[2.25, 2], [4.5, 4]]) {
        const region = await decoded.region(b, reduce);
        // Widened to whole scaled pixels: it starts on a multiple of the scale and covers the rectangle.
        expect(region.left % scale, `left at reduce ${reduce}`).to.equal(0);
        expect(region.top % scale, `top at reduce ${reduce}`).to.equal(0);
        const coverWidth = Math.round(region.image.width / region.scaleX);
        const coverHeight = Math.round(region.image.height / region.scaleY);
        expect(region.left).to.be.within(b.left - scale + 1, b.left);
        expect(region.top).to.be.within(b.top - scale + 1, b.top);
        expect(region.left + coverWidth).to.be.within(b.right, b.right + scale - 1);
        expect(region.top + coverHeight).to.be.within(b.bottom, b.bottom + scale - 1);
        expect(region.image.width).to.equal(Math.round(coverWidth / reduce));
        expect(region.image.height).to.equal(Math.round(coverHeight / reduce));
        const expected = await sharp(whole.data, { raw: whole.info })
          .extract({ left: region.left, top: region.top, width: coverWidth, height: coverHeight })
          .resize(region.image.width, region.image.height, { fit: 'fill', kernel: 'lanczos3' })
          .raw()
          .toBuffer();
        let sum = 0;
        for (let i = 0; i < expected.length; i++) sum += Math.abs(expected[i] - region.image.data[i]);
        expect(sum / expected.length, `mean difference at reduce ${reduce}`).to.be.below(1.5);
      }
    });
  }

  it('a reduced region is decoded at full size when no temporary copy can be written, and no copy is left behind', async () => {
    const jpeg = await blocksJpeg(6);
    const decoded = await decodeInput(jpeg, WHITE, true);
    const b = { left: 411, top: 257, right: 411 + 1333, bottom: 257 + 919 };
    const leftovers = (): string[] => fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('pictor-region-'));
    const before = leftovers();
    const scaled = await decoded.region(b, 2.25);
    expect(leftovers()).to.deep.equal(before);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = path.join(os.tmpdir(), 'pictor-no-such-directory', 'x');
    try {
      const full = await decoded.region(b, 2.25);
      // Not widened: the full-size path covers exactly the rectangle asked for.
      expect([full.left, full.top, Math.round(full.image.width / full.scaleX)]).to.deep.equal([b.left, b.top, b.right - b.left]);
      expect(full.image.width).to.equal(Math.round((b.right - b.left) / 2.25));
      expect(scaled.left).to.not.equal(full.left);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  /** A 12 MP photo of a light wall with the portrait (`side` px square) standing at its bottom edge. */
  async function personFurtherAway(side: number): Promise<Buffer> {
    const portrait = await sharp(readCorpus(PORTRAITS[0].file)).removeAlpha().resize(side, side).toBuffer();
    return sharp({ create: { width: 4032, height: 3024, channels: 3, background: { r: 215, g: 212, b: 205 } } })
      .composite([{ input: portrait, left: 1500, top: 3024 - side }])
      .jpeg({ quality: 90 })
      .toBuffer();
  }

  it('a 12 MP photo of a person further away (face ~55 px in the reduced copy): found and measured on a half-size copy (largeWorkingShrink), not refused as too small', async () => {
    // The head is ~500 px of the input: enough for a 600 px usa photo without enlarging it. Measured
    // on the 806 px copy alone it was refused (face_too_small: "about 101 px tall"); smaller, not found.
    for (const side of [1600, 1200]) {
      const r = await processPassportPhoto(await personFurtherAway(side), { country: 'usa' });
      expect(r.measurements.decode_shrink, `portrait ${side} px`).to.equal(2);
      const failed = r.checks.filter((c) => !c.passed).map((c) => c.name);
      expect(failed, `portrait ${side} px`).to.deep.equal([]);
      expect(r.measurements.source_px_per_output_px).to.be.above(1);
      // The detector run again on the produced photo finds the eyes where the plan put them.
      const out = await measureFace(r.photo.buffer);
      const [low, high] = PASSPORT_SPECS.usa.eyeLineRatio ?? [0, 1];
      expect(1 - out.eyeY / r.photo.height).to.be.within(low, high);
    }
  });

  it('without a temporary directory the half-size copy is decoded at full size and reduced: the same outcome', async () => {
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = path.join(os.tmpdir(), 'pictor-no-such-directory', 'x');
    try {
      const r = await processPassportPhoto(await personFurtherAway(1600), { country: 'usa' });
      expect(r.measurements.decode_shrink).to.equal(2);
      expect(r.checks.filter((c) => !c.passed).map((c) => c.name)).to.deep.equal([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

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
    expect(r.measurements.head_height_ratio).to.be.closeTo(small.measurements.head_height_ratio!, 0.01);
    const geometry = ['single_face', 'head_in_frame', 'head_height', 'eye_line', 'horizontal_centering', 'head_roll'];
    const outcome = (x: typeof r): Array<[string, boolean]> => x.checks.filter((c) => geometry.includes(c.name)).map((c) => [c.name, c.passed]);
    expect(outcome(r)).to.have.length(geometry.length);
    expect(outcome(r)).to.deep.equal(outcome(small));
  });

  it('12 MP JPEGs as cameras and editors write them (CMYK, Display P3, progressive, a size the DCT scale does not divide): the same photo as from the plain sRGB one', async () => {
    // Each takes the reduced working copy and a rectangle decoded for the render (through the
    // temporary copy where the size divides by the scale, else at full size): colour conversion and
    // geometry must agree between the two decodes and with the plain file.
    const upright = await sharp(readCorpus(PORTRAITS[0].file)).removeAlpha().resize(3000, 3000, { kernel: 'lanczos3' })
      .extend({ left: 516, right: 516, extendWith: 'mirror' }).png().toBuffer();
    const plain = await sharp(upright).jpeg({ quality: 90 }).toBuffer();
    const variants: Record<string, { bytes: Buffer; minPsnr: number }> = {
      cmyk: { bytes: await sharp(upright).toColourspace('cmyk').jpeg({ quality: 90 }).withIccProfile('cmyk').toBuffer(), minPsnr: 22 },
      'display-p3': { bytes: await sharp(upright).withIccProfile('p3').jpeg({ quality: 90 }).toBuffer(), minPsnr: 22 },
      progressive: { bytes: await sharp(upright).jpeg({ quality: 90, progressive: true }).toBuffer(), minPsnr: 40 },
      'odd size': { bytes: await sharp(upright).extract({ left: 0, top: 0, width: 4031, height: 2999 }).jpeg({ quality: 90 }).toBuffer(), minPsnr: 22 },
    };
    const reference = await processPassportPhoto(plain, { country: 'usa' });
    const refPixels = await sharp(reference.photo.buffer).removeAlpha().raw().toBuffer();
    const outcome = (x: typeof reference): string[] => x.checks.filter((c) => !c.passed).map((c) => c.name);
    for (const [name, { bytes, minPsnr }] of Object.entries(variants)) {
      const r = await processPassportPhoto(bytes, { country: 'usa' });
      expect(r.measurements.decode_shrink, name).to.be.above(4);
      expect(outcome(r), name).to.deep.equal(outcome(reference));
      expect(r.measurements.head_height_ratio, name).to.be.closeTo(reference.measurements.head_height_ratio!, 0.01);
      expect(r.measurements.eye_line_ratio, name).to.be.closeTo(reference.measurements.eye_line_ratio!, 0.01);
      const pixels = await sharp(r.photo.buffer).removeAlpha().raw().toBuffer();
      expect(pixels.length, name).to.equal(refPixels.length);
      let squared = 0;
      const meanDiff = [0, 0, 0];
      for (let i = 0; i < pixels.length; i++) {
        const d = pixels[i] - refPixels[i];
        squared += d * d;
        meanDiff[i % 3] += d / (pixels.length / 3);
      }
      // A colour space decoded wrongly in either decode shifts a channel's mean by tens of levels
      // (CMYK read as RGB, a profile ignored); the conversions' own rounding moves it by a few.
      for (const m of meanDiff) expect(Math.abs(m), `${name}: mean channel difference`).to.be.below(6);
      const psnr = 10 * Math.log10((255 * 255) / (squared / pixels.length));
      expect(psnr, `${name}: PSNR against the plain file's photo`).to.be.above(minPsnr);
    }
  });
});
