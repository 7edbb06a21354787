// Usage counters under concurrency: 50 concurrent uploads, 20 deletes (some sent twice
// at once) and 100 serves, all interleaved, leave exactly the expected storage_bytes, image_count,
// bandwidth_bytes — and derivative_count / transformations that match the catalog.
import { expect } from 'chai';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { storedObjects, tinyJpeg, usageOf } from './set-b-helpers.js';

const UPLOADS = 50;
const DELETES = 20;

describe('usage counters under concurrent uploads, deletes and serves', function () {
  this.timeout(120_000);
  let svc: TestService;
  before(async () => {
    svc = await TestService.start({ workers: 2, env: { WORKER_CONCURRENCY: '6' } });
  });
  after(async () => svc?.stop());

  it(`${UPLOADS} uploads, ${DELETES} deletes and 100 serves leave exact counters`, async () => {
    const user = await svc.createUser();
    const files = await Promise.all(Array.from({ length: UPLOADS }, (_, i) => tinyJpeg(i, 16 + (i % 9) * 4, 12 + (i % 5) * 4)));
    const sizes = new Map<number, number>();
    let servedBytes = 0;
    let serves = 0;
    const variants = new Set<string>();
    const deletedBy: Record<number, number> = {};

    // Serves are of three kinds: a derivative (two variants, one negotiated) or the original file.
    const serve = async (imageId: string, publicUrl: string, kind: number) => {
      const res =
        kind === 0
          ? await request(svc.url(`/cdn/${imageId}?w=8&f=png`))
          : kind === 1
            ? await request(svc.url(`/cdn/${imageId}`), { headers: { Accept: 'image/webp,*/*' } })
            : await request(publicUrl);
      expect(res.status, `serve ${kind}`).to.equal(200);
      expect(Number(res.headers.get('content-length'))).to.equal(res.bytes.length);
      if (kind !== 2) variants.add(`${imageId}:${kind}`);
      servedBytes += res.bytes.length;
      serves++;
      // A revalidation answered 304 sends (and counts) nothing.
      const etag = res.headers.get('etag')!;
      const again = await request(kind === 2 ? publicUrl : svc.url(`/cdn/${imageId}${kind === 0 ? '?w=8&f=png' : ''}`), {
        headers: { 'If-None-Match': etag, ...(kind === 1 ? { Accept: 'image/webp,*/*' } : {}) },
      });
      expect(again.status).to.equal(304);
    };

    await Promise.all(
      files.map(async (bytes, i) => {
        const up = await upload(svc.baseUrl, { path: '/cdn/upload', key: user.key, bytes, filename: `u${i}.jpg` });
        expect(up.status, JSON.stringify(up.body)).to.equal(200);
        const { imageId, public_url: publicUrl, size } = up.body as { imageId: string; public_url: string; size: number };
        sizes.set(i, size);
        if (i < DELETES) {
          // Half the doomed images are served before they go (their bandwidth stays counted).
          if (i < 10) await serve(imageId, publicUrl, i % 3);
          const deleteOne = () => request(svc.url(`/cdn/${imageId}`), { method: 'DELETE', key: user.key });
          const deleteBatch = () => request(svc.url('/cdn/images'), { method: 'DELETE', key: user.key, json: { imageIds: [imageId] } });
          const calls = i % 4 === 0 ? [deleteOne(), deleteBatch()] : [i % 2 ? deleteOne() : deleteBatch()];
          const results = await Promise.all(calls);
          deletedBy[i] = results.filter((r) => r.status === 200 && r.body.deleted.length === 1).length;
          for (const r of results) expect([200, 404]).to.include(r.status);
        } else {
          for (let k = 0; k < 3; k++) await serve(imageId, publicUrl, (i + k) % 3);
        }
      }),
    );

    expect(serves).to.equal(100);
    expect(Object.values(deletedBy), 'each image deleted exactly once').to.deep.equal(new Array(DELETES).fill(1));
    const remaining = [...sizes.entries()].filter(([i]) => i >= DELETES);
    const expectedStorage = remaining.reduce((s, [, size]) => s + size, 0);
    await svc.derivativesSettled(user.userId);
    const usage = await usageOf(svc, user.key);
    // Derivative bytes count toward storage: storage_bytes = originals + derivatives still stored.
    const derivativeBytes = (await storedObjects(svc, user.userId)).filter((o) => o.key.includes('&v=')).reduce((s, o) => s + o.size, 0);
    expect(usage.derivative_bytes).to.equal(derivativeBytes);
    expect({ storage_bytes: usage.storage_bytes - derivativeBytes, image_count: usage.image_count, bandwidth_bytes: usage.bandwidth_bytes }).to.deep.equal({
      storage_bytes: expectedStorage,
      image_count: UPLOADS - DELETES,
      bandwidth_bytes: servedBytes,
    });
    // Derivatives: the counter equals what the catalog and storage hold; every distinct variant
    // was one transformation (deleted images' included).
    const derivatives = await svc.deps.catalog.derivatives.countDocuments({ userId: user.userId });
    expect(usage.derivative_count).to.equal(derivatives);
    expect(usage.transformations).to.equal(variants.size);
    const stored = await storedObjects(svc, user.userId);
    expect(stored.filter((o) => !o.key.includes('&v=')).reduce((s, o) => s + o.size, 0)).to.equal(expectedStorage);
    expect(stored.filter((o) => o.key.includes('&v=')).length).to.equal(derivatives);
    expect(await svc.deps.catalog.images.countDocuments({ userId: user.userId })).to.equal(UPLOADS - DELETES);
    console.log(`      storage_bytes ${usage.storage_bytes}, image_count ${usage.image_count}, bandwidth_bytes ${usage.bandwidth_bytes}, derivatives ${derivatives}, transformations ${usage.transformations}`);
  });
});
