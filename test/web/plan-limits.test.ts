// Plans enforced: monthly transformations and bandwidth refuse past the plan's
// limit with 429, a message naming the limit and Retry-After at the month's end; stored
// derivatives keep being served past the transformation limit; no new derivatives while storage
// (derivatives included) is full; async uploads bounded per user before anything is staged.
// Counters are brought near a limit by writing them directly (reaching 5,000 transformations or
// 10 GB by requests would take minutes); everything after that goes through HTTP and workers.
import { expect } from 'chai';
import { planById } from '../../src/catalog/plans.js';
import { addMonthlyUsage, addStorageUsage, nextPeriodStart, readUsage } from '../../src/catalog/usage.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { waitFor } from '../faults/fault-helpers.js';
import { cdnUpload, expectDetail, tinyJpeg } from './set-b-helpers.js';

const free = planById('free');

function expectRetryAfterMonthEnd(res: { headers: Headers }): void {
  const retryAfter = Number(res.headers.get('retry-after'));
  const expected = (nextPeriodStart().getTime() - Date.now()) / 1000;
  expect(retryAfter).to.be.within(expected - 30, expected + 30);
}

describe('plan limits', function () {
  this.timeout(90_000);
  let svc: TestService;

  before(async () => {
    // QUOTA_CACHE_MS=0: every check reads the counters, so the test needs no waiting.
    svc = await TestService.start({ env: { QUOTA_CACHE_MS: '0' } });
  });
  after(async () => svc?.stop());

  it('transformations_per_month: 429 naming the limit with Retry-After to the month\'s end; stored derivatives still served', async () => {
    const user = await svc.createUser(undefined, 'free');
    const up = await cdnUpload(svc, user.key, await tinyJpeg(1, 200, 100), { filename: 't.jpg' });
    await addMonthlyUsage(svc.deps.catalog, user.userId, { transformations: free.transformations_per_month - 1 });
    const last = await request(svc.url(`/cdn/${up.imageId}?w=50&f=png`));
    expect(last.status).to.equal(200);
    await svc.derivativesSettled(user.userId);
    expect((await readUsage(svc.deps.catalog, user.userId)).transformations).to.equal(free.transformations_per_month);

    const refused = await request(svc.url(`/cdn/${up.imageId}?w=60&f=png`));
    expectDetail(refused, 429, /5000 transformations per month \(transformations_per_month\)/);
    expect(refused.body.detail).to.match(/resets at \d{4}-\d\d-01T00:00:00\.000Z/);
    expectRetryAfterMonthEnd(refused);
    // Set A's shape on /transform.
    const setA = await request(svc.url(`/transform?src=${encodeURIComponent(up.public_url)}&w=70`), { key: user.key });
    expect(setA.status).to.equal(429);
    expect(setA.body).to.deep.include({ type: 'request_error', status_code: 429 });
    expect(setA.body.msg).to.match(/transformations_per_month/);
    expectRetryAfterMonthEnd(setA);
    // The stored derivative is not a new transformation: served.
    const again = await request(svc.url(`/cdn/${up.imageId}?w=50&f=png`));
    expect(again.status).to.equal(200);
    expect(again.headers.get('x-cache')).to.equal('HIT');
    expect(Buffer.compare(again.bytes, last.bytes)).to.equal(0);
    expect((await readUsage(svc.deps.catalog, user.userId)).transformations).to.equal(free.transformations_per_month);
  });

  it('bandwidth_bytes_per_month: 429 once used up, for stored derivatives and originals alike; a 304 still answers', async () => {
    const user = await svc.createUser(undefined, 'free');
    const up = await cdnUpload(svc, user.key, await tinyJpeg(2, 120, 80), { filename: 'b.jpg' });
    const first = await request(svc.url(`/cdn/${up.imageId}?w=40&f=jpeg`));
    expect(first.status).to.equal(200);
    const etag = first.headers.get('etag')!;
    await svc.deps.bandwidth.flush(user.userId);
    const used = (await readUsage(svc.deps.catalog, user.userId)).bandwidthBytes;
    await addMonthlyUsage(svc.deps.catalog, user.userId, { bandwidthBytes: free.bandwidth_bytes_per_month - used });

    for (const url of [svc.url(`/cdn/${up.imageId}?w=40&f=jpeg`), up.public_url]) {
      const refused = await request(url);
      expectDetail(refused, 429, /bandwidth per month \(bandwidth_bytes_per_month\)/);
      expectRetryAfterMonthEnd(refused);
      // The refusal is not cacheable as the image.
      expect(refused.headers.get('cache-control') ?? '').not.to.include('immutable');
    }
    expect((await request(svc.url(`/cdn/${up.imageId}?w=40&f=jpeg`), { headers: { 'If-None-Match': etag } })).status).to.equal(304);
    await svc.deps.bandwidth.flush(user.userId);
    expect((await readUsage(svc.deps.catalog, user.userId)).bandwidthBytes).to.equal(free.bandwidth_bytes_per_month);
  });

  it('storage_bytes counts derivatives; while it is full no new derivative is made (403), stored ones are served', async () => {
    const user = await svc.createUser(undefined, 'free');
    const up = await cdnUpload(svc, user.key, await tinyJpeg(3, 300, 200), { filename: 's.jpg' });
    const derived = await request(svc.url(`/cdn/${up.imageId}?w=200&f=png`));
    expect(derived.status).to.equal(200);
    await svc.derivativesSettled(user.userId);
    const usage = await readUsage(svc.deps.catalog, user.userId);
    expect(usage.derivativeBytes).to.equal(derived.bytes.length);
    expect(usage.storageBytes).to.equal(up.size + derived.bytes.length);
    await addStorageUsage(svc.deps.catalog, user.userId, { storageBytes: free.storage_bytes - usage.storageBytes });
    expectDetail(await request(svc.url(`/cdn/${up.imageId}?w=201&f=png`)), 403, /storage .* is full/);
    expect((await request(svc.url(`/cdn/${up.imageId}?w=200&f=png`))).status).to.equal(200);
  });
});

describe('async uploads bounded per user before staging', function () {
  this.timeout(90_000);
  let svc: TestService;
  let big: Buffer;

  const stagedCount = async () => (await svc.deps.storage.list('_staging/', { limit: 1000 })).items.length;
  const asyncUpload = (key: string, bytes: Buffer, name: string) => upload(svc.baseUrl, { key, bytes, filename: name, mime: 'image/jpeg', query: { async: 'true', public_id: name } });

  before(async () => {
    big = await jpeg(900, 700);
    // No worker at first: accepted async uploads stay in flight.
    svc = await TestService.start({ workers: 0, env: { MAX_ASYNC_UPLOADS_PER_USER: '3', MAX_STAGED_BYTES_PER_USER: String(Math.floor(big.length * 1.6)), QUOTA_CACHE_MS: '0' } });
  });
  after(async () => svc?.stop());

  it('past MAX_ASYNC_UPLOADS_PER_USER: 429 + Retry-After at once, nothing staged; slots come back when the jobs end', async () => {
    const user = await svc.createUser();
    for (let i = 0; i < 3; i++) expect((await asyncUpload(user.key, await tinyJpeg(10 + i), `c${i}`)).status).to.equal(202);
    expect(await stagedCount()).to.equal(3);
    const refused = await asyncUpload(user.key, await tinyJpeg(13), 'c3');
    expect(refused.status).to.equal(429);
    expect(refused.body).to.deep.include({ type: 'request_error', status_code: 429 });
    expect(refused.body.msg).to.match(/3 async uploads .* still being processed \(limit 3, MAX_ASYNC_UPLOADS_PER_USER\)/);
    expect(refused.headers.get('retry-after')).to.equal('5');
    expect(await stagedCount()).to.equal(3);
    // Another user is not affected; a synchronous upload is not an async one.
    const other = await svc.createUser();
    expect((await asyncUpload(other.key, await tinyJpeg(14), 'o1')).status).to.equal(202);

    svc.startWorker();
    await svc.waitForWorkers(1);
    await waitFor('the queued uploads to finish', async () => (await svc.deps.catalog.images.countDocuments({ userId: user.userId })) === 3);
    await waitFor('the slots to be freed', async () => (await asyncUpload(user.key, await tinyJpeg(15), 'c4')).status === 202);
  });

  it('past MAX_STAGED_BYTES_PER_USER: 429 naming the limit, nothing staged', async () => {
    const user = await svc.createUser();
    // Earlier uploads finish first; then the queue is held so this one stays in flight.
    await waitFor('earlier uploads to be finalised', async () => (await stagedCount()) === 0);
    await svc.deps.jobs.queues['upload-finalize'].pause();
    try {
      const before = await stagedCount();
      expect((await asyncUpload(user.key, big, 'big1')).status).to.equal(202);
      const refused = await asyncUpload(user.key, big, 'big2');
      expect(refused.status).to.equal(429);
      expect(refused.body.msg).to.match(/MAX_STAGED_BYTES_PER_USER/);
      expect(await stagedCount()).to.equal(before + 1);
    } finally {
      await svc.deps.jobs.queues['upload-finalize'].resume();
    }
  });

  it('an async upload that would pass the storage quota is refused (403) before it is staged', async () => {
    const user = await svc.createUser(undefined, 'free');
    await addStorageUsage(svc.deps.catalog, user.userId, { storageBytes: free.storage_bytes - 100 });
    await waitFor('earlier uploads to be finalised', async () => (await stagedCount()) === 0);
    const before = await stagedCount();
    const refused = await asyncUpload(user.key, await tinyJpeg(20, 64, 64), 'q1');
    expect(refused.status).to.equal(403);
    expect(refused.body.msg).to.match(/Storage quota exceeded.*storage_bytes/);
    expect(await stagedCount()).to.equal(before);
  });
});
