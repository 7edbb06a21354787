// jpegCompleteness replaces the upload's decode check for JPEGs, so it must never call a cut-off
// file complete, must agree with libjpeg on whole files (corpus and generated: baseline,
// progressive, restart markers, grey, CMYK), and must leave anything odd to the decoder.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { inspectUpload } from '../../src/imaging/inspect-upload.js';
import { jpegCompleteness } from '../../src/imaging/jpeg-structure.js';
import { CORPUS, cmykJpeg, jpeg } from '../fixtures/images.js';

const LIMIT = 100_000_000;

function corpusJpegs(): [string, Buffer][] {
  return ['photos', 'faces'].flatMap((dir) =>
    fs
      .readdirSync(path.join(CORPUS, dir))
      .filter((f) => /\.jpe?g$/i.test(f))
      .map((f): [string, Buffer] => [`${dir}/${f}`, fs.readFileSync(path.join(CORPUS, dir, f))]),
  );
}

async function generatedJpegs(): Promise<[string, Buffer][]> {
  const noisy = Buffer.alloc(300 * 200 * 3);
  for (let i = 0; i < noisy.length; i++) noisy[i] = (i * 2654435761) >>> 24;
  const photo = () => sharp(noisy, { raw: { width: 300, height: 200, channels: 3 } });
  return [
    ['baseline', await photo().jpeg({ quality: 90 }).toBuffer()],
    ['progressive', await photo().jpeg({ progressive: true }).toBuffer()],
    ['mozjpeg (progressive, trellis)', await photo().jpeg({ mozjpeg: true }).toBuffer()],
    ['4:4:4', await photo().jpeg({ chromaSubsampling: '4:4:4' }).toBuffer()],
    ['grey', await photo().greyscale().jpeg().toBuffer()],
    ['CMYK', await cmykJpeg()],
    ['flat 640×480', await jpeg()],
  ];
}

/** Offset of the first scan's entropy-coded data (after the SOS segment). */
function firstScanData(bytes: Buffer): number {
  const sos = bytes.indexOf(Buffer.from([0xff, 0xda]));
  return sos + 2 + bytes.readUInt16BE(sos + 2);
}

describe('jpegCompleteness', () => {
  it('calls every whole JPEG complete, and libjpeg decodes each of them without a warning', async function () {
    this.timeout(30_000);
    const samples = [...corpusJpegs(), ...(await generatedJpegs())];
    // The corpus must exercise restart markers and progressive scans, or this proves less.
    expect(samples.some(([, b]) => b.includes(Buffer.from([0xff, 0xdd])))).to.equal(true, 'a JPEG with restart markers');
    expect(samples.filter(([, b]) => b.includes(Buffer.from([0xff, 0xc2])))).to.have.length.above(1);
    for (const [name, bytes] of samples) {
      expect(jpegCompleteness(bytes), name).to.equal('complete');
      await sharp(bytes, { failOn: 'warning' }).resize(16).raw().toBuffer();
    }
  });

  it('never calls a cut-off JPEG complete, wherever it is cut (headers, between scans, inside scan data)', async function () {
    this.timeout(30_000);
    const samples = [...corpusJpegs().filter(([name]) => /Rocket|Coffee|02_grace/.test(name)), ...(await generatedJpegs())];
    let cuts = 0;
    for (const [name, bytes] of samples) {
      const dense = Array.from({ length: 700 }, (_, i) => i); // every cut in the headers
      const spread = Array.from({ length: 400 }, (_, i) => Math.floor(((i + 1) * (bytes.length - 1)) / 401));
      const tail = [bytes.length - 3, bytes.length - 2, bytes.length - 1];
      for (const keep of [...dense, ...spread, ...tail]) {
        if (keep >= bytes.length) continue;
        expect(jpegCompleteness(bytes.subarray(0, keep)), `${name} cut at ${keep}/${bytes.length}`).to.not.equal('complete');
        cuts++;
      }
    }
    expect(cuts).to.be.above(10_000);
  });

  it('says truncated for a file cut inside its scan data, and the upload check refuses it as libjpeg would', async () => {
    for (const [name, bytes] of await generatedJpegs()) {
      const cut = bytes.subarray(0, Math.floor((firstScanData(bytes) + bytes.length) / 2));
      expect(jpegCompleteness(cut), name).to.equal('truncated');
      let libjpegRefused = false;
      await sharp(cut, { failOn: 'warning' }).raw().toBuffer().catch(() => (libjpegRefused = true));
      expect(libjpegRefused, name).to.equal(true);
      let err: unknown;
      await inspectUpload(cut, LIMIT).catch((e: unknown) => (err = e));
      expect(err, name).to.have.property('kind', 'unsupported_type');
      expect((err as Error).message).to.match(/corrupt or truncated/);
    }
  });

  it('ignores bytes after the end-of-image marker (appended previews, padding)', async () => {
    const bytes = await jpeg(200, 100);
    const trailer = Buffer.concat([await jpeg(40, 30), Buffer.alloc(500, 0)]);
    expect(jpegCompleteness(Buffer.concat([bytes, trailer]))).to.equal('complete');
  });

  it('leaves to the decoder what it cannot vouch for: other formats, junk between segments, no scan before EOI', async () => {
    const bytes = await jpeg(200, 100);
    expect(jpegCompleteness(await sharp(bytes).png().toBuffer())).to.equal('unsure');
    expect(jpegCompleteness(Buffer.from('not a jpeg at all'))).to.equal('unsure');
    // Junk where the next marker should be (right after SOI).
    expect(jpegCompleteness(Buffer.concat([bytes.subarray(0, 2), Buffer.from([0x12, 0x34]), bytes.subarray(2)]))).to.equal('unsure');
    // SOI, EOI: no frame, no scan.
    expect(jpegCompleteness(Buffer.from([0xff, 0xd8, 0xff, 0xd9]))).to.equal('unsure');
  });

  it('a stored original overwritten with junk after its headers is not complete (the marker walk never finds EOI)', async () => {
    const bytes = await jpeg(400, 300);
    const damaged = Buffer.concat([bytes.subarray(0, 200), Buffer.alloc(bytes.length - 200, 0x5a)]);
    expect(jpegCompleteness(damaged)).to.not.equal('complete');
    let err: unknown;
    await inspectUpload(damaged, LIMIT).catch((e: unknown) => (err = e));
    expect(err).to.have.property('kind', 'unsupported_type');
  });

  it('accepts damaged scan data with intact markers (decoders recover it), and the render pipeline decodes it', async () => {
    const [, bytes] = (await generatedJpegs())[0];
    const damaged = Buffer.from(bytes);
    const start = firstScanData(bytes);
    // Overwrite a run in the middle of the scan with bytes that cannot form a marker.
    damaged.fill(0x11, start + 2000, start + 2400);
    expect(jpegCompleteness(damaged)).to.equal('complete');
    const info = await inspectUpload(damaged, LIMIT);
    expect([info.width, info.height]).to.deep.equal([300, 200]);
    const decoded = await sharp(damaged, { failOn: 'error' }).raw().toBuffer({ resolveWithObject: true });
    expect(decoded.info.width).to.equal(300);
  });
});
