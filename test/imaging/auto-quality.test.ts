// q=auto (src/imaging/auto-quality.ts through the real pipeline) on the corpus photos and
// portraits, WebP and JPEG at width 1200. SSIM is measured here by the test's own implementation
// (8×8 non-overlapping blocks on BT.601 luma, written below, not the service's) on pixels the test
// decodes itself, against the same plan rendered losslessly (PNG: the resize without encoding).
// The service's own measure is checked against ssim.js, the library it computes the same SSIM as.
// The byte comparison is against the single fixed quality that brings every image to the auto
// outputs' worst-case SSIM: the one number a careful user would otherwise have to pick for all.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { ssim } from 'ssim.js';
import { AUTO_QUALITY_TARGETS, MAX_ENCODES, chooseQuality, lumaReference, lumaSsim } from '../../src/imaging/auto-quality.js';
import { resolvePlan, type AutoQualityVariant, type OutputFormat, type TransformRequest } from '../../src/imaging/params.js';
import { renderDerivative } from '../../src/imaging/pipeline.js';

const settings = { avifEffort: 0, webpEffort: 3, maxInputPixels: 50_000_000 };
const CORPUS = join(process.cwd(), 'test/fixtures/corpus');
const IMAGES = ['photos', 'faces'].flatMap((dir) => readdirSync(join(CORPUS, dir)).filter((f) => /\.(jpe?g|png)$/.test(f)).map((f) => join(dir, f)));

interface Luma {
  data: Float64Array;
  width: number;
  height: number;
}

type Pixels = Buffer | { data: Buffer; width: number; height: number; channels?: number } | { data: Buffer; info: { width: number; height: number; channels: number } };

async function luma(image: Pixels): Promise<Luma> {
  const raw = Buffer.isBuffer(image) ? undefined : 'info' in image ? image.info : { width: image.width, height: image.height, channels: image.channels ?? 3 };
  const input = Buffer.isBuffer(image) ? sharp(image) : sharp(image.data, { raw: { width: raw!.width, height: raw!.height, channels: raw!.channels as 3 } });
  const { data, info } = await input.removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  const out = new Float64Array(info.width * info.height);
  for (let i = 0; i < out.length; i++) out[i] = 0.299 * data[i * info.channels] + 0.587 * data[i * info.channels + 1] + 0.114 * data[i * info.channels + 2];
  return { data: out, width: info.width, height: info.height };
}

/** Mean SSIM over non-overlapping 8×8 blocks (partial edge blocks included), standard constants. */
function blockSsim(a: Luma, b: Luma): number {
  expect([b.width, b.height]).to.deep.equal([a.width, a.height]);
  const c1 = (0.01 * 255) ** 2;
  const c2 = (0.03 * 255) ** 2;
  let sum = 0;
  let blocks = 0;
  for (let y0 = 0; y0 < a.height; y0 += 8) {
    for (let x0 = 0; x0 < a.width; x0 += 8) {
      let sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, n = 0;
      for (let y = y0; y < Math.min(y0 + 8, a.height); y++) {
        for (let x = x0; x < Math.min(x0 + 8, a.width); x++) {
          const va = a.data[y * a.width + x];
          const vb = b.data[y * a.width + x];
          sa += va; sb += vb; saa += va * va; sbb += vb * vb; sab += va * vb; n++;
        }
      }
      const ma = sa / n, mb = sb / n;
      const va = saa / n - ma * ma, vb = sbb / n - mb * mb, cov = sab / n - ma * mb;
      sum += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
      blocks++;
    }
  }
  return sum / blocks;
}

function plan(req: TransformRequest) {
  return resolvePlan('A', req, { accept: '', sourceFormat: 'jpeg', preferWebpWhenUnsure: false }).plan;
}

describe('q=auto', function () {
  this.timeout(600_000);

  it('keys the variant and keeps numeric keys; accepts auto and auto:<variant> only', function () {
    expect(plan({ w: 1200, f: 'webp', q: 'auto' }).autoQuality).to.equal('good');
    expect(plan({ w: 1200, f: 'webp', q: 'auto:eco' }).autoQuality).to.equal('eco');
    expect(plan({ w: 1200, f: 'webp', q: 70 }).autoQuality).to.equal(undefined);
  });

  it('lumaSsim is ssim.js\'s 8×8-block SSIM (Bezkrovny), on grey pixels where both read the same luma', async function () {
    // ssim.js rounds luma to integers; on grey pixels (r = g = b) both read the grey value itself.
    const grey = async (image: Sharp) => {
      const { data, info } = await image.greyscale().toColourspace('b-w').raw().toBuffer({ resolveWithObject: true });
      const rgba = Buffer.alloc(info.width * info.height * 4, 255);
      for (let i = 0; i < data.length; i++) rgba.fill(data[i], i * 4, i * 4 + 3);
      return { data: rgba, info: { ...info, channels: 4 as const } };
    };
    // 601×451: partial blocks at the right and bottom edges.
    const reference = await grey(sharp(readFileSync(join(CORPUS, 'photos/Retina.jpg'))).resize(601, 451, { fit: 'fill' }));
    const luma = lumaReference(reference);
    const asImage = (raw: typeof reference) => ({ data: new Uint8ClampedArray(raw.data), width: raw.info.width, height: raw.info.height });
    for (const quality of [10, 40, 80]) {
      const decoded = await grey(sharp(await sharp(reference.data, { raw: reference.info }).jpeg({ quality }).toBuffer()));
      const theirs = ssim(asImage(reference), asImage(decoded), { ssim: 'bezkrovny', windowSize: 8, downsample: false }).mssim;
      expect(lumaSsim(luma, decoded), `q=${quality}`).to.be.closeTo(theirs, 1e-6);
    }
  });

  it('chooseQuality encodes at most four times and answers the lowest probed quality that met the target', async function () {
    const reference = await sharp(readFileSync(join(CORPUS, 'photos/Coffee.jpg'))).resize(400).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const probes: { quality: number; ssim: number }[] = [];
    const webp = async (quality: number) => {
      const buffer = await sharp(reference.data, { raw: reference.info }).webp({ quality }).toBuffer();
      const decoded = await sharp(buffer).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      // The search's own measure here: this checks the search, the outputs' SSIM is checked below.
      probes.push({ quality, ssim: lumaSsim(reference, decoded) });
      return { buffer, decoded };
    };
    const chosen = await chooseQuality('webp', 'good', reference, webp);
    expect(probes.length).to.be.within(2, MAX_ENCODES);
    const target = AUTO_QUALITY_TARGETS.good;
    expect(chosen.quality).to.equal(Math.min(...probes.filter((p) => p.ssim >= target).map((p) => p.quality)));
    // Never within the target (each candidate decodes blurred): the last probe is the highest quality.
    const blurred = await sharp(reference.data, { raw: reference.info }).blur(4).raw().toBuffer({ resolveWithObject: true });
    const tried: number[] = [];
    const hopeless = await chooseQuality('jpeg', 'best', reference, async (quality) => (tried.push(quality), { buffer: Buffer.alloc(0), decoded: blurred }));
    expect(tried.length).to.be.within(2, MAX_ENCODES);
    expect(hopeless.quality).to.equal(95).and.equal(tried[tried.length - 1]);
  });

  for (const format of ['webp', 'jpeg'] as const satisfies readonly OutputFormat[]) {
    it(`${format}, width 1200: each output meets its variant's target; fewer bytes than one fixed quality at the same worst case`, async function () {
      const variant: AutoQualityVariant = 'good';
      const rows: { name: string; quality: number; bytes: number; ssim: number; reference: { data: Buffer; width: number; height: number }; refLuma: Luma }[] = [];
      for (const name of IMAGES) {
        const input = readFileSync(join(CORPUS, name));
        const out = await renderDerivative(input, plan({ w: 1200, f: format, q: `auto:${variant}` }), settings);
        const lossless = await renderDerivative(input, plan({ w: 1200, f: 'png' }), settings);
        const ref = await sharp(lossless.buffer).removeAlpha().raw().toBuffer({ resolveWithObject: true });
        const reference = { data: ref.data, width: ref.info.width, height: ref.info.height };
        const refLuma = await luma(reference);
        const ssim = blockSsim(refLuma, await luma(out.buffer));
        expect(out.notes.quality, name).to.be.a('number');
        expect(ssim, `${name} at q=${out.notes.quality}`).to.be.at.least(AUTO_QUALITY_TARGETS[variant]);
        rows.push({ name, quality: out.notes.quality!, bytes: out.buffer.length, ssim, reference, refLuma });
      }
      expect(new Set(rows.map((r) => r.quality)).size, 'chosen qualities').to.be.above(1);
      const worst = Math.min(...rows.map((r) => r.ssim));
      // The same encoder settings as the service's (opt=false), on the same unencoded pixels.
      const encode = (r: (typeof rows)[number], quality: number) => {
        const image = sharp(r.reference.data, { raw: { width: r.reference.width, height: r.reference.height, channels: 3 } });
        return (format === 'jpeg' ? image.jpeg({ quality }) : image.webp({ quality, effort: settings.webpEffort })).toBuffer();
      };
      const meets = async (r: (typeof rows)[number], quality: number) => blockSsim(r.refLuma, await luma(await encode(r, quality))) >= worst;
      // Lowest fixed quality per image reaching the worst case (bisection), then the largest of them, checked on all.
      let fixed = 1;
      for (const r of rows) {
        let lo = 1, hi = 100;
        while (lo < hi) {
          const mid = Math.floor((lo + hi) / 2);
          if (await meets(r, mid)) hi = mid;
          else lo = mid + 1;
        }
        fixed = Math.max(fixed, lo);
      }
      while (fixed < 100 && !(await Promise.all(rows.map((r) => meets(r, fixed)))).every(Boolean)) fixed++;
      const fixedBytes = (await Promise.all(rows.map((r) => encode(r, fixed)))).reduce((s, b) => s + b.length, 0);
      const autoBytes = rows.reduce((s, r) => s + r.bytes, 0);
      const report = rows.map((r) => `${r.name} q=${r.quality} ssim=${r.ssim.toFixed(4)} ${r.bytes} B`).join('\n      ');
      console.log(`      ${format}: auto ${autoBytes} B vs fixed q=${fixed} ${fixedBytes} B (ratio ${(autoBytes / fixedBytes).toFixed(3)}), worst SSIM ${worst.toFixed(4)}\n      ${report}`);
      expect(autoBytes).to.be.at.most(0.85 * fixedBytes);
    });
  }
});
