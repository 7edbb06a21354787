// blur_faces and pixelate_faces over HTTP: keyless callers may use them on /cdn/{id} (the upload's
// faces are used), they change the pixels, and bad values are refused in each route's shape. The
// pixel-level checks (energy inside the boxes, nothing outside) are in test/imaging.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { CORPUS } from '../fixtures/images.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectValidation, type CdnUploadBody } from './set-b-helpers.js';

describe('face privacy on the transform routes', function () {
  this.timeout(120_000);
  let svc: TestService;
  let user: Awaited<ReturnType<TestService['createUser']>>;
  let portrait: CdnUploadBody;
  before(async () => {
    svc = await TestService.start({ env: { WORKER_CONCURRENCY: '2' } });
    user = await svc.createUser();
    portrait = await cdnUpload(svc, user.key, fs.readFileSync(path.join(CORPUS, 'faces/02_grace_hopper.jpg')), { filename: 'hopper.jpg' });
  });
  after(async () => svc?.stop());

  it('keyless GET /cdn/{id}: blur_faces and pixelate_faces change the face, with their own keys', async () => {
    const plain = await request(svc.url(`/cdn/${portrait.imageId}?w=300&f=png`));
    expect(plain.status).to.equal(200);
    for (const q of ['blur_faces=10', 'pixelate_faces=10']) {
      const res = await request(svc.url(`/cdn/${portrait.imageId}?w=300&f=png&${q}`));
      expect(res.status, q).to.equal(200);
      const [a, b] = [await sharp(plain.bytes).raw().toBuffer(), await sharp(res.bytes).raw().toBuffer()];
      expect(a.length).to.equal(b.length);
      let changed = 0;
      for (let i = 0; i < a.length; i++) if (Math.abs(a[i] - b[i]) > 6) changed++;
      expect(changed / a.length, q).to.be.within(0.01, 0.6);
    }
  });

  it('bad values: 422 in each route’s shape', async () => {
    const src = encodeURIComponent(portrait.public_url);
    for (const [name, value] of [['blur_faces', '0'], ['blur_faces', '101'], ['blur_faces', 'soft'], ['pixelate_faces', '1'], ['pixelate_faces', '101'], ['pixelate_faces', '4.5']]) {
      expectValidation(await request(svc.url(`/cdn/${portrait.imageId}?${name}=${value}`)), [`query.${name}`]);
      expectValidation(await request(svc.url(`/image/x.jpg?src=${src}&${name}=${value}`), { key: user.key }), [`query.${name}`]);
      const a = await request(svc.url(`/transform?src=${src}&${name}=${value}`), { key: user.key });
      expect(a.status, `${name}=${value}`).to.equal(422);
      expect(a.body.type).to.equal('image_processing_error');
      expect(a.body.msg).to.include(name);
    }
  });
});
