// Fault 2: Redis stopped while the front door and workers run. Requests that need a queue fail
// fast with 503 + Retry-After (no hang), requests that do not need Redis keep working, /health
// names redis, and once redis-server is back on the same port everything recovers by itself.
import { expect } from 'chai';
import { startRedisServer, type RedisServerHandle } from '../../scripts/lib/redis-server.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { assertConsistent, figure, SHORT_LOCKS, timed, waitFor } from './fault-helpers.js';

/** /health shows error texts and worker detail only to the admin credential. */
const ADMIN_TOKEN = 'health-admin-token';

const FAST_MS = 3000;

describe('fault 2: Redis stopped while the service runs', function () {
  this.timeout(60_000);
  let svc: TestService;
  let restarted: RedisServerHandle | null = null;

  before(async () => {
    svc = await TestService.start({ workers: 1, env: { ...SHORT_LOCKS, AVIF_EFFORT: '4', ADMIN_TOKEN } });
  });
  after(async () => {
    await svc?.stop();
    await restarted?.stop();
  });

  it('fails fast with 503 while Redis is away and recovers without a restart', async () => {
    const user = await svc.createUser();
    const image = await jpeg(320, 240);
    const first = await upload(svc.baseUrl, { key: user.key, bytes: image, filename: 'before.jpg' });
    expect(first.status).to.equal(200);
    const cachedUrl = svc.url(`/transform?src=${encodeURIComponent(first.body.public_url)}&w=100&f=webp`);
    expect((await request(cachedUrl, { key: user.key })).status).to.equal(200);

    await svc.redis.stop();

    // An upload needs the queue: 503 with Retry-After, quickly, and its staged bytes are removed.
    const up = await timed(upload(svc.baseUrl, { key: user.key, bytes: image, filename: 'during.jpg' }));
    expect(up.value.status, JSON.stringify(up.value.body)).to.equal(503);
    expect(up.value.headers.get('retry-after')).to.match(/^\d+$/);
    expect(up.ms).to.be.below(FAST_MS);

    // A transform that must render: the same.
    const tr = await timed(request(svc.url(`/transform?src=${encodeURIComponent(first.body.public_url)}&w=150&f=webp`), { key: user.key }));
    expect(tr.value.status, JSON.stringify(tr.value.body)).to.equal(503);
    expect(tr.ms).to.be.below(FAST_MS);

    // Async mode cannot queue either.
    const asyncUp = await timed(upload(svc.baseUrl, { key: user.key, bytes: image, filename: 'async.jpg', query: { async: 'true' } }));
    expect(asyncUp.value.status).to.equal(503);
    expect(asyncUp.ms).to.be.below(FAST_MS);

    // What does not need Redis still works: a derivative that exists is answered from storage.
    const cached = await timed(request(cachedUrl, { key: user.key }));
    expect(cached.value.status).to.equal(200);
    expect(cached.value.headers.get('x-cache')).to.equal('HIT');

    const health = await timed(request(svc.url('/health'), { headers: { 'X-Admin-Token': ADMIN_TOKEN } }));
    expect(health.value.status).to.equal(503);
    expect(health.value.body.failing).to.include('redis');
    expect(health.value.body.checks.redis.ok).to.equal(false);
    expect(health.value.body.checks.redis.error).to.be.a('string').and.not.equal('');
    expect(health.ms).to.be.below(FAST_MS);
    figure(`fault 2: with Redis down: upload 503 in ${up.ms} ms, transform 503 in ${tr.ms} ms, /health 503 in ${health.ms} ms (redis: "${health.value.body.checks.redis.error}")`);

    // Back on the same port (empty: no persistence). Front door, queue events and worker reconnect.
    restarted = await startRedisServer({ port: svc.redis.port });
    const backAt = Date.now();
    const healthy = await waitFor('/health to report ok', async () => {
      const h = await request(svc.url('/health'), { headers: { 'X-Admin-Token': ADMIN_TOKEN } });
      return h.status === 200 ? h : null;
    }, 30_000, 100);
    const healthMs = Date.now() - backAt;
    expect(healthy.body.checks.worker.detail.count).to.equal(1);
    const after = await waitFor('an upload to succeed', async () => {
      const res = await upload(svc.baseUrl, { key: user.key, bytes: image, filename: 'after.jpg' });
      return res.status === 200 ? res : null;
    }, 30_000, 200);
    const uploadMs = Date.now() - backAt;
    expect(after.body.public_url).to.match(/after\.jpg$/);
    const fresh = await request(svc.url(`/transform?src=${encodeURIComponent(after.body.public_url)}&w=120&f=jpeg`), { key: user.key });
    expect(fresh.status).to.equal(200);
    figure(`fault 2: Redis restarted → /health ok after ${healthMs} ms, first upload through a worker after ${uploadMs} ms`);

    // Only the uploads that succeeded exist; nothing was half-stored by the refused ones.
    const state = await assertConsistent(svc.deps.catalog, svc.deps.storage, user.userId);
    expect(state.images).to.equal(2);
  });

  it('a caller waiting on a job when Redis goes away is answered 503 within seconds', async () => {
    const user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(2400, 1600), filename: 'slow.jpg' });
    expect(up.status).to.equal(200);
    // A slow AVIF render, so Redis goes away while the caller waits on it.
    const pending = request(svc.url(`/transform?src=${encodeURIComponent(up.body.public_url)}&w=1200&f=avif`), { key: user.key });
    await waitFor('the job to be active', async () => (await svc.deps.jobs.queues.transform.getJobs(['active'])).length > 0, 10_000, 20);
    const redis = restarted ?? svc.redis;
    await redis.stop();
    const stoppedAt = Date.now();
    try {
      const res = await pending;
      const afterStop = Date.now() - stoppedAt;
      figure(`fault 2: a caller waiting on a job when Redis stopped got ${res.status} ${afterStop} ms after the stop`);
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      expect(afterStop).to.be.below(FAST_MS + 1000);
    } finally {
      restarted = await startRedisServer({ port: redis.port });
    }
    // The worker kept rendering and recorded what it stored: catalog and storage still agree.
    await waitFor('the worker to reconnect', async () => (await request(svc.url('/health'), { headers: { 'X-Admin-Token': ADMIN_TOKEN } })).status === 200, 20_000, 200);
    await assertConsistent(svc.deps.catalog, svc.deps.storage, user.userId);
  });
});
