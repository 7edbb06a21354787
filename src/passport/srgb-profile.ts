// The sRGB ICC profile of passport JPEGs. Asked for with withIccProfile('srgb'), libvips first
// converts the (profile-less, so assumed sRGB) pixels from sRGB to sRGB through lcms: ~10 ms for a
// 600 px photo that changes nothing. Instead the profile's APP2 segments are taken once from a 1-px
// JPEG that libvips writes with the same profile, and put after SOI/APP0 of each photo.
import sharp from 'sharp';
import { walkJpegSegments } from '../vision/jpeg-segments.js';

const APP0 = 0xe0;
const APP2 = 0xe2;
const ICC_SIGNATURE = Buffer.from('ICC_PROFILE\0', 'latin1');

let segments: Promise<Buffer> | null = null;

/** The APP2 ICC_PROFILE segments (markers included) of a JPEG; empty when it has none. */
export function iccSegmentsOf(jpeg: Buffer): Buffer {
  const parts: Buffer[] = [];
  walkJpegSegments(jpeg, (s) => {
    if (s.marker === APP2 && jpeg.subarray(s.body, s.body + ICC_SIGNATURE.length).equals(ICC_SIGNATURE)) parts.push(jpeg.subarray(s.body - 4, s.end));
    return s.marker === 0xda; // stop at the first scan
  });
  return Buffer.concat(parts);
}

function srgbSegments(): Promise<Buffer> {
  segments ??= sharp({ create: { width: 1, height: 1, channels: 3, background: '#ffffff' } })
    .jpeg()
    .withIccProfile('srgb')
    .toBuffer()
    .then((probe) => {
      const found = iccSegmentsOf(probe);
      if (found.length === 0) throw new Error('libvips wrote no sRGB ICC profile');
      return found;
    });
  segments.catch(() => {
    segments = null;
  });
  return segments;
}

/** The JPEG with libvips' sRGB profile inserted after SOI and a leading APP0 (JFIF, with the density). */
export async function withSrgbProfile(jpeg: Buffer): Promise<Buffer> {
  const icc = await srgbSegments();
  let at = 2;
  walkJpegSegments(jpeg, (s) => {
    if (s.marker === APP0) at = s.end;
    return true; // only the first segment is of interest
  });
  return Buffer.concat([jpeg.subarray(0, at), icc, jpeg.subarray(at)]);
}
