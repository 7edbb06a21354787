// A 12-megapixel phone photo made from a corpus portrait, for benchmarks and the corpus record.
import sharp from 'sharp';

/**
 * The portrait enlarged to 3000 px, widened to 4032 x 3000 by mirroring its sides, stored sideways
 * with EXIF orientation 6, JPEG quality 90 (~12.1 MP): what a phone camera hands over.
 */
export async function phonePhoto(portrait: Buffer): Promise<Buffer> {
  const upright = await sharp(portrait).removeAlpha().resize(3000, 3000, { kernel: 'lanczos3' })
    .extend({ left: 516, right: 516, extendWith: 'mirror' }).jpeg({ quality: 95 }).toBuffer();
  return sharp(upright).rotate(-90).jpeg({ quality: 90 }).withMetadata({ orientation: 6 }).toBuffer();
}
