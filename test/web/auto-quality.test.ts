// q=auto over HTTP on every transform route (set A /transform, set B /image/{path}, /cdn/{id},
// srcset): the chosen quality in X-Pictor-Quality on the miss and on the hit (read back from the
// stored derivative), a variant's quality ordering, numeric q untouched, and bad values refused
// in each route's documented shape. The perceptual and byte targets are in test/imaging.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { CORPUS } from '../fixtures/images.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectValidation, type CdnUploadBody } from './set-b-helpers.js';

describe('q=auto on the transform routes', function () {
  this.timeout(120_000);
  let svc: TestService;
  let user: Awaited<ReturnType<TestService['createUser']>>;
  let photo: CdnUploadBody;
  before(async () => {
    svc = await TestService.start({ env: { WORKER_CONCURRENCY: '2' } });
    user = await svc.createUser();
    photo = await cdnUpload(svc, user.key, fs.readFileSync(path.join(CORPUS, 'photos/Coffee.jpg')), { filename: 'coffee.jpg' });
  });
  after(async () => svc?.stop());

  function quality(res: { headers: Headers }): number {
    const header = res.headers.get('x-pictor-quality');
    expect(header, 'X-Pictor-Quality').to.match(/^\d{1,3}$/);
    return Number(header);
  }

  it('GET /cdn/{id}: the chosen quality on the miss and again on the hit; the variants order it', async () => {
    const url = (q: string) => svc.url(`/cdn/${photo.imageId}?w=600&f=jpeg&q=${q}`);
    const miss = await request(url('auto'));
    expect(miss.status).to.equal(200);
    const chosen = quality(miss);
    expect(chosen).to.be.within(10, 95);
    const hit = await request(url('auto'));
    expect(hit.status).to.equal(200);
    expect(quality(hit)).to.equal(chosen);
    expect(Buffer.compare(hit.bytes, miss.bytes)).to.equal(0);
    // The same request as q=auto:good.
    expect(quality(await request(url('auto:good')))).to.equal(chosen);
    const eco = quality(await request(url('auto:eco')));
    const best = quality(await request(url('auto:best')));
    expect(eco).to.be.below(chosen);
    expect(best).to.be.above(chosen);
    // A numeric q names no chosen quality.
    const fixed = await request(url('70'));
    expect(fixed.status).to.equal(200);
    expect(fixed.headers.get('x-pictor-quality')).to.equal(null);
    // The output is a JPEG of that quality: sharp reads back a JPEG of the requested width.
    const meta = await sharp(miss.bytes).metadata();
    expect([meta.format, meta.width]).to.deep.equal(['jpeg', 600]);
  });

  it('GET /image/{path} (keyed) and GET /transform (set A, JSON): the header on miss and hit', async () => {
    const src = encodeURIComponent(photo.public_url);
    for (const attempt of ['miss', 'hit']) {
      const b = await request(svc.url(`/image/x.webp?src=${src}&w=500&q=auto:eco`), { key: user.key });
      expect(b.status, attempt).to.equal(200);
      expect(b.headers.get('content-type')).to.equal('image/webp');
      quality(b);
      const a = await request(svc.url(`/transform?src=${src}&w=500&f=webp&q=auto`), { key: user.key });
      expect(a.status, `${attempt}: ${JSON.stringify(a.body)}`).to.equal(200);
      expect(a.headers.get('x-cache')).to.equal(attempt === 'miss' ? 'MISS' : 'HIT');
      quality(a);
    }
  });

  it('opt=true chooses the quality (PNG excepted)', async () => {
    const res = await request(svc.url(`/cdn/${photo.imageId}?w=400&opt=true`), { headers: { Accept: 'image/webp' } });
    expect(res.status).to.equal(200);
    quality(res);
    const png = await request(svc.url(`/cdn/${photo.imageId}?w=400&opt=true&f=png`));
    expect(png.status).to.equal(200);
    expect(png.headers.get('x-pictor-quality')).to.equal(null);
  });

  it('srcset q=auto: every signed URL loads with its chosen quality', async () => {
    const res = await request(svc.url(`/generate/srcset?src=${encodeURIComponent(photo.public_url)}&w=300,600&f=webp&q=auto`), { key: user.key });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const urls = (res.body.srcset as string).split(', ').map((entry) => entry.split(' ')[0]);
    expect(urls).to.have.length(2);
    for (const u of urls) {
      expect(u).to.include('q=auto');
      const img = await request(u);
      expect(img.status).to.equal(200);
      quality(img);
    }
  });

  it('bad values: 422 in each route’s shape', async () => {
    for (const value of ['auto:max', 'automatic', 'auto:', 'AUTO:eco', '0', '101']) {
      const q = encodeURIComponent(value);
      expectValidation(await request(svc.url(`/cdn/${photo.imageId}?q=${q}`)), ['query.q']);
      expectValidation(await request(svc.url(`/image/x.jpg?src=${encodeURIComponent(photo.public_url)}&q=${q}`), { key: user.key }), ['query.q']);
      const a = await request(svc.url(`/transform?src=${encodeURIComponent(photo.public_url)}&q=${q}`), { key: user.key });
      expect(a.status, value).to.equal(422);
      expect(a.body.type).to.equal('image_processing_error');
      expect(a.body.msg).to.match(/\bq\b/);
      const s = await request(svc.url(`/generate/srcset?src=${encodeURIComponent(photo.public_url)}&q=${q}`), { key: user.key });
      expect(s.status, `srcset q=${value}`).to.equal(400);
    }
  });
});
