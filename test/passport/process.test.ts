import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { PassportInputError } from '../../src/passport/errors.js';
import { detectFaces } from '../../src/vision/face-detector.js';
import { segmentPerson } from '../../src/vision/segmenter.js';
import { faceBoxFromFields, processPassportPhoto, type PassportResult } from '../../src/passport/process-passport-photo.js';
import { PASSPORT_COUNTRIES, PASSPORT_SPECS, type PassportSpec } from '../../src/passport/specs.js';
import {
  applySimilarity,
  canvasWith,
  colorDistance,
  crownByPixels,
  decodeRgb,
  decodeRgba,
  headRollOnPhoto,
  mappingFromFaces,
  meanColor,
  measureFace,
  PHOTOS_DIR,
  PORTRAITS,
  readCorpus,
  processed,
  sourceFace,
  type FaceMeasure,
} from './helpers.js';

async function expectInputError(p: Promise<unknown>, code: string, message?: RegExp): Promise<PassportInputError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(PassportInputError);
    const err = e as PassportInputError;
    expect(err.code).to.equal(code);
    expect(err.status).to.equal(422);
    if (message) expect(err.message).to.match(message);
    return err;
  }
  expect.fail(`expected PassportInputError ${code}`);
}

/** Crown by the person mask of the output itself (the test runs the segmenter; used without bg replacement). */
async function crownByMask(buf: Buffer, out: FaceMeasure): Promise<number> {
  const img = await decodeRgba(buf);
  const prob = await segmentPerson(img);
  const x0 = Math.round(out.centerX - 0.3 * out.face.box.width);
  const x1 = Math.round(out.centerX + 0.3 * out.face.box.width);
  for (let y = 0; y < img.height; y++) {
    let n = 0;
    for (let x = x0; x <= x1; x++) if (prob[y * img.width + x] >= 0.5) n++;
    if (n >= 0.12 * (x1 - x0 + 1)) return y;
  }
  return img.height;
}

async function expectSpecFile(r: PassportResult, spec: PassportSpec): Promise<void> {
  const meta = await sharp(r.photo.buffer).metadata();
  expect(meta.format).to.equal('jpeg');
  expect([meta.width, meta.height]).to.deep.equal([spec.digital.width, spec.digital.height]);
  expect([r.photo.width, r.photo.height]).to.deep.equal([spec.digital.width, spec.digital.height]);
  expect(meta.density).to.equal(spec.dpi);
  expect(r.photo.dpi).to.equal(spec.dpi);
  expect(meta.space).to.equal('srgb');
  expect(meta.channels).to.equal(3);
  expect(meta.icc, 'sRGB ICC profile embedded').to.be.instanceOf(Buffer);
  expect(r.photo.bytes).to.equal(r.photo.buffer.length);
  if (spec.fileSizeKb.max !== null) expect(r.photo.bytes).to.be.at.most(spec.fileSizeKb.max * 1000);
  if (spec.fileSizeKb.min !== null) expect(r.photo.bytes).to.be.at.least(spec.fileSizeKb.min * 1024);
}

describe('processPassportPhoto', function () {
  this.timeout(120_000);

  describe('shared portraits x countries: spec size/DPI, and head height and eye line measured on the output', () => {
    for (const portrait of PORTRAITS) {
      for (const country of PASSPORT_COUNTRIES) {
        it(`${portrait.name} -> ${country}`, async () => {
          const spec = PASSPORT_SPECS[country];
          const r = await processed(portrait, { country });
          await expectSpecFile(r, spec);
          const H = spec.digital.height;
          // independent measurements on the output
          const src = await sourceFace(portrait);
          const out = await measureFace(r.photo.buffer);
          expect(out.count, 'faces detected on the output').to.equal(1);
          const eyeLine = 1 - out.eyeY / H;
          if (spec.eyeLineRatio) expect(eyeLine, 'eye line (detector on the output)').to.be.within(spec.eyeLineRatio[0], spec.eyeLineRatio[1]);
          const T = mappingFromFaces(src.face, out.face);
          const chinY = applySimilarity(T, portrait.chin).y;
          const labelCrownY = applySimilarity(T, portrait.crown).y;
          const img = await decodeRgb(r.photo.buffer);
          const band = 0.3 * out.face.box.width;
          const crownY = crownByPixels(img, out.centerX - band, out.centerX + band, spec.background.rgb);
          const head = (chinY - crownY) / H;
          expect(head, 'head height: labelled chin mapped to the output, crown from output pixels').to.be.within(spec.headHeightRatio[0], spec.headHeightRatio[1]);
          const headLabels = (chinY - labelCrownY) / H;
          // The 3/4-profile portrait's chin and crown estimates are off by about 4 % of the head
          // (geometry.ts); on the +-2 mm documents (32-36 mm) that is most of the tolerance, so its
          // labelled head may exceed the range by that error. Frontal portraits must be inside.
          const slack = portrait.profile ? 0.04 * spec.headHeightRatio[1] : 0;
          expect(headLabels, 'head height from the labelled crown and chin').to.be.within(spec.headHeightRatio[0] - slack, spec.headHeightRatio[1] + slack);
          expect(Math.abs(crownY - labelCrownY) / H, 'pixel crown vs labelled crown').to.be.below(0.05);
          expect(Math.abs(out.centerX / spec.digital.width - 0.5), 'horizontal centring').to.be.below(0.04);
          // The head's roll (the 3/4 profile's eye line is foreshortened: geometry.ts); its far eye's keypoint is a guess, yet level within 3.
          expect(Math.abs(await headRollOnPhoto(r.photo.buffer)), 'level head on the output').to.be.below(3);
          expect(r.checks.find((c) => c.name === 'head_roll')?.status, 'head_roll as reported').to.equal('pass');
          // the processor's report agrees with the independent measurement
          expect(r.measurements.eye_line_ratio).to.be.closeTo(eyeLine, 0.02);
          expect(r.measurements.head_height_ratio).to.be.closeTo(head, 0.05);
          expect(r.checks.find((c) => c.name === 'head_height')?.passed).to.equal(true);
          const sizeCheck = r.checks.find((c) => c.name === 'file_size');
          expect(sizeCheck?.passed, sizeCheck?.message).to.equal(true);
          if (spec.fileSizeKb.min === null && spec.fileSizeKb.max === null) expect(sizeCheck?.expected, 'printed-only: no kB rule').to.equal(null);
          const eyeCheck = r.checks.find((c) => c.name === 'eye_line');
          expect(eyeCheck?.passed).to.equal(true);
          if (!spec.eyeLineRatio) {
            // Not set by this document: passed, the measured value, no rule; the crop followed the documented rule instead.
            expect(eyeCheck?.expected).to.equal(null);
            expect(eyeCheck?.value).to.be.closeTo(eyeLine, 0.02);
            expect(eyeCheck?.message).to.match(/not set by this document/);
            const topMm = ((chinY - head * H) / H) * spec.print.heightMm;
            if (spec.topMarginMm) {
              expect(topMm, 'top of the hair to the top edge, mm (pixels of the output)').to.be.within(spec.topMarginMm[0] - 1, spec.topMarginMm[1] + 1);
              expect(r.checks.find((c) => c.name === 'head_top_margin')?.passed).to.equal(true);
            } else {
              // head centred: the gaps above the crown and below the chin agree within 3 mm (the
              // labelled chin against the estimated one moves both gaps, each by up to ~1.5 mm)
              expect(Math.abs(topMm - (H - chinY) / H * spec.print.heightMm), 'head centred vertically').to.be.below(3);
            }
          }
          expect(r.face.box.width).to.be.within(0.05, 1);
          expect(r.face.confidence).to.be.within(0.5, 1);
          expect(r.printSheet).to.equal(null);
        });
      }
    }
  });

  describe('remove_bg', () => {
    for (const portrait of PORTRAITS) {
      it(`${portrait.name}: borders are the spec background; the face colour is unchanged`, async () => {
        const spec = PASSPORT_SPECS.usa;
        const bg = spec.background.rgb;
        const input = readCorpus(portrait.file);
        const replaced = await processed(portrait, { country: 'usa', removeBackground: true, enhance: false });
        const kept = await processed(portrait, { country: 'usa', removeBackground: false, enhance: false });
        const img = await decodeRgb(replaced.photo.buffer);
        const W = img.width;
        const H = img.height;
        const dist = (x: number, y: number): number => {
          const j = (y * W + x) * 3;
          return colorDistance([img.data[j], img.data[j + 1], img.data[j + 2]], bg);
        };
        // top rows, full width
        let worst = 0;
        for (let y = 0; y < 3; y++) for (let x = 0; x < W; x++) worst = Math.max(worst, dist(x, y));
        expect(worst, 'top border distance from the background colour').to.be.below(8);
        // side columns over the top fifth (below that, shoulders may legitimately reach the edges)
        worst = 0;
        for (const x of [0, 1, 2, W - 3, W - 2, W - 1]) for (let y = 0; y < H / 5; y++) worst = Math.max(worst, dist(x, y));
        expect(worst, 'side border distance from the background colour').to.be.below(8);
        // Without replacement the original background is still there (the test above is not vacuous).
        const keptImg = await decodeRgb(kept.photo.buffer);
        const keptSides = [meanColor(keptImg, 0, 0, 3, H / 5), meanColor(keptImg, W - 3, 0, W, H / 5)];
        expect(Math.max(...keptSides.map((c) => colorDistance(c, bg)))).to.be.above(20);
        // face region: same mean colour with and without replacement, and as in the source
        const out = await measureFace(replaced.photo.buffer);
        const b = out.face.box;
        const region = [b.x + 0.25 * b.width, b.y + 0.25 * b.height, b.x + 0.75 * b.width, b.y + 0.8 * b.height] as const;
        const faceReplaced = meanColor(img, ...region);
        const faceKept = meanColor(keptImg, ...region);
        expect(colorDistance(faceReplaced, faceKept), 'face colour with vs without bg replacement').to.be.below(3);
        const src = await sourceFace(portrait);
        const sb = src.face.box;
        const srcImg = await decodeRgb(input);
        const faceSrc = meanColor(srcImg, sb.x + 0.25 * sb.width, sb.y + 0.25 * sb.height, sb.x + 0.75 * sb.width, sb.y + 0.8 * sb.height);
        expect(colorDistance(faceReplaced, faceSrc), 'face colour vs the source').to.be.below(8);
      });
    }

    it('enhancement is mild: the face colour moves by a few levels at most', async () => {
      for (const portrait of PORTRAITS) {
        const plain = await processed(portrait, { country: 'usa', removeBackground: true, enhance: false });
        const enhanced = await processed(portrait, { country: 'usa' });
        const out = await measureFace(plain.photo.buffer);
        const b = out.face.box;
        const region = [b.x + 0.25 * b.width, b.y + 0.25 * b.height, b.x + 0.75 * b.width, b.y + 0.8 * b.height] as const;
        const d = colorDistance(meanColor(await decodeRgb(plain.photo.buffer), ...region), meanColor(await decodeRgb(enhanced.photo.buffer), ...region));
        expect(d, portrait.name).to.be.below(15);
        expect(enhanced.measurements.enhancement).to.not.equal(null);
        expect(plain.measurements.enhancement).to.equal(null);
      }
    });

    it('without remove_bg the photo keeps its background and the crown is still found (mask of the output)', async () => {
      const portrait = PORTRAITS[0];
      const spec = PASSPORT_SPECS.usa;
      const r = await processed(portrait, { country: 'usa', removeBackground: false, enhance: false });
      await expectSpecFile(r, spec);
      const out = await measureFace(r.photo.buffer);
      const src = await sourceFace(portrait);
      const chinY = applySimilarity(mappingFromFaces(src.face, out.face), portrait.chin).y;
      const crownY = await crownByMask(r.photo.buffer, out);
      expect((chinY - crownY) / spec.digital.height).to.be.within(spec.headHeightRatio[0], spec.headHeightRatio[1]);
      const eyes = spec.eyeLineRatio!;
      expect(1 - out.eyeY / spec.digital.height).to.be.within(eyes[0], eyes[1]);
      expect(r.checks.find((c) => c.name === 'background_color')?.passed).to.equal(false);
    });
  });

  describe('input errors (PassportInputError, HTTP 422)', () => {
    const photos = readdirSync(PHOTOS_DIR).filter((f) => f.endsWith('.jpg')).sort();
    it(`landscape photos without a face -> no_face (${photos.length} photos)`, async () => {
      expect(photos.length).to.be.greaterThan(0);
      for (const f of photos) await expectInputError(processPassportPhoto(readCorpus(path.join(PHOTOS_DIR, f)), { country: 'usa' }), 'no_face', /No face/);
    });

    it('two portraits side by side -> multiple_faces', async () => {
      const canvas = await canvasWith(1024, 512, [
        { input: readCorpus(PORTRAITS[0].file), left: 0, top: 0 },
        { input: readCorpus(PORTRAITS[1].file), left: 512, top: 0, width: 512, height: 512 },
      ]);
      const err = await expectInputError(processPassportPhoto(canvas, { country: 'usa' }), 'multiple_faces', /Several faces \(2\)/);
      expect(err.details.faces).to.equal(2);
    });

    it('a tiny face -> face_too_small (detected, but needs too much enlargement)', async () => {
      const tiny = await sharp(readCorpus(PORTRAITS[0].file)).resize(160, 160).png().toBuffer();
      const { faces } = await detectFaces(await decodeRgba(tiny));
      expect(faces.length, 'the detector does see the tiny face').to.equal(1);
      await expectInputError(processPassportPhoto(tiny, { country: 'usa' }), 'face_too_small', /too small for a 600x600 px usa photo/);
    });

    it('undecodable bytes -> undecodable_image', async () => {
      await expectInputError(processPassportPhoto(Buffer.from('definitely not an image'), { country: 'usa' }), 'undecodable_image');
      const truncated = readCorpus(PORTRAITS[1].file).subarray(0, 2000);
      await expectInputError(processPassportPhoto(truncated, { country: 'usa' }), 'undecodable_image');
    });

    it('more pixels than the limit -> image_too_large, refused from the header alone', async () => {
      // A real 16x16 PNG whose IHDR claims 10000x10000 (the data would not even match).
      const png = Buffer.from(await sharp({ create: { width: 16, height: 16, channels: 3, background: '#888' } }).png().toBuffer());
      png.writeUInt32BE(10000, 16);
      png.writeUInt32BE(10000, 20);
      const { crc32 } = await import('node:zlib');
      png.writeUInt32BE(crc32(png.subarray(12, 29)), 29);
      await expectInputError(processPassportPhoto(png, { country: 'usa' }), 'image_too_large');
    });

    it('unknown country -> invalid_country listing the allowed values', async () => {
      const err = await expectInputError(processPassportPhoto(readCorpus(PORTRAITS[0].file), { country: 'mars' as never }), 'invalid_country', /usa, india, india_visa, uk, schengen_visa, canada, china, japan/);
      expect(err.details.allowed).to.deep.equal([...PASSPORT_COUNTRIES]);
    });

    it('partial or out-of-range face box -> invalid_face_box', async () => {
      const input = readCorpus(PORTRAITS[0].file);
      expect(() => faceBoxFromFields({ face_x: 0.1, face_y: 0.1, face_width: 0.3 })).to.throw(PassportInputError, /face_height|height missing/);
      expect(() => faceBoxFromFields({ face_x: '0.2', face_y: 0.1, face_width: 1.2, face_height: 0.3 })).to.throw(PassportInputError, /between 0 and 1/);
      expect(() => faceBoxFromFields({ face_x: 0.8, face_y: 0.1, face_width: 0.3, face_height: 0.3 })).to.throw(PassportInputError, /beyond the image/);
      expect(() => faceBoxFromFields({ face_x: 'abc', face_y: 0.1, face_width: 0.3, face_height: 0.3 })).to.throw(PassportInputError);
      expect(faceBoxFromFields({})).to.equal(null);
      expect(faceBoxFromFields({ face_x: '0.3', face_y: '0.1', face_width: '0.2', face_height: '0.25' })).to.deep.equal({ x: 0.3, y: 0.1, width: 0.2, height: 0.25 });
      await expectInputError(processPassportPhoto(input, { country: 'usa', faceBox: { x: 0.1, y: 0.1, width: 0, height: 0.2 } }), 'invalid_face_box');
      await expectInputError(processPassportPhoto(input, { country: 'usa', faceBox: { x: -0.1, y: 0.1, width: 0.2, height: 0.2 } }), 'invalid_face_box');
      await expectInputError(processPassportPhoto(input, { country: 'usa', faceBox: { x: 0.1, y: 0.1, width: 0.2 } as never }), 'invalid_face_box', /height/);
    });
  });

  describe('manual face box', () => {
    it('selects one of two faces (the grey one) instead of failing with multiple_faces', async () => {
      const canvas = await canvasWith(1024, 512, [
        { input: readCorpus(PORTRAITS[0].file), left: 0, top: 0 },
        { input: readCorpus(PORTRAITS[2].file), left: 512, top: 0 },
      ]);
      // The cameraman's face is at about (180-265, 120-205) in his 512 px image.
      const faceBox = { x: (512 + 185) / 1024, y: 120 / 512, width: 75 / 1024, height: 80 / 512 };
      const r = await processPassportPhoto(canvas, { country: 'usa', faceBox, enhance: false });
      expect(r.face.detector).to.equal('manual');
      expect(r.face.box.x).to.be.closeTo(faceBox.x, 1e-9);
      expect(r.checks.find((c) => c.name === 'single_face')?.value, 'faces on the photo').to.equal(1);
      const img = await decodeRgb(r.photo.buffer);
      const out = await measureFace(r.photo.buffer);
      const b = out.face.box;
      const [cr, cg, cb] = meanColor(img, b.x, b.y, b.x + b.width, b.y + b.height);
      expect(Math.max(Math.abs(cr - cg), Math.abs(cg - cb)), 'the face is the greyscale one').to.be.below(3);
      expect(Math.abs(out.centerX / img.width - 0.5)).to.be.below(0.05);
    });

    it('is used when nothing is detected (landscape photo): no error, warnings, and the checks that cannot measure it fail', async () => {
      const photo = readCorpus(path.join(PHOTOS_DIR, readdirSync(PHOTOS_DIR).filter((f) => f.endsWith('.jpg')).sort()[0]));
      const faceBox = { x: 0.45, y: 0.4, width: 0.08, height: 0.12 };
      const r = await processPassportPhoto(photo, { country: 'india_visa', faceBox, removeBackground: false });
      await expectSpecFile(r, PASSPORT_SPECS.india_visa);
      expect(r.face.detector).to.equal('manual');
      expect(r.face.confidence).to.equal(null);
      expect(r.measurements.rotation_applied_degrees).to.equal(0);
      expect(r.warnings.join(' ')).to.match(/Manual face box/);
      // No face on the photo and no head in the mask: the measures say so instead of passing.
      const status = (n: string): string | undefined => r.checks.find((c) => c.name === n)?.status;
      expect([status('single_face'), status('head_height'), status('headwear')]).to.deep.equal(['fail', 'fail', 'fail']);
      expect(r.checks.find((c) => c.name === 'headwear')?.message).to.match(/could not be checked/);
    });
  });

  describe('framing', () => {
    it('a portrait placed off-centre on a large canvas comes out centred, at spec geometry', async () => {
      const portrait = PORTRAITS[0];
      const canvas = await canvasWith(1800, 1300, [{ input: readCorpus(portrait.file), left: 1180, top: 700 }], { r: 90, g: 120, b: 160 });
      const r = await processPassportPhoto(canvas, { country: 'usa' });
      const spec = PASSPORT_SPECS.usa;
      const out = await measureFace(r.photo.buffer);
      expect(Math.abs(out.centerX / spec.digital.width - 0.5)).to.be.below(0.04);
      const eyes = spec.eyeLineRatio!;
      expect(1 - out.eyeY / spec.digital.height).to.be.within(eyes[0], eyes[1]);
      const src = await measureFace(canvas);
      const shifted = { x: portrait.chin.x + 1180, y: portrait.chin.y + 700 };
      const chinY = applySimilarity(mappingFromFaces(src.face, out.face), shifted).y;
      const img = await decodeRgb(r.photo.buffer);
      const crownY = crownByPixels(img, out.centerX - 0.3 * out.face.box.width, out.centerX + 0.3 * out.face.box.width, spec.background.rgb);
      expect((chinY - crownY) / spec.digital.height).to.be.within(spec.headHeightRatio[0], spec.headHeightRatio[1]);
    });

    it('a portrait rotated by 8 degrees comes out level and centred', async () => {
      const input = readCorpus(PORTRAITS[0].file);
      const rotated = await sharp(input).rotate(8, { background: '#ffffff' }).png().toBuffer();
      const before = await measureFace(rotated);
      expect(Math.abs(before.roll), 'the input is visibly tilted').to.be.above(6);
      const r = await processPassportPhoto(rotated, { country: 'usa' });
      expect(Math.abs(r.measurements.rotation_applied_degrees)).to.be.above(6);
      const out = await measureFace(r.photo.buffer);
      expect(Math.abs(out.roll), 'eye-line tilt on the output').to.be.below(3);
      expect(Math.abs(out.centerX / r.photo.width - 0.5)).to.be.below(0.04);
      // same framing as the unrotated portrait (within detector noise)
      const plain = await processed(PORTRAITS[0], { country: 'usa' });
      const outPlain = await measureFace(plain.photo.buffer);
      expect(out.eyeY).to.be.closeTo(outPlain.eyeY, 0.03 * r.photo.height);
      expect(Math.abs(out.roll - outPlain.roll)).to.be.below(3);
    });

    it('applies the EXIF orientation on decode', async () => {
      // Stored rotated 90 degrees counter-clockwise with orientation 6 ("rotate 90 CW to display").
      const input = readCorpus(PORTRAITS[1].file);
      const stored = await sharp(input).rotate(-90).jpeg({ quality: 95 }).withMetadata({ orientation: 6 }).toBuffer();
      expect((await sharp(stored).metadata()).orientation).to.equal(6);
      const r = await processPassportPhoto(stored, { country: 'usa' });
      expect(r.measurements.input_width).to.equal(512);
      expect(r.measurements.input_height).to.equal(600);
      expect(Math.abs(r.measurements.input_roll_degrees)).to.be.below(5);
      const out = await measureFace(r.photo.buffer);
      expect(Math.abs(out.roll)).to.be.below(3);
    });

    it('where the crop leaves the image it is extended with the background colour', async () => {
      // A narrow strip around the face: the 2 x 2 in framing is wider, so both sides extend beyond it.
      const input = await sharp(readCorpus(PORTRAITS[0].file)).extract({ left: 125, top: 0, width: 200, height: 512 }).png().toBuffer();
      const r = await processPassportPhoto(input, { country: 'usa', removeBackground: false, enhance: false });
      expect(r.measurements.outside_fill_share).to.be.above(0.02);
      expect(r.warnings.join(' ')).to.match(/beyond the original image/);
      const img = await decodeRgb(r.photo.buffer);
      // the outer columns lie beyond the source: the background colour (JPEG tolerance)
      for (const x0 of [0, img.width - 4]) {
        const side = meanColor(img, x0, 0, x0 + 4, img.height);
        expect(colorDistance(side, PASSPORT_SPECS.usa.background.rgb)).to.be.below(4);
      }
      const out = await measureFace(r.photo.buffer);
      const eyes = PASSPORT_SPECS.usa.eyeLineRatio!;
      expect(1 - out.eyeY / img.height).to.be.within(eyes[0], eyes[1]);
    });
  });
});
