import { expect } from 'chai';
import sharp from 'sharp';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

describe('set B smoke', () => {
  let svc: TestService;
  before(async () => {
    svc = await TestService.start();
  });
  after(async () => svc?.stop());

  it('uploads to a project, lists, serves, deletes', async () => {
    const user = await svc.createUser();
    const up = await upload(svc.baseUrl, { path: '/cdn/upload', key: user.key, bytes: await jpeg(800, 600), filename: 'cat.jpg', fields: { project: 'My Trip' } });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    expect(up.body.project).to.equal('my-trip');
    const list = await request(svc.url('/cdn/images'), { key: user.key });
    expect(list.body.images).to.have.length(1);
    const served = await request(svc.url(`/cdn/${up.body.imageId}?w=200&f=png`));
    expect(served.status).to.equal(200);
    expect((await sharp(served.bytes).metadata()).width).to.equal(200);
    const img = await request(svc.url(`/image/x.webp?src=${encodeURIComponent(up.body.public_url)}&w=100&h=100&fit=COVER`), { key: user.key });
    expect(img.status).to.equal(200);
    const meta = await sharp(img.bytes).metadata();
    expect([meta.format, meta.width, meta.height]).to.deep.equal(['webp', 100, 100]);
    const bad = await request(svc.url(`/image/x.webp?w=0&q=500`));
    expect(bad.status).to.equal(422);
    expect(bad.body.detail.map((d: { loc: string[] }) => d.loc.join('.'))).to.have.members(['header.x-api-key', 'query.src', 'query.w', 'query.q']);
    const usage = await request(svc.url('/cdn/usage'), { key: user.key });
    expect(usage.body.image_count).to.equal(1);
    const projects = await request(svc.url('/cdn/projects'), { key: user.key });
    expect(projects.body.projects.map((p: { slug: string }) => p.slug)).to.have.members(['default', 'my-trip']);
    const del = await request(svc.url('/cdn/images'), { method: 'DELETE', key: user.key, json: { imageIds: [up.body.imageId, '0123456789abcdef01234567'] } });
    expect(del.body).to.deep.equal({ deleted: [up.body.imageId], not_found: ['0123456789abcdef01234567'] });
    const after = await request(svc.url('/cdn/usage'), { key: user.key });
    expect(after.body.image_count).to.equal(0);
    expect(after.body.storage_bytes).to.equal(0);
  });
});
