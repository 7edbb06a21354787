// remove_bg over HTTP on the transform routes (set A /transform, set B /image/{path}, /cdn/{id}):
// a portrait comes back with a transparent background where the format keeps alpha; a photo
// without a person comes back as the plain transform with X-Pictor-Remove-Bg: no-person, on the
// miss and on the hit (read back from the stored derivative); bad values are refused in each
// route's documented shape. The pixel-level checks against a known mask are in test/imaging.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { CORPUS } from '../fixtures/images.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectValidation, type CdnUploadBody } from './set-b-helpers.js';

/** Share of pixels with alpha below 10. */
async function transparentShare(bytes: Buffer): Promise<number> {
  const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  let clear = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] < 10) clear++;
  return clear / (info.width * info.height);
}

describe('remove_bg on the transform routes', function () {
  this.timeout(180_000);
  let svc: TestService;
  let user: Awaited<ReturnType<TestService['createUser']>>;
  let portrait: CdnUploadBody;
  let landscape: CdnUploadBody;
  before(async () => {
    svc = await TestService.start({ env: { WORKER_CONCURRENCY: '2' } });
    user = await svc.createUser();
    portrait = await cdnUpload(svc, user.key, fs.readFileSync(path.join(CORPUS, 'faces/02_grace_hopper.jpg')), { filename: 'hopper.jpg' });
    landscape = await cdnUpload(svc, user.key, fs.readFileSync(path.join(CORPUS, 'photos/Rocket.jpg')), { filename: 'rocket.jpg' });
  });
  after(async () => svc?.stop());

  it('GET /cdn/{id}: a portrait with its background transparent (PNG, WebP); JPEG on white', async () => {
    for (const f of ['png', 'webp']) {
      const res = await request(svc.url(`/cdn/${portrait.imageId}?w=300&f=${f}&remove_bg=true`));
      expect(res.status, f).to.equal(200);
      expect(res.headers.get('x-pictor-remove-bg'), f).to.equal(null);
      expect((await sharp(res.bytes).metadata()).hasAlpha, f).to.equal(true);
      expect(await transparentShare(res.bytes), f).to.be.within(0.1, 0.8);
    }
    const jpeg = await request(svc.url(`/cdn/${portrait.imageId}?w=300&f=jpeg&remove_bg=true`));
    expect(jpeg.status).to.equal(200);
    const { data } = await sharp(jpeg.bytes).raw().toBuffer({ resolveWithObject: true });
    // The top-left corner is the studio's dark backdrop in the original: white now.
    for (const v of data.subarray(0, 3)) expect(v).to.be.at.least(245);
  });

  it('no person: the plain transform and X-Pictor-Remove-Bg: no-person, on the miss and the hit, on every route', async () => {
    const plain = await request(svc.url(`/cdn/${landscape.imageId}?w=400&f=png`));
    for (const attempt of ['miss', 'hit']) {
      const res = await request(svc.url(`/cdn/${landscape.imageId}?w=400&f=png&remove_bg=true`));
      expect(res.status, attempt).to.equal(200);
      expect(res.headers.get('x-pictor-remove-bg'), attempt).to.equal('no-person');
      expect(Buffer.compare(await sharp(res.bytes).raw().toBuffer(), await sharp(plain.bytes).raw().toBuffer()), attempt).to.equal(0);
    }
    expect(plain.headers.get('x-pictor-remove-bg')).to.equal(null);
    const src = encodeURIComponent(landscape.public_url);
    const b = await request(svc.url(`/image/x.png?src=${src}&w=300&remove_bg=true`), { key: user.key });
    expect(b.status).to.equal(200);
    expect(b.headers.get('x-pictor-remove-bg')).to.equal('no-person');
    const a = await request(svc.url(`/transform?src=${src}&w=300&f=png&remove_bg=true`), { key: user.key });
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    expect(a.headers.get('x-pictor-remove-bg')).to.equal('no-person');
  });

  it('bad values: each route’s documented shape', async () => {
    const src = encodeURIComponent(portrait.public_url);
    for (const value of ['maybe', 'yes', '2']) {
      expectValidation(await request(svc.url(`/cdn/${portrait.imageId}?remove_bg=${value}`)), ['query.remove_bg']);
      expectValidation(await request(svc.url(`/image/x.jpg?src=${src}&remove_bg=${value}`), { key: user.key }), ['query.remove_bg']);
      const a = await request(svc.url(`/transform?src=${src}&remove_bg=${value}`), { key: user.key });
      expect(a.status, `remove_bg=${value}`).to.equal(422);
      expect(a.body.type).to.equal('image_processing_error');
      expect(a.body.msg).to.include('remove_bg');
    }
  });
});
