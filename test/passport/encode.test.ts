// The passport photo's encode step: the luma unsharp mask (vision/sharpen.ts, sharpenLuma) and the sRGB
// profile put into the JPEG without libvips' sRGB-to-sRGB pixel transform (srgb-profile.ts).
import { expect } from 'chai';
import sharp from 'sharp';
import { ENHANCE } from '../../src/passport/enhance.js';
import { sharpenLuma } from '../../src/vision/sharpen.js';
import { encodeWithinLimit } from '../../src/passport/encode.js';
import { PASSPORT_SPECS } from '../../src/passport/specs.js';
import { type RawImage } from '../../src/vision/raw-image.js';

function rgb(width: number, height: number, at: (x: number, y: number) => [number, number, number]): RawImage {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set(at(x, y), (y * width + x) * 3);
  return { data, width, height, channels: 3 };
}

describe('passport encode', () => {
  it('sharpenLuma leaves flat areas alone and steepens an edge within the limits, the same change on R, G and B', () => {
    const flat = rgb(40, 40, () => [200, 150, 120]);
    expect(Buffer.from(sharpenLuma(flat, ENHANCE.SHARPEN).data).equals(Buffer.from(flat.data))).to.equal(true);
    const edge = rgb(40, 40, (x) => (x < 20 ? [60, 70, 80] : [180, 170, 160]));
    const out = sharpenLuma(edge, ENHANCE.SHARPEN);
    const px = (img: RawImage, x: number) => Array.from(img.data.subarray((20 * 40 + x) * 3, (20 * 40 + x) * 3 + 3));
    // Darker just before the edge, lighter just after: the unsharp mask's overshoot.
    expect(px(out, 19)[0]).to.be.below(60);
    expect(px(out, 20)[0]).to.be.above(180);
    // Bounded by the curve's limits (darkening y3, lightening y2), and far from the edge unchanged.
    expect(60 - px(out, 19)[0]).to.be.at.most(ENHANCE.SHARPEN.y3);
    expect(px(out, 20)[0] - 180).to.be.at.most(ENHANCE.SHARPEN.y2);
    expect(px(out, 5)).to.deep.equal([60, 70, 80]);
    expect(px(out, 35)).to.deep.equal([180, 170, 160]);
    // Same change on every channel (hue kept).
    const d = px(out, 19).map((v, c) => v - px(edge, 19)[c]);
    expect(d[0]).to.equal(d[1]).and.equal(d[2]);
  });

  it('writes the JPEG with libvips’ own sRGB profile and the density, pixels not transformed', async () => {
    const img = rgb(120, 90, (x, y) => [(x * 2) % 256, (y * 3) % 256, 128]);
    const spec = PASSPORT_SPECS.usa;
    const { buffer, pixels } = await encodeWithinLimit(img, spec, false);
    const meta = await sharp(buffer).metadata();
    const reference = await sharp(Buffer.from(img.data), { raw: { width: 120, height: 90, channels: 3 } }).jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).withIccProfile('srgb').toBuffer();
    expect(meta.icc, 'an ICC profile').to.not.equal(undefined);
    expect(meta.icc!.equals((await sharp(reference).metadata()).icc!)).to.equal(true);
    expect(meta.density).to.equal(spec.dpi);
    expect([meta.width, meta.height, meta.format]).to.deep.equal([120, 90, 'jpeg']);
    expect(pixels.data).to.equal(img.data);
    // The decoded JPEG is the encoded pixels within JPEG's error: no colour transform moved them.
    const decoded = await sharp(buffer).raw().toBuffer();
    let sum = 0;
    for (let i = 0; i < decoded.length; i++) sum += Math.abs(decoded[i] - img.data[i]);
    expect(sum / decoded.length).to.be.below(3);
  });
});
