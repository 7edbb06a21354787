import { expect } from 'chai';
import sharp from 'sharp';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

describe('smoke', () => {
  let svc: TestService;
  before(async () => {
    svc = await TestService.start();
  });
  after(async () => svc?.stop());

  it('uploads and transforms', async () => {
    const user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(800, 600), filename: 'cat.jpg' });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    const tr = await request(svc.url(`/transform?src=${encodeURIComponent(up.body.public_url)}&w=300&f=webp`), { key: user.key });
    expect(tr.status, JSON.stringify(tr.body)).to.equal(200);
    const img = await request(tr.body.public_url);
    const meta = await sharp(img.bytes).metadata();
    expect(meta.width).to.equal(300);
    expect(meta.format).to.equal('webp');
  });
});
