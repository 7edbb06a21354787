// remove_bg through the real pipeline. Each corpus portrait is first cut out by the passport
// pipeline (a United States photo: the person on plain white), then placed on textured corpus
// photos by the test itself: pixels of the passport photo within a few levels of white become the
// texture, the rest stay the portrait, so the test knows exactly which output pixels are not the
// person. Judged on the output's alpha: below 10 over ≥ 95 % of those pixels, above 245 over ≥ 97 %
// of the face box's person pixels (the box, found by the face detector on the passport photo before
// placing, also reaches past the cheeks and crown into the white, which the texture replaces). A
// landscape keeps its pixels and is noted no-person.
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { resolvePlan, type TransformRequest } from '../../src/imaging/params.js';
import { renderDerivative } from '../../src/imaging/pipeline.js';
import { detectFaces } from '../../src/imaging/preview.js';
import { processPassportPhoto } from '../../src/passport/process-passport-photo.js';

const settings = { avifEffort: 0, webpEffort: 0, maxInputPixels: 50_000_000 };
const CORPUS = join(process.cwd(), 'test/fixtures/corpus');
const PORTRAITS = ['01_astronaut_collins.png', '02_grace_hopper.jpg', '03_cameraman_gray.png'];
/**
 * The textured photos the portraits are placed on. Not the cat (Chelsea.jpg): the segmenter takes
 * a cat beside a person for part of the person (docs/transformations.md, Background removal).
 */
const TEXTURES = ['Coffee.jpg', 'Retina.jpg'];
const SCENE = { width: 1200, height: 800 };
/** The portrait's place in the scene: its bottom on the scene's, as a person standing in it. */
const PLACE = { left: 380, top: 140, side: 660 };
/** A passport pixel this close to white (each channel) is background: the texture shows there. */
const WHITE_TOLERANCE = 6;

function plan(req: TransformRequest) {
  return resolvePlan('A', req, { accept: '', sourceFormat: 'png', preferWebpWhenUnsure: false }).plan;
}

interface Scene {
  png: Buffer;
  /** 1 where the scene's pixel is the person (the passport photo's non-white pixels). */
  person: Uint8Array;
  face: { left: number; top: number; right: number; bottom: number };
}

/** The passport cut-out of `portrait` placed on `texture` (SCENE's size), with its person mask and face box. */
async function scene(portrait: string, texture: Buffer): Promise<Scene> {
  const passport = await processPassportPhoto(readFileSync(join(CORPUS, 'faces', portrait)), { country: 'usa' });
  const placed = await sharp(passport.photo.buffer).resize(PLACE.side, PLACE.side).removeAlpha().raw().toBuffer();
  const [face] = await detectFaces(sharp(placed, { raw: { width: PLACE.side, height: PLACE.side, channels: 3 } }));
  expect(face, `a face on the passport photo of ${portrait}`).to.not.equal(undefined);
  const out = Buffer.from(texture);
  const person = new Uint8Array(SCENE.width * SCENE.height);
  for (let y = 0; y < PLACE.side; y++) {
    for (let x = 0; x < PLACE.side; x++) {
      const p = (y * PLACE.side + x) * 3;
      if (Math.min(placed[p], placed[p + 1], placed[p + 2]) >= 255 - WHITE_TOLERANCE) continue;
      const i = (PLACE.top + y) * SCENE.width + PLACE.left + x;
      person[i] = 1;
      placed.copy(out, i * 3, p, p + 3);
    }
  }
  const box = (v: number, side: number, offset: number) => offset + Math.round(v * side);
  return {
    png: await sharp(out, { raw: { ...SCENE, channels: 3 } }).png().toBuffer(),
    person,
    face: { left: box(face.x, PLACE.side, PLACE.left), top: box(face.y, PLACE.side, PLACE.top), right: box(face.x + face.w, PLACE.side, PLACE.left), bottom: box(face.y + face.h, PLACE.side, PLACE.top) },
  };
}

/** Shares: of the pixels outside the person with alpha < 10, of the face box's person pixels with alpha > 245. */
async function judge(png: Buffer, s: Scene): Promise<{ clear: number; solid: number }> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  expect([info.width, info.height, info.channels]).to.deep.equal([SCENE.width, SCENE.height, 4]);
  let outside = 0, clear = 0, facePixels = 0, solid = 0;
  for (let i = 0; i < s.person.length; i++) {
    const alpha = data[i * 4 + 3];
    if (!s.person[i]) {
      outside++;
      if (alpha < 10) clear++;
    }
    const [x, y] = [i % SCENE.width, Math.floor(i / SCENE.width)];
    if (s.person[i] && x >= s.face.left && x < s.face.right && y >= s.face.top && y < s.face.bottom) {
      facePixels++;
      if (alpha > 245) solid++;
    }
  }
  return { clear: clear / outside, solid: solid / facePixels };
}

describe('remove_bg', function () {
  this.timeout(300_000);
  const texture = (name: string) => sharp(join(CORPUS, 'photos', name)).resize(SCENE.width, SCENE.height, { fit: 'cover' }).removeAlpha().raw().toBuffer();

  for (const [portrait, photo] of PORTRAITS.flatMap((p) => TEXTURES.map((t) => [p, t] as const))) {
    it(`${portrait} on ${photo}: transparent outside the person, opaque over the face`, async function () {
      const s = await scene(portrait, await texture(photo));
      const out = await renderDerivative(s.png, plan({ w: SCENE.width, f: 'png', remove_bg: true }), settings);
      expect(out.notes.removeBg).to.equal(undefined);
      const { clear, solid } = await judge(out.buffer, s);
      console.log(`      ${portrait} on ${photo}: alpha < 10 on ${(100 * clear).toFixed(1)} % outside the person, > 245 on ${(100 * solid).toFixed(1)} % of the face box`);
      if (process.env.KEEP_OUTPUT) writeFileSync(`${process.env.KEEP_OUTPUT}/${portrait}-${photo}.png`, out.buffer);
      expect(clear, 'transparent outside the person').to.be.at.least(0.95);
      expect(solid, 'opaque over the face').to.be.at.least(0.97);
    });
  }

  it('a CMYK original is cut out as well (sharp hands the step sRGB pixels)', async function () {
    const s = await scene(PORTRAITS[1], await texture(TEXTURES[0]));
    const cmyk = await sharp(s.png).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer();
    expect((await sharp(cmyk).metadata()).space).to.equal('cmyk');
    const { clear, solid } = await judge((await renderDerivative(cmyk, plan({ w: SCENE.width, f: 'png', remove_bg: true }), settings)).buffer, s);
    expect(clear).to.be.at.least(0.95);
    expect(solid).to.be.at.least(0.97);
  });

  it('JPEG: the background becomes bg (white by default)', async function () {
    const s = await scene(PORTRAITS[1], await texture(TEXTURES[0]));
    for (const [bg, rgb] of [[undefined, [255, 255, 255]], ['00ff00', [0, 255, 0]]] as const) {
      const out = await renderDerivative(s.png, plan({ w: SCENE.width, f: 'jpeg', q: 95, remove_bg: true, ...(bg ? { bg } : {}) }), settings);
      const { data } = await sharp(out.buffer).raw().toBuffer({ resolveWithObject: true });
      // The top-left corner is texture, far from the person.
      const corner = [...data.subarray(0, 3)];
      corner.forEach((v, c) => expect(Math.abs(v - rgb[c]), `bg ${bg ?? 'default'}`).to.be.at.most(8));
    }
  });

  it('a landscape: no person, the pixels unchanged', async function () {
    const input = readFileSync(join(CORPUS, 'photos/Chelsea.jpg'));
    const plain = await renderDerivative(input, plan({ w: 600, f: 'png' }), settings);
    const removed = await renderDerivative(input, plan({ w: 600, f: 'png', remove_bg: true }), settings);
    expect(removed.notes.removeBg).to.equal('no-person');
    expect(plain.notes.removeBg).to.equal(undefined);
    const [a, b] = [await sharp(plain.buffer).raw().toBuffer(), await sharp(removed.buffer).raw().toBuffer()];
    expect(b.equals(a), 'same pixels').to.equal(true);
  });
});
