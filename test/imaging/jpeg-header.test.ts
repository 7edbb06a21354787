// readJpegHeader lets the pipeline decide "sRGB already?" without libvips' header read. It must
// agree with libvips on every JPEG it answers for, and give up (null) on anything it cannot read.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { readJpegHeader } from '../../src/imaging/jpeg-header.js';
import { CORPUS } from '../fixtures/images.js';

const flat = () => sharp({ create: { width: 16, height: 12, channels: 3, background: '#c86432' } });

/** Splits the JPEG's ICC profile over `parts` APP2 chunks, as encoders do for large profiles. */
function withIccInChunks(jpeg: Buffer, icc: Buffer, parts: number): Buffer {
  const size = Math.ceil(icc.length / parts);
  const chunks = Array.from({ length: parts }, (_, i) => {
    const data = icc.subarray(i * size, (i + 1) * size);
    const head = Buffer.alloc(18);
    head.writeUInt16BE(0xffe2, 0);
    head.writeUInt16BE(2 + 14 + data.length, 2);
    head.write('ICC_PROFILE\0', 4, 'latin1');
    head[16] = i + 1;
    head[17] = parts;
    return Buffer.concat([head, data]);
  });
  // Reversed order in the file: readers must reassemble by sequence number.
  return Buffer.concat([jpeg.subarray(0, 2), ...chunks.reverse(), jpeg.subarray(2)]);
}

async function libvipsView(bytes: Buffer) {
  const meta = await sharp(bytes).metadata();
  return { components: meta.channels, precision: meta.depth === 'uchar' ? 8 : meta.depth, width: meta.width, height: meta.height, icc: meta.icc };
}

describe('readJpegHeader', () => {
  it('agrees with libvips on the corpus photos and on generated JPEGs (untagged, sRGB, P3, CMYK, grey), dimensions included', async () => {
    const samples: [string, Buffer][] = fs
      .readdirSync(path.join(CORPUS, 'photos'))
      .filter((f) => /\.jpe?g$/i.test(f))
      .map((f) => [f, fs.readFileSync(path.join(CORPUS, 'photos', f))]);
    samples.push(['untagged', await flat().jpeg().toBuffer()]);
    samples.push(['srgb', await flat().withIccProfile('srgb').jpeg().toBuffer()]);
    samples.push(['p3', await flat().withIccProfile('p3').jpeg({ quality: 70 }).toBuffer()]);
    samples.push(['cmyk', await flat().toColourspace('cmyk').withIccProfile('cmyk').jpeg().toBuffer()]);
    samples.push(['grey', await flat().toColourspace('b-w').jpeg().toBuffer()]);
    samples.push(['progressive', await flat().withIccProfile('p3').jpeg({ progressive: true, mozjpeg: true }).toBuffer()]);
    for (const [name, bytes] of samples) {
      const header = readJpegHeader(bytes);
      expect(header, name).to.not.equal(null);
      const vips = await libvipsView(bytes);
      expect(header!.components, name).to.equal(vips.components);
      expect(header!.precision, name).to.equal(vips.precision);
      expect([header!.width, header!.height], name).to.deep.equal([vips.width, vips.height]);
      expect(header!.icc?.toString('hex'), name).to.equal(vips.icc?.toString('hex'));
    }
  });

  it('reassembles a profile split over several APP2 chunks in any order, as libvips does', async () => {
    const icc = (await sharp(await flat().withIccProfile('p3').jpeg().toBuffer()).metadata()).icc!;
    const split = withIccInChunks(await flat().jpeg().toBuffer(), icc, 3);
    expect(readJpegHeader(split)!.icc!.equals(icc)).to.equal(true);
    expect((await sharp(split).metadata()).icc!.equals(icc)).to.equal(true);
  });

  it('gives up on what it cannot read: other formats, truncated headers, missing or duplicate ICC chunks', async () => {
    const jpeg = await flat().withIccProfile('p3').jpeg().toBuffer();
    const icc = (await sharp(jpeg).metadata()).icc!;
    expect(readJpegHeader(await flat().png().toBuffer())).to.equal(null);
    expect(readJpegHeader(Buffer.alloc(0))).to.equal(null);
    expect(readJpegHeader(jpeg.subarray(0, 20))).to.equal(null);
    const split = withIccInChunks(await flat().jpeg().toBuffer(), icc, 2);
    // Drop the first chunk written (sequence 2 of 2): the profile is incomplete.
    const chunkLength = split.readUInt16BE(4) + 2;
    expect(readJpegHeader(Buffer.concat([split.subarray(0, 2), split.subarray(2 + chunkLength)]))).to.equal(null);
    // The same chunk twice.
    expect(readJpegHeader(Buffer.concat([split.subarray(0, 2 + chunkLength), split.subarray(2)]))).to.equal(null);
  });
});
