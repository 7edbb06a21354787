// GET /plans and /plans/: the plans as JSON, public; and their quotas are enforced —
// storage on upload (403 naming the quota) and the per-plan upload size (413).
import { expect } from 'chai';
import sharp from 'sharp';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectDetail, GB, MB, snapshotUser, tinyJpeg, usageOf } from './set-b-helpers.js';

const PLAN_KEYS = ['id', 'name', 'price_usd_per_month', 'storage_bytes', 'bandwidth_bytes_per_month', 'transformations_per_month', 'max_upload_bytes'];

describe('set B plans', function () {
  this.timeout(60_000);
  let svc: TestService;
  before(async () => {
    svc = await TestService.start({ env: { WORKER_CONCURRENCY: '4' } });
  });
  after(async () => svc?.stop());

  it('GET /plans and GET /plans/ answer the same plan list, without a key', async () => {
    const a = await request(svc.url('/plans'));
    const b = await request(svc.url('/plans/'));
    expect(a.status).to.equal(200);
    expect(b.status).to.equal(200);
    expect(a.headers.get('content-type')).to.match(/^application\/json/);
    expect(b.body).to.deep.equal(a.body);
    expect(Object.keys(a.body)).to.deep.equal(['plans']);
    const plans = a.body.plans as Record<string, unknown>[];
    expect(plans.map((p) => p.id)).to.deep.equal(['free', 'pro', 'business']);
    for (const p of plans) {
      expect(Object.keys(p).sort()).to.deep.equal([...PLAN_KEYS].sort());
      for (const k of PLAN_KEYS.slice(2)) expect(p[k], `${String(p.id)}.${k}`).to.be.a('number').and.at.least(0);
    }
    expect(plans[0]).to.deep.equal({
      id: 'free',
      name: 'Free',
      price_usd_per_month: 0,
      storage_bytes: GB,
      bandwidth_bytes_per_month: 10 * GB,
      transformations_per_month: 5000,
      max_upload_bytes: 10 * MB,
    });
    // Each plan offers at least as much as the one before it.
    for (let i = 1; i < plans.length; i++) {
      for (const k of PLAN_KEYS.slice(2)) expect(plans[i][k] as number, `${String(plans[i].id)}.${k}`).to.be.at.least(plans[i - 1][k] as number);
    }
  });

  it('a key does not change the answer, and a bad key is not refused (public route)', async () => {
    const user = await svc.createUser();
    const anon = await request(svc.url('/plans'));
    expect((await request(svc.url('/plans'), { key: user.key })).body).to.deep.equal(anon.body);
    expect((await request(svc.url('/plans'), { key: 'pk_bogus' })).status).to.equal(200);
  });

  it('/cdn/usage reports the caller\'s plan and its limits', async () => {
    const plans = (await request(svc.url('/plans'))).body.plans as { id: string; storage_bytes: number; bandwidth_bytes_per_month: number; transformations_per_month: number; max_upload_bytes: number }[];
    for (const plan of plans) {
      const user = await svc.createUser(undefined, plan.id);
      const usage = await usageOf(svc, user.key);
      expect(usage.plan).to.equal(plan.id);
      expect(usage.limits).to.deep.equal({
        storage_bytes: plan.storage_bytes,
        bandwidth_bytes_per_month: plan.bandwidth_bytes_per_month,
        transformations_per_month: plan.transformations_per_month,
        max_upload_bytes: Math.min(plan.max_upload_bytes, svc.config.maxUploadBytes),
      });
    }
  });

  it('the storage quota is enforced: an upload that would pass it is 403 naming the quota', async () => {
    const free = await svc.createUser(undefined, 'free');
    const first = await cdnUpload(svc, free.key, await tinyJpeg(1, 64, 48), { filename: 'first.jpg' });
    // Pretend the account is almost full: the next upload crosses 1 GB by a few bytes.
    const next = await tinyJpeg(2, 64, 48);
    await svc.deps.catalog.usage.updateOne({ _id: free.userId }, { $set: { storageBytes: GB - next.length + 1 } });
    const before = await snapshotUser(svc, free.userId);
    const res = await upload(svc.baseUrl, { path: '/cdn/upload', key: free.key, bytes: next, filename: 'second.jpg' });
    expectDetail(res, 403, new RegExp(`quota.*${GB}`, 'i'));
    expect(await snapshotUser(svc, free.userId)).to.deep.equal(before);
    // Exactly at the quota is allowed; replacing an image by a smaller one frees space.
    await svc.deps.catalog.usage.updateOne({ _id: free.userId }, { $set: { storageBytes: GB - next.length } });
    await cdnUpload(svc, free.key, next, { filename: 'second.jpg' });
    expect((await usageOf(svc, free.key)).storage_bytes).to.equal(GB);
    const smaller = await tinyJpeg(3, 8, 8);
    const replaced = await cdnUpload(svc, free.key, smaller, { filename: 'first.jpg' });
    expect(replaced.imageId).to.equal(first.imageId);
    expect((await usageOf(svc, free.key)).storage_bytes).to.equal(GB - first.size + smaller.length);
  });

  it('concurrent uploads cannot pass the storage quota together', async () => {
    const free = await svc.createUser(undefined, 'free');
    const bytes = await tinyJpeg(100, 64, 48);
    // Room for exactly three of the twelve (same size, different names).
    const start = GB - 3 * bytes.length - Math.floor(bytes.length / 2);
    await svc.deps.catalog.usage.updateOne({ _id: free.userId }, { $set: { userId: free.userId, period: 'total', storageBytes: start } }, { upsert: true });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => upload(svc.baseUrl, { path: '/cdn/upload', key: free.key, bytes, filename: `race${i}.jpg` })));
    const accepted = results.filter((r) => r.status === 200);
    for (const r of results.filter((x) => x.status !== 200)) expectDetail(r, 403, /quota/i);
    expect(accepted.length).to.equal(3);
    const usage = await usageOf(svc, free.key);
    expect(usage.storage_bytes).to.equal(start + 3 * bytes.length);
    expect(usage.storage_bytes).to.be.at.most(GB);
    expect(usage.image_count).to.equal(3);
    const doc = await svc.deps.catalog.usage.findById(free.userId).lean();
    expect(doc?.holds ?? {}, 'no hold left behind').to.deep.equal({});
  });

  it('the plan\'s upload size is enforced: 10.3 MB is 413 on free and accepted on pro', async () => {
    const width = 1900;
    const raw = Buffer.alloc(width * width * 3);
    for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
    const big = await sharp(raw, { raw: { width, height: width, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    expect(big.length).to.be.within(10 * MB, 20 * MB);
    const free = await svc.createUser(undefined, 'free');
    const refused = await upload(svc.baseUrl, { path: '/cdn/upload', key: free.key, bytes: big, filename: 'big.png' });
    expectDetail(refused, 413, /10\.0 MB/);
    expect(await svc.deps.catalog.images.countDocuments({ userId: free.userId })).to.equal(0);
    const pro = await svc.createUser(undefined, 'pro');
    const accepted = await cdnUpload(svc, pro.key, big, { filename: 'big.png' });
    expect(accepted.size).to.equal(big.length);
  });
});
