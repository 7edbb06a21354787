// The start-up reconcile against real storage (local files, and GCS through the real client and
// the fake GCS server): originals stored by the real upload path (front door + worker process)
// carry their rebuild metadata, so a catalog that lost them gets them back with the same ids;
// what cannot be trusted is quarantined, never deleted; entries without files are set aside.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { Storage as GcsClient } from '@google-cloud/storage';
import { lostImages, reconcileCatalogWithStorage } from '../../src/catalog/reconcile.js';
import { readUsage } from '../../src/catalog/usage.js';
import { blockGoogleCredentials, startFakeGcs, type FakeGcs } from '../fixtures/fake-gcs-server.js';
import { jpeg, pngWithAlpha } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

for (const driver of ['local', 'gcs'] as const) {
  describe(`reconcile at start-up (${driver} storage)`, function () {
    this.timeout(90_000);
    let fake: FakeGcs | null = null;
    let svc: TestService;
    let restoreEnv = () => undefined as void;

    before(async () => {
      let env: Record<string, string> = {};
      if (driver === 'gcs') {
        // No Google credentials may be looked up, in this process or in the forked workers.
        restoreEnv = blockGoogleCredentials();
        fake = await startFakeGcs();
        await new GcsClient({ apiEndpoint: fake.endpoint, projectId: 'test', useAuthWithCustomEndpoint: false }).createBucket('pictor-reconcile');
        env = { STORAGE_DRIVER: 'gcs', GCS_BUCKET: 'pictor-reconcile', GCS_API_ENDPOINT: fake.endpoint };
      }
      svc = await TestService.start({ workers: 1, env });
    });
    after(async () => {
      await svc?.stop();
      await fake?.stop();
      restoreEnv();
    });

    it('an empty catalog against full storage adopts every original with its ids, project, size and usage', async () => {
      const user = await svc.createUser();
      const project = await request(svc.url('/cdn/projects'), { method: 'POST', key: user.key, json: { name: 'Holidays' } });
      expect(project.status).to.equal(200);
      const files = [await jpeg(320, 200), await pngWithAlpha(120, 90), await jpeg(64, 48)];
      const uploaded: { imageId: string; public_url: string; size: number; sha: string }[] = [];
      for (const [i, bytes] of files.entries()) {
        const res = await upload(svc.baseUrl, { key: user.key, bytes, filename: `f${i}`, path: '/cdn/upload', fields: { public_id: `trip/${i}`, project: 'holidays' } });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        uploaded.push({ imageId: res.body.imageId, public_url: res.body.public_url, size: res.body.size, sha: sha256(bytes) });
      }
      const rendered = await request(svc.url(`/transform?src=${encodeURIComponent(uploaded[0].public_url)}&w=100&f=webp`), { key: user.key });
      expect(rendered.status).to.equal(200);
      await svc.derivativesSettled(user.userId);
      const before = await svc.deps.catalog.images.find({ userId: user.userId }).sort({ _id: 1 }).lean();

      // The catalog loses everything about this user's images (as a catalog lost with DATA_DIR would).
      await svc.deps.catalog.images.deleteMany({ userId: user.userId });
      await svc.deps.catalog.derivatives.deleteMany({ userId: user.userId });
      await svc.deps.catalog.usage.deleteMany({ userId: user.userId });

      const report = await reconcileCatalogWithStorage(svc.deps.catalog, svc.deps.storage);
      expect(report.adopted.sort()).to.deep.equal(before.map((i) => i.storageKey).sort());
      expect(report.quarantined).to.deep.equal([]);
      expect(report.dropped).to.deep.equal([]);
      expect(report.derivativesRecorded).to.equal(1);
      const after = await svc.deps.catalog.images.find({ userId: user.userId }).sort({ _id: 1 }).lean();
      // The preview (placeholders, faces) is not rebuilt by an adoption: like a preview that failed at upload, it is null.
      expect(after.map((i) => i.preview ?? null)).to.deep.equal([null, null, null]);
      const strip = (docs: typeof before) => docs.map(({ updatedAt: _u, pendingUsage: _p, preview: _v, ...rest }) => ({ ...rest, _id: String(rest._id), projectId: String(rest.projectId) }));
      expect(strip(after)).to.deep.equal(strip(before));
      const usage = await readUsage(svc.deps.catalog, user.userId);
      expect(usage.imageCount).to.equal(3);
      // Derivative bytes count toward storage, as when the worker records them (docs/limits.md).
      const derivativeObjects = (await svc.deps.storage.list(`${user.userId}/`, { limit: 1000 })).items.filter((o) => o.key.includes('&v='));
      expect(derivativeObjects).to.have.length(1);
      expect(usage.derivativeCount).to.equal(1);
      expect(usage.derivativeBytes).to.equal(derivativeObjects[0].size);
      expect(usage.storageBytes).to.equal(uploaded.reduce((n, u) => n + u.size, 0) + derivativeObjects[0].size);

      // Through HTTP: the same ids list in the project, and the bytes are the uploaded ones.
      const listed = await request(svc.url('/cdn/images?project=holidays'), { key: user.key });
      expect((listed.body.images as { imageId: string }[]).map((i) => i.imageId).sort()).to.deep.equal(uploaded.map((u) => u.imageId).sort());
      for (const u of uploaded) {
        const doc = after.find((d) => String(d._id) === u.imageId)!;
        expect(sha256(await svc.deps.storage.read(doc.storageKey))).to.equal(u.sha);
        // The handed-out URL (CDN_URL on this service, with either driver) serves the same bytes.
        const served = await fetch(u.public_url);
        expect(served.status, u.public_url).to.equal(200);
        expect(sha256(Buffer.from(await served.arrayBuffer()))).to.equal(u.sha);
      }
      // A second run finds nothing to do.
      const again = await reconcileCatalogWithStorage(svc.deps.catalog, svc.deps.storage);
      expect([again.adopted.length, again.quarantined.length, again.dropped.length, again.derivativesRecorded, again.usageRecounted.length]).to.deep.equal([0, 0, 0, 0, 0]);
    });

    it('quarantines what it cannot trust, sets aside entries without files, keeps staged uploads with a pending job', async () => {
      const user = await svc.createUser();
      const kept = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(100, 80), filename: 'k.jpg', path: '/cdn/upload', fields: { public_id: 'kept' } });
      const gone = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(90, 70), filename: 'g.jpg', path: '/cdn/upload', fields: { public_id: 'gone' } });
      expect([kept.status, gone.status]).to.deep.equal([200, 200]);
      const storage = svc.deps.storage;
      const goneKey = `${user.userId}/images/gone.jpg`;
      await storage.delete(goneKey);
      // Bytes no upload stored (no metadata), and an original whose bytes no longer match its metadata.
      await storage.put(`${user.userId}/images/stray.jpg`, await jpeg(30, 30), { contentType: 'image/jpeg' });
      const keptKey = `${user.userId}/images/kept.jpg`;
      const keptObject = (await storage.stat(keptKey))!;
      const tampered = Buffer.from(await storage.read(keptKey));
      tampered[tampered.length - 3] ^= 0xff;
      await storage.put(`${user.userId}/images/tampered.jpg`, tampered, { contentType: 'image/jpeg', metadata: { ...keptObject.metadata, publicId: 'tampered' } });
      await storage.put('_staging/pending-upload', Buffer.from('staged'), {});
      await storage.put('_staging/abandoned-upload', Buffer.from('staged'), {});

      const report = await reconcileCatalogWithStorage(svc.deps.catalog, storage, { uploadJobPending: async (id) => id === 'pending-upload' });
      const mine = (key: string) => key.startsWith(`${user.userId}/`);
      expect(report.dropped.filter((d) => mine(d.storageKey)).map((d) => d.storageKey)).to.deep.equal([goneKey]);
      const quarantined = report.quarantined.filter((q) => mine(q.key));
      expect(quarantined.map((q) => q.key).sort()).to.deep.equal([`${user.userId}/images/stray.jpg`, `${user.userId}/images/tampered.jpg`]);
      expect(quarantined.find((q) => q.key.endsWith('stray.jpg'))!.reason).to.match(/no rebuild metadata/);
      expect(quarantined.find((q) => q.key.endsWith('tampered.jpg'))!.reason).to.match(/checksum/);
      for (const q of quarantined) {
        expect(await storage.stat(q.key)).to.equal(null);
        expect((await storage.stat(q.to))?.size, `${q.to} holds the bytes`).to.be.greaterThan(0);
      }
      expect(await storage.stat('_staging/pending-upload')).to.not.equal(null);
      expect(await storage.stat('_staging/abandoned-upload')).to.equal(null);

      // The entry without its file: not listed, not counted, kept in lostImages.
      const listed = await request(svc.url('/cdn/images'), { key: user.key });
      expect((listed.body.images as { public_id: string }[]).map((i) => i.public_id)).to.deep.equal(['kept']);
      const usage = await request(svc.url('/cdn/usage'), { key: user.key });
      expect(usage.body.image_count).to.equal(1);
      expect(usage.body.storage_bytes).to.equal(kept.body.size);
      expect(await lostImages(svc.deps.catalog).countDocuments({ userId: user.userId, publicId: 'gone' })).to.equal(1);
      await storage.delete('_staging/pending-upload');
    });
  });
}
