// Tenant isolation: user B's key, tried against every keyed endpoint with user A's image
// ids, project ids, slugs and src URLs, gets not_found / 404 / 403 — and A's catalog documents,
// stored objects and usage are byte-for-byte the same afterwards.
//
// Not covered on purpose: GET /cdn/{image_id}, the CDN file URLs and the demo route are public by
// design (no key is involved), so any caller may read A's images there; the key grants nothing.
import { expect } from 'chai';
import type { Credential } from '../../src/catalog/api-keys.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectDetail, listAll, snapshotUser, tinyJpeg, usageOf, type CdnUploadBody } from './set-b-helpers.js';

describe('tenant isolation (set B)', function () {
  this.timeout(60_000);
  let svc: TestService;
  let alice: Credential;
  let bob: Credential;
  let aliceImages: CdnUploadBody[];
  let aliceProjects: { projectId: string; slug: string; name: string }[];
  let bobImage: CdnUploadBody;
  let aliceJobId: string;

  before(async () => {
    svc = await TestService.start({ env: { WORKER_CONCURRENCY: '4' } });
    alice = await svc.createUser('alice-tenant');
    bob = await svc.createUser('bob-tenant');
    aliceImages = [
      await cdnUpload(svc, alice.key, await tinyJpeg(1, 40, 30), { filename: 'secret-one.jpg', project: 'Alice Secret' }),
      await cdnUpload(svc, alice.key, await tinyJpeg(2, 40, 30), { filename: 'secret-two.jpg', project: 'Alice Secret' }),
      await cdnUpload(svc, alice.key, await tinyJpeg(3, 40, 30), { filename: 'plain.jpg' }),
    ];
    // Some derivatives of Alice's, through both routes.
    for (const img of aliceImages) {
      expect((await request(svc.url(`/image/a.webp?src=${encodeURIComponent(img.public_url)}&w=20`), { key: alice.key })).status).to.equal(200);
      expect((await request(svc.url(`/cdn/${img.imageId}?w=10&f=png`))).status).to.equal(200);
    }
    // An async upload leaves a job id behind.
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(await tinyJpeg(5, 40, 30))]), 'later.jpg');
    const later = await fetch(svc.url('/cdn/upload'), { method: 'POST', body: form, headers: { 'X-API-Key': alice.key, Prefer: 'respond-async' } });
    expect(later.status).to.equal(202);
    aliceJobId = ((await later.json()) as { job_id: string }).job_id;
    for (let i = 0; i < 100 && (await request(svc.url(`/jobs/${aliceJobId}`), { key: alice.key })).body.state !== 'completed'; i++) await new Promise((r) => setTimeout(r, 50));
    aliceImages = (await listAll(svc, alice.key)) as unknown as CdnUploadBody[];
    expect(aliceImages).to.have.length(4);
    aliceProjects = (await request(svc.url('/cdn/projects'), { key: alice.key })).body.projects;
    expect(aliceProjects.map((p) => p.slug).sort()).to.deep.equal(['alice-secret', 'default']);
    bobImage = await cdnUpload(svc, bob.key, await tinyJpeg(9, 40, 30), { filename: 'bob.jpg' });
  });
  after(async () => svc?.stop());

  it('B gets not_found/404 everywhere with A\'s ids, slugs and URLs, and nothing of A\'s changes', async () => {
    const before = await snapshotUser(svc, alice.userId);
    expect(before.images).to.have.length(4);
    expect(before.derivatives).to.have.length(6);
    expect(before.storage.length).to.equal(10);
    const aliceIds = aliceImages.map((i) => i.imageId);
    const secret = aliceProjects.find((p) => p.slug === 'alice-secret')!;
    const aliceDefault = aliceProjects.find((p) => p.slug === 'default')!;

    // /image/test names B, never A.
    expect((await request(svc.url('/image/test'), { key: bob.key })).body).to.deep.equal({ valid: true, user_id: bob.userId, plan: 'pro' });

    // /image/{path}: A's src URLs, also with new parameters that would create derivatives.
    for (const img of aliceImages) {
      for (const q of ['w=20', 'w=33&f=png', 'opt=true', '']) {
        const res = await request(svc.url(`/image/x.webp?src=${encodeURIComponent(img.public_url)}${q ? '&' + q : ''}`), { key: bob.key });
        expectDetail(res, 404, /not found/i);
      }
      // B's own user id in front of A's public id is simply B's missing image.
      const forged = img.public_url.replace(`/${alice.userId}/`, `/${bob.userId}/`);
      expectDetail(await request(svc.url(`/image/x.jpg?src=${encodeURIComponent(forged)}`), { key: bob.key }), 404, /not found/i);
    }

    // Set A routes that take a src.
    const transform = await request(svc.url(`/transform?src=${encodeURIComponent(aliceImages[0].public_url)}&w=50`), { key: bob.key });
    expect(transform.status).to.equal(404);
    expect(transform.body).to.deep.include({ status_code: 404 });
    const srcset = await request(svc.url(`/generate/srcset?src=${encodeURIComponent(aliceImages[0].public_url)}`), { key: bob.key });
    expect(srcset.status).to.equal(404);

    // Listing: A's slug, A's cursor, no filter — only B's own images ever appear.
    const bySlug = await request(svc.url('/cdn/images?project=alice-secret'), { key: bob.key });
    expect(bySlug.body).to.deep.equal({ images: [], next_cursor: null, has_more: false });
    const byCursor = await request(svc.url(`/cdn/images?cursor=${aliceIds[0]}`), { key: bob.key });
    expect(byCursor.status).to.equal(200);
    for (const i of byCursor.body.images) expect(aliceIds).to.not.include(i.imageId);
    expect((await listAll(svc, bob.key)).map((i) => i.imageId)).to.deep.equal([bobImage.imageId]);

    // Deletes.
    const del = await request(svc.url('/cdn/images'), { method: 'DELETE', key: bob.key, json: { imageIds: aliceIds } });
    expect(del.status).to.equal(200);
    expect(del.body).to.deep.equal({ deleted: [], not_found: aliceIds });
    for (const id of aliceIds) expectDetail(await request(svc.url(`/cdn/${id}`), { method: 'DELETE', key: bob.key }), 404, /not found/i);

    // Projects: A's project ids (and A's default project) are not B's.
    for (const p of [secret, aliceDefault]) {
      expectDetail(await request(svc.url('/cdn/projects'), { method: 'PATCH', key: bob.key, json: { projectId: p.projectId, name: 'Hijacked' } }), 404, /project/i);
      expectDetail(await request(svc.url('/cdn/projects'), { method: 'PATCH', key: bob.key, json: { projectId: p.projectId, description: 'x' } }), 404, /project/i);
      for (const moveImagesToDefault of [true, false]) {
        expectDetail(await request(svc.url('/cdn/projects'), { method: 'DELETE', key: bob.key, json: { projectId: p.projectId, moveImagesToDefault } }), 404, /project/i);
      }
    }
    const bobProjects = (await request(svc.url('/cdn/projects'), { key: bob.key })).body.projects as { projectId: string }[];
    for (const p of aliceProjects) expect(bobProjects.map((b) => b.projectId)).to.not.include(p.projectId);

    // Uploading "into" A's project (by slug, name or id) or onto A's public id makes B's own things.
    const intoSlug = await cdnUpload(svc, bob.key, await tinyJpeg(10, 40, 30), { project: 'alice-secret', filename: 'secret-one.jpg' });
    const intoName = await cdnUpload(svc, bob.key, await tinyJpeg(11, 40, 30), { project: 'Alice Secret', filename: 'plain.jpg' });
    const intoId = await cdnUpload(svc, bob.key, await tinyJpeg(12, 40, 30), { project: secret.projectId, filename: 'x.jpg' });
    for (const up of [intoSlug, intoName, intoId]) expect(up.public_url.startsWith(`${svc.config.cdnUrl}/${bob.userId}/images/`)).to.equal(true);
    expect(intoSlug.project).to.equal('alice-secret');
    const bobSecret = (await svc.deps.catalog.projects.findOne({ userId: bob.userId, slug: 'alice-secret' }).lean())!;
    expect(String(bobSecret._id)).to.not.equal(secret.projectId);
    expect((await listAll(svc, bob.key, { project: 'alice-secret' })).map((i) => i.imageId)).to.deep.equal([intoName.imageId, intoSlug.imageId]);
    const viaField = await upload(svc.baseUrl, { path: '/cdn/upload', key: bob.key, bytes: await tinyJpeg(13, 40, 30), fields: { public_id: 'secret-two' } });
    expect(viaField.status).to.equal(200);
    expect(viaField.body.public_url).to.equal(`${svc.config.cdnUrl}/${bob.userId}/images/secret-two.jpg`);

    // Usage and job status are per user.
    const bobUsage = await usageOf(svc, bob.key);
    expect(bobUsage.image_count).to.equal(5);
    expectDetail(await request(svc.url(`/jobs/${aliceJobId}`), { key: bob.key }), 404, /not found/i);

    const after = await snapshotUser(svc, alice.userId);
    expect(after).to.deep.equal(before);
    // And A still sees everything of hers.
    expect((await listAll(svc, alice.key)).map((i) => i.imageId)).to.deep.equal(aliceIds);
  });
});
