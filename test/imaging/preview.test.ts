// The finalize job's preview (src/imaging/preview.ts): faces found once at upload must let
// gravity=face keep every corpus portrait in frame when it sits off-centre in a wide photograph,
// the case where a centre crop loses it. Real MediaPipe detector, real sharp renders, outputs
// decoded and searched for the face again.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { facesFocus } from '../../src/imaging/focus.js';
import type { TransformPlan } from '../../src/imaging/params.js';
import { renderDerivative } from '../../src/imaging/pipeline.js';
import { describeImage, LQIP_MAX_BYTES } from '../../src/imaging/preview.js';
import { detectFaces } from '../../src/vision/face-detector.js';
import { CORPUS } from '../fixtures/images.js';

const SCENE = { width: 2400, height: 1000 };
// Each portrait fills the scene's height (a close-up placed in a banner). Smaller faces in scenes are
// found by the full-range model down to about a third of the height (Hopper); docs/transformations.md.
const PORTRAIT_HEIGHT = SCENE.height;
const settings = { avifEffort: 0, webpEffort: 3, maxInputPixels: 50_000_000 };
const plan: TransformPlan = { width: 400, height: 400, fit: 'cover', quality: 85, format: 'png', blur: 0, sharp: 0, bri: 0, con: 0, sat: 0, hue: 0, opt: false };

async function facesIn(png: Buffer) {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return (await detectFaces({ data, width: info.width, height: info.height, channels: 4 }, { first: 'full' })).faces;
}

describe('upload preview: faces for gravity=face', function () {
  this.timeout(120_000);
  const portraits = fs.readdirSync(path.join(CORPUS, 'faces')).sort();
  const scenes = ['Coffee.jpg', 'Chelsea.jpg'];

  for (const [i, file] of portraits.entries()) {
    for (const side of ['left', 'right'] as const) {
      const scene = scenes[i % scenes.length];
      it(`${file} at the ${side} of ${scene} (2400x1000): one face found, the face crop keeps it, the centre crop does not`, async () => {
        const portrait = await sharp(path.join(CORPUS, 'faces', file)).resize({ height: PORTRAIT_HEIGHT }).toBuffer({ resolveWithObject: true });
        const left = side === 'left' ? 80 : SCENE.width - portrait.info.width - 80;
        const top = 0;
        const photo = await sharp(path.join(CORPUS, 'photos', scene))
          .resize(SCENE.width, SCENE.height, { fit: 'cover' })
          .composite([{ input: portrait.data, left, top }])
          .jpeg({ quality: 90 })
          .toBuffer();

        const preview = await describeImage(photo, settings.maxInputPixels);
        expect(preview.faces, 'exactly the pasted face').to.have.length(1);
        const [box] = preview.faces;
        const cx = (box.x + box.w / 2) * SCENE.width;
        const cy = (box.y + box.h / 2) * SCENE.height;
        expect(cx, 'face centre x inside the portrait').to.be.within(left, left + portrait.info.width);
        expect(cy, 'face centre y inside the portrait').to.be.within(top, top + PORTRAIT_HEIGHT);
        expect(preview.lqip.length).to.be.at.most(LQIP_MAX_BYTES).and.above(0);

        const focus = facesFocus(preview.faces);
        const faceCrop = await renderDerivative(photo, { ...plan, gravity: 'face', focus }, settings);
        const centreCrop = await renderDerivative(photo, plan, settings);
        const meta = await sharp(faceCrop.buffer).metadata();
        expect([meta.width, meta.height, meta.format]).to.deep.equal([400, 400, 'png']);
        // The upload's box, mapped into the 400 px window (scale 0.4, window centred on the face), is whole.
        const scale = 400 / SCENE.height;
        const windowLeft = Math.min(SCENE.width * scale - 400, Math.max(0, Math.round(focus!.x * SCENE.width * scale - 200)));
        expect(box.x * SCENE.width * scale - windowLeft).to.be.at.least(0);
        expect((box.x + box.w) * SCENE.width * scale - windowLeft).to.be.at.most(400);
        expect(await facesIn(faceCrop.buffer), 'a face in the gravity=face output').to.have.length.greaterThan(0);
        expect(await facesIn(centreCrop.buffer), 'no face in the centre crop').to.have.length(0);
      });
    }
  }
});
