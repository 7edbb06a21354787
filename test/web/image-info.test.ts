// GET /cdn/{image_id}/info (public) and GET /image/info?src= (keyed), every field checked against
// values known independently of the service: a JPEG stored sideways with EXIF orientation 6, camera
// fields and GPS (the corpus file written by exiftool; its values are in corpus/SOURCES.md), an
// animated WebP and a PNG with alpha built here pixel by pixel. Placeholders are decoded and
// compared with the image's own pixels; the face box with the upright original's. Derivatives of
// the GPS photo carry no EXIF, XMP or GPS bytes at all. Access: as /cdn/{image_id} answers.
import { expect } from 'chai';
import fs from 'node:fs';
import sharp from 'sharp';
import { thumbHashToApproximateAspectRatio, thumbHashToAverageRGBA } from 'thumbhash';
import { CORPUS } from '../fixtures/images.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectDetail, expectValidation, type CdnUploadBody } from './set-b-helpers.js';

const GPS_JPEG = fs.readFileSync(`${CORPUS}exif/grace_hopper_gps_orientation6.jpg`);
const UPRIGHT_JPEG = fs.readFileSync(`${CORPUS}faces/02_grace_hopper.jpg`);
const BLUE = { r: 0x10, g: 0x30, b: 0xc0 };
const RATE_LIMIT = 40;

/** Three 40×30 frames (red, green, blue), looping. */
async function animatedWebp(): Promise<Buffer> {
  const frames = await Promise.all(['#ff0000', '#00ff00', '#0000ff'].map((c) => sharp({ create: { width: 40, height: 30, channels: 3, background: c } }).raw().toBuffer()));
  return sharp(Buffer.concat(frames), { raw: { width: 40, height: 90, channels: 3, pageHeight: 30 } as never }).webp({ loop: 0, delay: [100, 100, 100], lossless: true }).toBuffer();
}

/** 200×100: the left 140 columns opaque BLUE, the rest fully transparent. */
async function halfTransparentPng(): Promise<Buffer> {
  const rgba = Buffer.alloc(200 * 100 * 4);
  for (let y = 0; y < 100; y++) {
    for (let x = 0; x < 140; x++) rgba.set([BLUE.r, BLUE.g, BLUE.b, 255], (y * 200 + x) * 4);
  }
  return sharp(rgba, { raw: { width: 200, height: 100, channels: 4 } }).png().toBuffer();
}

/** Mean sRGB of the auto-oriented image (opaque pixels only). */
async function meanColour(bytes: Buffer): Promise<number[]> {
  const { data, info } = await sharp(bytes).autoOrient().ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const sum = [0, 0, 0];
  let n = 0;
  for (let i = 0; i < info.width * info.height * 4; i += 4) {
    if (data[i + 3] < 128) continue;
    for (let c = 0; c < 3; c++) sum[c] += data[i + c];
    n++;
  }
  return sum.map((s) => s / n);
}

const hexToRgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
const distance = (a: number[], b: number[]) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

describe('image info', function () {
  this.timeout(120_000);
  let svc: TestService;
  let owner: Awaited<ReturnType<TestService['createUser']>>;
  let other: Awaited<ReturnType<TestService['createUser']>>;
  let gps: CdnUploadBody;
  before(async () => {
    // A per-IP limit the last test can reach in a few dozen requests (no earlier test comes near it).
    svc = await TestService.start({ env: { PUBLIC_RATE_LIMIT_PER_MIN: String(RATE_LIMIT) } });
    owner = await svc.createUser();
    other = await svc.createUser();
    // The fixture is what SOURCES.md says: stored 600×512 and sideways.
    const meta = await sharp(GPS_JPEG).metadata();
    expect([meta.width, meta.height, meta.orientation]).to.deep.equal([600, 512, 6]);
    gps = await cdnUpload(svc, owner.key, GPS_JPEG, { filename: 'gps.jpg' });
  });
  after(async () => svc?.stop());

  it('a JPEG with orientation 6, camera fields and GPS: every field', async () => {
    const res = await request(svc.url(`/cdn/${gps.imageId}/info`));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const info = res.body;
    expect(Object.keys(info).sort()).to.deep.equal(['animated', 'bytes', 'dominant_color', 'exif', 'faces', 'format', 'frames', 'has_alpha', 'has_location', 'height', 'lqip', 'orientation', 'space', 'thumbhash', 'width']);
    expect(info).to.include({ width: 512, height: 600, format: 'jpeg', bytes: GPS_JPEG.length, has_alpha: false, space: 'srgb', orientation: 6, animated: false, frames: 1, has_location: true });
    expect(info.exif).to.deep.equal({ make: 'Canon', model: 'Canon EOS 5D Mark IV', taken_at: '2024-05-06T07:08:09' });
    // Placeholders, decoded: the ThumbHash's aspect and mean colour, the LQIP's size and colour.
    const mean = await meanColour(GPS_JPEG);
    expect(thumbHashToApproximateAspectRatio(Buffer.from(info.thumbhash, 'base64'))).to.be.closeTo(512 / 600, 0.08);
    const avg = thumbHashToAverageRGBA(Buffer.from(info.thumbhash, 'base64'));
    expect(distance([avg.r * 255, avg.g * 255, avg.b * 255], mean)).to.be.below(20);
    expect(info.lqip).to.match(/^data:image\/webp;base64,/);
    const lqip = Buffer.from(info.lqip.split(',')[1], 'base64');
    const lqipMeta = await sharp(lqip).metadata();
    expect(lqipMeta.width! / lqipMeta.height!).to.be.closeTo(512 / 600, 0.06);
    expect(distance(await meanColour(lqip), mean)).to.be.below(20);
    // The dominant colour is a colour the photo is mostly made of: ≥ 10 % of its pixels within 24 levels.
    const { data } = await sharp(GPS_JPEG).raw().toBuffer({ resolveWithObject: true });
    const dominant = hexToRgb(info.dominant_color);
    let near = 0;
    for (let i = 0; i < data.length; i += 3) if (distance([data[i], data[i + 1], data[i + 2]], dominant) <= 24) near++;
    expect(near / (data.length / 3)).to.be.at.least(0.1);
    // One face, where the upright original's is (orientation applied before detection).
    const upright = await cdnUpload(svc, owner.key, UPRIGHT_JPEG, { filename: 'upright.jpg' });
    const uprightInfo = (await request(svc.url(`/cdn/${upright.imageId}/info`))).body;
    expect(uprightInfo).to.include({ width: 512, height: 600, orientation: 1, has_location: false });
    expect(uprightInfo.exif).to.equal(null);
    expect(info.faces).to.have.length(1);
    expect(uprightInfo.faces).to.have.length(1);
    for (const k of ['x', 'y', 'w', 'h']) expect(info.faces[0][k], k).to.be.closeTo(uprightInfo.faces[0][k], 0.03);
    // The keyed route gives the same answer.
    const keyed = await request(svc.url(`/image/info?src=${encodeURIComponent(gps.public_url)}`), { key: owner.key });
    expect(keyed.status).to.equal(200);
    expect(keyed.body).to.deep.equal(info);
  });

  it('derivatives of the GPS photo carry no EXIF, XMP or GPS at all, in every format', async () => {
    for (const query of ['?w=200&f=jpeg', '?w=200&f=webp', '?w=200&f=png', '?w=200&f=avif', '?f=jpeg', '?w=200&f=jpeg&opt=true']) {
      const res = await request(svc.url(`/cdn/${gps.imageId}${query}`));
      expect(res.status, query).to.equal(200);
      const meta = await sharp(res.bytes).metadata();
      expect(meta.exif, query).to.equal(undefined);
      expect(meta.xmp, query).to.equal(undefined);
      expect(meta.orientation ?? 1, query).to.equal(1);
      // Nothing of the tags' text survives anywhere in the bytes.
      for (const marker of ['Exif', 'GPS', 'Canon', '2024:05:06']) expect(res.bytes.includes(Buffer.from(marker)), `${query}: ${marker}`).to.equal(false);
    }
    // Set A too.
    const setA = await request(svc.url(`/transform?src=${encodeURIComponent(gps.public_url)}&w=300&f=jpeg`), { key: owner.key });
    expect(setA.status).to.equal(200);
    const bytes = (await request(setA.body.public_url)).bytes;
    expect((await sharp(bytes).metadata()).exif).to.equal(undefined);
    expect(bytes.includes(Buffer.from('GPS'))).to.equal(false);
  });

  it('an animated WebP: every field', async () => {
    const bytes = await animatedWebp();
    const anim = await cdnUpload(svc, owner.key, bytes, { filename: 'anim.webp', mime: 'image/webp' });
    const res = await request(svc.url(`/cdn/${anim.imageId}/info`));
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ width: 40, height: 30, format: 'webp', bytes: bytes.length, has_alpha: false, space: 'srgb', orientation: 1, animated: true, frames: 3, has_location: false, dominant_color: '#ff0000' });
    expect(res.body.exif).to.equal(null);
    expect(res.body.faces).to.deep.equal([]);
    const avg = thumbHashToAverageRGBA(Buffer.from(res.body.thumbhash, 'base64'));
    expect([avg.r, avg.g, avg.b].map((v) => Math.round(v * 10) / 10)).to.deep.equal([1, 0, 0]);
  });

  it('a PNG with alpha: every field', async () => {
    const bytes = await halfTransparentPng();
    const png = await cdnUpload(svc, owner.key, bytes, { filename: 'alpha.png', mime: 'image/png' });
    const res = await request(svc.url(`/cdn/${png.imageId}/info`));
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ width: 200, height: 100, format: 'png', bytes: bytes.length, has_alpha: true, space: 'srgb', orientation: 1, animated: false, frames: 1, has_location: false });
    // Transparent pixels do not count: the dominant colour is the opaque blue, exactly.
    expect(res.body.dominant_color).to.equal('#1030c0');
    expect(res.body.exif).to.equal(null);
    expect(res.body.faces).to.deep.equal([]);
    const avg = thumbHashToAverageRGBA(Buffer.from(res.body.thumbhash, 'base64'));
    expect(avg.a).to.be.closeTo(0.7, 0.1);
    // With alpha a ThumbHash keeps at most 5 terms on the long side: 2:1 comes back as 5:3.
    expect(thumbHashToApproximateAspectRatio(Buffer.from(res.body.thumbhash, 'base64'))).to.be.closeTo(2, 0.4);
  });

  it('access: the same answer as /cdn/{image_id} for anyone; /image/info only for the owner', async () => {
    const cdnPath = `/cdn/${gps.imageId}`;
    for (const key of [undefined, other.key, owner.key]) {
      const serve = await request(svc.url(`${cdnPath}?w=100`), { key });
      const info = await request(svc.url(`${cdnPath}/info`), { key });
      expect([serve.status, info.status], `key ${key ? 'given' : 'none'}`).to.deep.equal([200, 200]);
    }
    // Unknown and malformed ids: the answer /cdn/{image_id} gives (404 {detail}).
    for (const id of ['0123456789abcdef01234567', 'not-an-id']) {
      const serve = await request(svc.url(`/cdn/${id}`));
      const info = await request(svc.url(`/cdn/${id}/info`));
      expect(info.status).to.equal(serve.status);
      expectDetail(info, 404);
    }
    // The keyed route: another user's image is not found, as /image/{path} answers them.
    const src = encodeURIComponent(gps.public_url);
    const otherServe = await request(svc.url(`/image/x.jpg?src=${src}`), { key: other.key });
    const otherInfo = await request(svc.url(`/image/info?src=${src}`), { key: other.key });
    expect(otherInfo.status).to.equal(otherServe.status);
    expectDetail(otherInfo, 404);
  });

  it('bad values: the route\'s documented shapes', async () => {
    expectValidation(await request(svc.url('/image/info'), { key: owner.key }), ['query.src']);
    expectValidation(await request(svc.url('/image/info?src=' + encodeURIComponent('https://elsewhere.example/x.jpg')), { key: owner.key }), ['query.src']);
    expectValidation(await request(svc.url(`/image/info?src=${encodeURIComponent(gps.public_url)}`)), ['header.x-api-key']);
    expectDetail(await request(svc.url(`/image/info?src=${encodeURIComponent(gps.public_url)}`), { key: 'pk_invalid' }), 401);
  });

  it('unknown ids count toward the per-IP limit, as on /cdn/{image_id}; known ones do not', async () => {
    for (let i = 0; i < RATE_LIMIT + 5; i++) expect((await request(svc.url(`/cdn/${gps.imageId}/info`))).status).to.equal(200);
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT + 1; i++) statuses.push((await request(svc.url(`/cdn/0123456789abcdef0123${String(i).padStart(4, '0')}/info`))).status);
    expect(statuses.at(-1)).to.equal(429);
    expect(statuses.filter((s) => s === 404).length).to.be.at.least(RATE_LIMIT - 15);
  });
});
