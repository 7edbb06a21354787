// outputSize (src/imaging/output-size.ts), the sharp-free copy of sharp's resize geometry used by
// the front door's keyless caps and the focus crop, against what the real pipeline renders: a grid
// of source sizes × (w only, h only, w×h boxes with every fit, focal crop) × (as is, crop, rot 90),
// each output decoded by sharp. PNG and WebP sources are decoded whole, as the pipeline does after
// crop or rot, so the size must be exact. A JPEG resized straight from the file is decoded with
// shrink-on-load, which sharp documents may round an auto-scaled side differently: there the box
// sides must be exact and the derived side within the bound stated in output-size.ts.
import { expect } from 'chai';
import sharp from 'sharp';
import { outputSize, resizeSource, type Size } from '../../src/imaging/output-size.js';
import { derivativeKey, resolvePlan, type ResolvedFit, type TransformPlan } from '../../src/imaging/params.js';
import { renderDerivative } from '../../src/imaging/pipeline.js';

const settings = { avifEffort: 0, webpEffort: 0, maxInputPixels: 50_000_000 };
// JPEG output: the cheapest encode (only the size is read back).
const BASE: TransformPlan = { fit: 'contain', quality: 80, format: 'jpeg', blur: 0, sharp: 0, bri: 0, con: 0, sat: 0, hue: 0, opt: false };
const FITS: ResolvedFit[] = ['cover', 'contain', 'fill', 'inside', 'outside', 'within'];
// Landscape, portrait, near-square, a thin strip and a tiny one (the one-pixel floor).
const SOURCES: Size[] = [
  { width: 640, height: 480 },
  { width: 333, height: 777 },
  { width: 601, height: 597 },
  { width: 1200, height: 181 },
  { width: 5, height: 3 },
];

type Geometry = Partial<Pick<TransformPlan, 'width' | 'height' | 'fit' | 'focus' | 'gravity' | 'crop' | 'rot' | 'pad'>>;

function resizes(): Geometry[] {
  const out: Geometry[] = [{ width: 100 }, { height: 77 }, { width: 100, fit: 'within' }, { height: 77, fit: 'fill' }, { width: 700 }, { height: 700, fit: 'within' }];
  // A wide and a tall box, and one larger than most sources on one side or both, each with every fit.
  for (const [width, height] of [[250, 120], [37, 401], [900, 900]]) for (const fit of FITS) out.push({ width, height, fit });
  out.push({ width: 180, height: 180, fit: 'cover', gravity: 'focal', focus: { x: 0.2, y: 0.8 } });
  out.push({ width: 120, height: 90, fit: 'contain', pad: 7 });
  return out;
}

function geometries(source: Size): Geometry[] {
  const crop = { left: Math.floor(source.width / 5), top: 0, width: Math.max(1, Math.floor(source.width / 2)), height: Math.max(1, Math.floor((source.height * 2) / 3)) };
  return resizes().flatMap((g) => [g, { ...g, crop }, { ...g, rot: 90 as const }]);
}

const describeGeometry = (g: Geometry) => JSON.stringify(g);

async function rendered(input: Buffer, plan: TransformPlan): Promise<Size> {
  const out = await renderDerivative(input, plan, settings);
  const meta = await sharp(out.buffer).metadata();
  return { width: meta.width!, height: meta.height! };
}

async function sourceBytes(size: Size, format: 'png' | 'webp' | 'jpeg'): Promise<Buffer> {
  // Noise, so encoders and decoders meet real content.
  const image = sharp({ create: { ...size, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } });
  return format === 'png' ? image.png().toBuffer() : format === 'webp' ? image.webp({ lossless: true }).toBuffer() : image.jpeg({ quality: 90 }).toBuffer();
}

describe('outputSize: sharp’s resize geometry without sharp', function () {
  this.timeout(120_000);

  for (const format of ['png', 'webp'] as const) {
    for (const source of SOURCES) {
      it(`${format} ${source.width}×${source.height}: every plan renders at exactly outputSize`, async () => {
        const input = await sourceBytes(source, format);
        const wrong: string[] = [];
        for (const g of geometries(source)) {
          const plan = { ...BASE, ...g };
          const expected = outputSize(source, plan);
          const actual = await rendered(input, plan);
          if (actual.width !== expected.width || actual.height !== expected.height) wrong.push(`${describeGeometry(g)}: sharp ${actual.width}×${actual.height}, outputSize ${expected.width}×${expected.height}`);
        }
        expect(wrong).to.deep.equal([]);
      });
    }
  }

  for (const source of SOURCES) {
    it(`jpeg ${source.width}×${source.height}: exact after crop or rot and for w×h boxes; shrink-on-load moves a derived side by at most the bound`, async () => {
      const input = await sourceBytes(source, 'jpeg');
      const wrong: string[] = [];
      let offByShrinkOnLoad = 0;
      for (const g of geometries(source)) {
        const plan = { ...BASE, ...g };
        const expected = outputSize(source, plan);
        const actual = await rendered(input, plan);
        const exactBox = g.width !== undefined && g.height !== undefined && (g.fit === 'cover' || g.fit === 'contain' || g.fit === 'fill');
        const decodedWhole = g.crop !== undefined || g.rot !== undefined;
        const dw = Math.abs(actual.width - expected.width);
        const dh = Math.abs(actual.height - expected.height);
        if (dw === 0 && dh === 0) continue;
        const resizeSrc = resizeSource(source, plan);
        const bound = 1 + Math.ceil(Math.max(resizeSrc.width / resizeSrc.height, resizeSrc.height / resizeSrc.width));
        const oneSideExact = dw === 0 || dh === 0;
        if (exactBox || decodedWhole || !oneSideExact || Math.max(dw, dh) > bound) {
          wrong.push(`${describeGeometry(g)}: sharp ${actual.width}×${actual.height}, outputSize ${expected.width}×${expected.height} (bound ${bound})`);
        } else offByShrinkOnLoad++;
      }
      expect(wrong).to.deep.equal([]);
      // Most plans are exact even here: the difference is the exception, not the rule.
      expect(offByShrinkOnLoad, 'plans off by shrink-on-load').to.be.lessThan(geometries(source).length / 4);
    });
  }

  it('one side with fit=fill is the same derivative as without fit: same key, same rendered size', async () => {
    const source = SOURCES[0];
    const input = await sourceBytes(source, 'png');
    const ctx = { accept: '', sourceFormat: 'png' as const, preferWebpWhenUnsure: false };
    for (const side of [{ w: 100 }, { h: 77 }]) {
      const plain = resolvePlan('B', { ...side, f: 'png' }, ctx).plan;
      const fill = resolvePlan('B', { ...side, fit: 'fill', f: 'png' }, ctx).plan;
      expect(derivativeKey('u/images/a.png', 'v1', fill)).to.equal(derivativeKey('u/images/a.png', 'v1', plain));
      const [plainSize, fillSize] = [await rendered(input, plain), await rendered(input, fill)];
      expect(fillSize, JSON.stringify(side)).to.deep.equal(plainSize);
      expect(plainSize).to.deep.equal(outputSize(source, plain));
    }
  });
});
