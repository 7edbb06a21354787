// hasSrgbPrimaries decides when the pipeline may skip the colour transform: it must say yes to
// real sRGB profiles (sharp's own, the corpus photos') and no to anything else.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { hasSrgbPrimaries } from '../../src/imaging/colour-profile.js';
import { CORPUS } from '../fixtures/images.js';

async function profileOf(bytes: Buffer): Promise<Buffer> {
  const icc = (await sharp(bytes).metadata()).icc;
  if (!icc) throw new Error('no profile');
  return icc;
}

const flat = () => sharp({ create: { width: 8, height: 8, channels: 3, background: '#c86432' } });

describe('hasSrgbPrimaries', () => {
  it("accepts sharp's sRGB profile and the sRGB profiles of the corpus photos", async () => {
    expect(hasSrgbPrimaries(await profileOf(await flat().withIccProfile('srgb').jpeg().toBuffer()))).to.equal(true);
    const dir = path.join(CORPUS, 'photos');
    let tagged = 0;
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.jpg'))) {
      const icc = (await sharp(path.join(dir, file)).metadata()).icc;
      if (!icc) continue;
      tagged++;
      expect(hasSrgbPrimaries(icc), file).to.equal(true);
    }
    expect(tagged, 'the corpus has tagged photos').to.be.greaterThan(0);
  });

  it('refuses Display P3, CMYK, a linear-gamma sRGB look-alike and garbage', async () => {
    expect(hasSrgbPrimaries(await profileOf(await flat().withIccProfile('p3').jpeg().toBuffer()))).to.equal(false);
    expect(hasSrgbPrimaries(await profileOf(await flat().toColourspace('cmyk').withIccProfile('cmyk').jpeg().toBuffer()))).to.equal(false);
    const srgb = Buffer.from(await profileOf(await flat().withIccProfile('srgb').jpeg().toBuffer()));
    // Rewrite the red tone curve as an identity curve (count 0 = linear).
    const count = srgb.readUInt32BE(128);
    for (let i = 0; i < count; i++) {
      const entry = 132 + i * 12;
      if (srgb.toString('latin1', entry, entry + 4) !== 'rTRC') continue;
      const offset = srgb.readUInt32BE(entry + 4);
      srgb.write('curv', offset, 'latin1');
      srgb.writeUInt32BE(0, offset + 8);
    }
    expect(hasSrgbPrimaries(srgb)).to.equal(false);
    expect(hasSrgbPrimaries(Buffer.alloc(10))).to.equal(false);
    expect(hasSrgbPrimaries(Buffer.alloc(400, 0xff))).to.equal(false);
  });
});
