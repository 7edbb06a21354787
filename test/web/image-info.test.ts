// GET /cdn/{image_id}/info (public) and GET /image/info?src= (keyed): the fields for a JPEG with
// EXIF orientation 6, camera fields and GPS (made here with sharp's withExif: no corpus photo has
// GPS), an animated WebP and a PNG with alpha; and a derivative of the GPS photo carries no EXIF.
import { expect } from 'chai';
import sharp from 'sharp';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { pngWithAlpha } from '../fixtures/images.js';
import { cdnUpload, expectValidation, type CdnUploadBody } from './set-b-helpers.js';

async function gpsJpeg(): Promise<Buffer> {
  return sharp({ create: { width: 300, height: 200, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
    .jpeg()
    .withExif({
      IFD0: { Make: 'Canon', Model: 'EOS 5D', DateTime: '2024:05:06 07:08:09' },
      IFD2: { DateTimeOriginal: '2024:05:06 07:08:09' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 2400/100', GPSLongitudeRef: 'E', GPSLongitude: '2/1 21/1 300/100' },
    })
    .withMetadata({ orientation: 6 })
    .toBuffer();
}

async function animatedWebp(): Promise<Buffer> {
  const frames = await Promise.all(['#ff0000', '#00ff00', '#0000ff'].map((c) => sharp({ create: { width: 40, height: 30, channels: 3, background: c } }).raw().toBuffer()));
  return sharp(Buffer.concat(frames), { raw: { width: 40, height: 90, channels: 3, pageHeight: 30 } as never }).webp({ loop: 0, delay: [100, 100, 100] }).toBuffer();
}

describe('image info', function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: Awaited<ReturnType<TestService['createUser']>>;
  let gps: CdnUploadBody;
  before(async () => {
    svc = await TestService.start();
    user = await svc.createUser();
    const source = await gpsJpeg();
    const meta = await sharp(source).metadata();
    expect(meta.orientation, 'fixture orientation').to.equal(6);
    gps = await cdnUpload(svc, user.key, source, { filename: 'gps.jpg' });
  });
  after(async () => svc?.stop());

  it('a JPEG with orientation 6, camera fields and GPS', async () => {
    const res = await request(svc.url(`/cdn/${gps.imageId}/info`));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.include({ width: 200, height: 300, format: 'jpeg', has_alpha: false, space: 'srgb', orientation: 6, animated: false, frames: 1, has_location: true });
    expect(res.body.bytes).to.equal(gps.size);
    expect(res.body.exif).to.deep.equal({ make: 'Canon', model: 'EOS 5D', taken_at: '2024-05-06T07:08:09' });
    expect(res.body.dominant_color).to.match(/^#[0-9a-f]{6}$/);
    expect(res.body.thumbhash).to.be.a('string');
    expect(res.body.lqip).to.match(/^data:image\/webp;base64,/);
    expect(res.body.faces).to.deep.equal([]);
    // The keyed route says the same.
    const keyed = await request(svc.url(`/image/info?src=${encodeURIComponent(gps.public_url)}`), { key: user.key });
    expect(keyed.status).to.equal(200);
    expect(keyed.body).to.deep.equal(res.body);
  });

  it('a derivative of the GPS photo carries no EXIF at all', async () => {
    for (const f of ['jpeg', 'webp', 'png', 'avif']) {
      const res = await request(svc.url(`/cdn/${gps.imageId}?w=100&f=${f}`));
      expect(res.status).to.equal(200);
      const meta = await sharp(res.bytes).metadata();
      expect(meta.exif, f).to.equal(undefined);
      expect(meta.orientation ?? 1, f).to.equal(1);
    }
  });

  it('an animated WebP and a PNG with alpha', async () => {
    const anim = await cdnUpload(svc, user.key, await animatedWebp(), { filename: 'a.webp', mime: 'image/webp' });
    const a = await request(svc.url(`/cdn/${anim.imageId}/info`));
    expect(a.status).to.equal(200);
    expect(a.body).to.include({ format: 'webp', animated: true, frames: 3, width: 40, height: 30, has_location: false });
    expect(a.body.exif).to.equal(null);
    const png = await cdnUpload(svc, user.key, await pngWithAlpha(200, 100), { filename: 'p.png', mime: 'image/png' });
    const p = await request(svc.url(`/cdn/${png.imageId}/info`));
    expect(p.status).to.equal(200);
    expect(p.body).to.include({ format: 'png', has_alpha: true, animated: false, frames: 1, width: 200, height: 100, orientation: 1 });
  });

  it('errors: unknown id 404, /image/info without src 422, without key 422', async () => {
    const unknown = await request(svc.url('/cdn/0123456789abcdef01234567/info'));
    expect(unknown.status).to.equal(404);
    expectValidation(await request(svc.url('/image/info'), { key: user.key }), ['query.src']);
    expectValidation(await request(svc.url(`/image/info?src=${encodeURIComponent(gps.public_url)}`)), ['header.x-api-key']);
  });
});
