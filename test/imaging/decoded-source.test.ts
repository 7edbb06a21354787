// A render started from an original's decoded pixels (the worker's decoded-source cache) must give
// the bytes the render from the original's bytes gives, for every request the pixels are used for:
// each JPEG shrink-on-load factor sharp picks (1, 2, 4, 8, and its boundaries), every fit, effects,
// padding, q=auto and every output format. Sources and requests the pixels cannot serve exactly
// (EXIF rotation, CMYK, grey, P3, gamma, geometry before the resize, attention and entropy
// crops, PNG sources) must not ask for them.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { decodeJpegAtShrink } from '../../src/imaging/jpeg-shrink-decoder.js';
import { resolvePlan, type TransformRequest } from '../../src/imaging/params.js';
import { renderDerivative } from '../../src/imaging/pipeline.js';
import type { DecodedSourceLookup } from '../../src/imaging/transform-param.js';
import { CORPUS, cmykJpeg, displayP3Jpeg, exifRotatedJpeg, jpeg } from '../fixtures/images.js';

const settings = { webpEffort: 3, avifEffort: 0, maxInputPixels: 40_000_000 };

/** Seeded noise (every pixel differs from its neighbours, so any change of the resize shows). */
function noisyJpeg(width: number, height: number, options: { progressive?: boolean; icc?: boolean } = {}): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let x = 12345;
  for (let i = 0; i < raw.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    raw[i] = (x >>> 16) & 0xff;
  }
  const image = sharp(raw, { raw: { width, height, channels: 3 } }).blur(1.2);
  return (options.icc ? image.withIccProfile('srgb') : image).jpeg({ quality: 88, progressive: options.progressive }).toBuffer();
}

const planOf = (request: TransformRequest) => resolvePlan('B', request, { accept: '', sourceFormat: 'jpeg', preferWebpWhenUnsure: false }).plan;

/** Renders with and without the pixels; returns both outputs and the factors the pipeline asked for. */
async function bothWays(source: Buffer, request: TransformRequest) {
  const asked: number[] = [];
  // Without pixels the render falls back to the original, and equal bytes would say nothing.
  const served: boolean[] = [];
  const lookup: DecodedSourceLookup = async (shrink) => {
    asked.push(shrink);
    const decoded = await decodeJpegAtShrink(source, shrink);
    served.push(decoded !== undefined);
    return decoded;
  };
  const plan = planOf(request);
  const plain = await renderDerivative(source, plan, settings);
  const cached = await renderDerivative(source, plan, settings, { decodedSource: lookup });
  return { plain, cached, asked, served };
}

describe('rendering from decoded source pixels', function () {
  this.timeout(120_000);

  it('gives the same bytes as the render from the original, at every shrink-on-load factor', async () => {
    const sources = {
      noisy: await noisyJpeg(1001, 667, { icc: true }),
      progressive: await noisyJpeg(667, 1001, { progressive: true }),
    };
    // Widths around each boundary of sharp's factor choice for a 1001-px side (shrink 2, 3, 4, 5, 8, 16).
    const widths = [1001, 700, 501, 500, 334, 333, 251, 250, 201, 200, 126, 125, 63, 62];
    const factors = new Set<number>();
    for (const [name, source] of Object.entries(sources)) {
      for (const w of widths) {
        for (const f of ['jpeg', 'webp'] as const) {
          const { plain, cached, asked, served } = await bothWays(source, name === 'noisy' ? { w, f, q: 80 } : { h: w, f, q: 80 });
          expect(served, `${name} w=${w} ${f}`).to.deep.equal([true]);
          asked.forEach((s) => factors.add(s));
          expect(cached.buffer.equals(plain.buffer), `${name} w=${w} ${f} (factor ${asked[0]})`).to.equal(true);
        }
      }
    }
    expect([...factors].sort()).to.deep.equal([1, 2, 4, 8]);
  });

  it('gives the same bytes for boxes, fits, effects, padding, q=auto and every format', async () => {
    const source = await noisyJpeg(1001, 667);
    const requests: TransformRequest[] = [
      { w: 300, h: 300, fit: 'cover', f: 'jpeg' },
      { w: 300, h: 100, fit: 'contain', f: 'png' },
      { w: 240, h: 400, fit: 'fill', f: 'webp' },
      { w: 400, h: 90, fit: 'inside', f: 'avif' },
      { w: 160, h: 300, fit: 'outside', f: 'jpeg' },
      { w: 2000, f: 'jpeg' },
      { w: 320, gravity: 'south', h: 320, fit: 'cover', f: 'webp' },
      { w: 330, blur: 2, sharp: 1, sat: 1.3, hue: 30, f: 'jpeg' },
      { w: 330, grayscale: true, f: 'webp' },
      { w: 300, pad: 10, bg: 'ff0000', f: 'jpeg' },
      { w: 410, q: 'auto', f: 'webp' },
      { w: 250, dpr: 2, f: 'jpeg' },
      // Sizes whose vertical reduce libvips rounds differently from raw pixels in memory.
      { w: 320, h: 320, fit: 'cover', gravity: 'north', f: 'png' },
      { h: 320, f: 'jpeg' },
      { w: 320, h: 320, fit: 'fill', f: 'webp' },
    ] as TransformRequest[];
    for (const request of requests) {
      const { plain, cached, served } = await bothWays(source, request);
      expect(served, JSON.stringify(request)).to.deep.equal([true]);
      expect(cached.buffer.equals(plain.buffer), JSON.stringify(request)).to.equal(true);
      expect(cached.notes).to.deep.equal(plain.notes);
    }
  });

  it('gives the same bytes on a corpus photo at the bench widths', async () => {
    const source = fs.readFileSync(path.join(CORPUS, 'photos', 'Coffee.jpg'));
    for (const w of [600, 704, 848, 856, 992]) {
      const { plain, cached, served } = await bothWays(source, { w, f: 'jpeg', q: 80 });
      expect(served, `w=${w}`).to.deep.equal([true]);
      expect(cached.buffer.equals(plain.buffer), `w=${w}`).to.equal(true);
    }
  });

  it('renders the normal way what the pixels cannot serve exactly', async () => {
    const noisy = await noisyJpeg(401, 301);
    const normal: [string, Buffer, TransformRequest][] = [
      ['EXIF-rotated', await exifRotatedJpeg(400, 200), { w: 120, f: 'jpeg' }],
      ['CMYK', await cmykJpeg(400, 300), { w: 120, f: 'jpeg' }],
      ['Display P3', await displayP3Jpeg(undefined, 400, 300), { w: 120, f: 'jpeg' }],
      ['grey', await sharp(await jpeg(400, 300)).toColourspace('b-w').jpeg().toBuffer(), { w: 120, f: 'jpeg' }],
      ['PNG', await sharp(noisy).png().toBuffer(), { w: 120, f: 'jpeg' }],
      ['gamma', noisy, { w: 120, gamma: 2.2, f: 'jpeg' } as TransformRequest],
      ['crop before the resize', noisy, { w: 120, crop: '10,10,200,200', f: 'jpeg' } as TransformRequest],
      ['rot', noisy, { w: 120, rot: 90, f: 'jpeg' } as TransformRequest],
      ['attention crop', noisy, { w: 120, h: 120, fit: 'cover', gravity: 'attention', f: 'webp' } as TransformRequest],
      ['entropy crop', noisy, { w: 120, h: 120, fit: 'cover', gravity: 'entropy', f: 'webp' } as TransformRequest],
    ];
    for (const [name, source, request] of normal) {
      const { plain, cached, asked } = await bothWays(source, request);
      expect(cached.buffer.equals(plain.buffer), name).to.equal(true);
      // The rotated JPEG is asked for (its orientation is read in the decode), and refused there.
      if (name === 'EXIF-rotated') expect(await decodeJpegAtShrink(source, asked[0] ?? 1), name).to.equal(undefined);
      else expect(asked, name).to.deep.equal([]);
    }
  });

  it('decodes what libvips decodes, and refuses a broken JPEG', async () => {
    const source = await noisyJpeg(301, 201);
    const full = await decodeJpegAtShrink(source, 1);
    const reference = await sharp(source).raw().toBuffer({ resolveWithObject: true });
    const pixels = await sharp(full!.tiff).raw().toBuffer({ resolveWithObject: true });
    expect(pixels.info).to.include({ width: 301, height: 201, channels: 3 });
    expect(full).to.include({ width: 301, height: 201 });
    expect(pixels.data.equals(reference.data)).to.equal(true);
    expect(full!.density).to.be.closeTo((await sharp(source).metadata()).density!, 0.01);
    const half = await decodeJpegAtShrink(source, 2);
    expect(half).to.include({ width: 150, height: 100 });
    const broken = Buffer.concat([source.subarray(0, 600), Buffer.alloc(source.length - 600, 0x5a)]);
    expect(await decodeJpegAtShrink(broken, 2)).to.equal(undefined);
    expect(await decodeJpegAtShrink(Buffer.from('not a jpeg'), 2)).to.equal(undefined);
  });
});
