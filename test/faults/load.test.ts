// Fault 6: load. 2,000 uploads of small generated images from 32 concurrent clients through two
// worker processes. Every upload succeeds (nothing in this setup may refuse one); a failure would
// at least have to be a clear error (a status with a message, 503 with Retry-After); the catalog count, the stored originals and the usage bytes match the
// successes exactly. FAULT_LOAD_UPLOADS overrides the count on a slow machine (CI runs 2,000).
import { expect } from 'chai';
import { smallJpeg } from '../../scripts/lib/generated-images.js';
import { readUsage } from '../../src/catalog/usage.js';
import { upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { assertConsistent, figure, inventory, queuesSettled } from './fault-helpers.js';

const UPLOADS = Number(process.env.FAULT_LOAD_UPLOADS ?? 2000);
const CLIENTS = 32;
const USERS = 4;

interface Result {
  user: number;
  publicId: string;
  bytes: number;
  status: number;
  message?: string;
  retryAfter?: string | null;
}

describe(`fault 6: load — ${UPLOADS} uploads, ${CLIENTS} clients, 2 worker processes`, function () {
  this.timeout(180_000);
  let svc: TestService;

  before(async () => {
    svc = await TestService.start({ workers: 2, env: { API_KEY_CACHE_MS: '5000', WORKER_CONCURRENCY: '4', JOB_TIMEOUT_MS: '60000' } });
  });
  after(async () => svc?.stop());

  it('every upload succeeds; catalog, storage and usage match', async () => {
    const users = await Promise.all(Array.from({ length: USERS }, () => svc.createUser()));
    const images = await Promise.all(Array.from({ length: UPLOADS }, (_, i) => smallJpeg(i)));
    const results: Result[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        const user = client % USERS;
        while (next < UPLOADS) {
          const i = next++;
          const publicId = `load/${i}`;
          const res = await upload(svc.baseUrl, { key: users[user].key, bytes: images[i], filename: `${i}.jpg`, query: { public_id: publicId } });
          results.push({ user, publicId, bytes: images[i].length, status: res.status, message: res.body?.msg, retryAfter: res.headers.get('retry-after') });
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    await queuesSettled(svc.deps.jobs);

    const ok = results.filter((r) => r.status === 200);
    const failed = results.filter((r) => r.status !== 200);
    const reasons = [...new Set(failed.map((r) => `${r.status} ${r.message}`))];
    figure(`fault 6: ${UPLOADS} uploads from ${CLIENTS} clients in ${seconds.toFixed(1)} s (${(UPLOADS / seconds).toFixed(0)} uploads/s): ${ok.length} × 200, ${failed.length} failed${reasons.length ? ` (${reasons.join('; ')})` : ''}`);
    expect(results).to.have.length(UPLOADS);
    // A failure must be a clear one: an error status with a message, 503 with Retry-After.
    for (const f of failed) {
      expect(f.status).to.be.at.least(400);
      expect(f.message, `${f.publicId}: ${f.status} without a message`).to.be.a('string').and.not.equal('');
      if (f.status === 503) expect(f.retryAfter).to.match(/^\d+$/);
      expect(f.status, 'no timeouts (a timed-out job may still complete)').to.not.equal(504);
    }
    // Nothing here may refuse an upload: 32 clients keep at most 32 jobs waiting (QUEUE_MAX_WAITING
    // is 1,000), the users' plan quotas are far away, and there are no upload rate limits. So every
    // upload must succeed; a run where all of them failed "clearly" must not pass.
    expect(ok.length, `uploads answered 200 (failures: ${reasons.join('; ') || 'none'})`).to.equal(UPLOADS);

    for (let u = 0; u < USERS; u++) {
      const mine = ok.filter((r) => r.user === u);
      const rows = await svc.deps.catalog.images.find({ userId: users[u].userId }, { publicId: 1 }).lean();
      expect(rows.map((r) => r.publicId).sort(), `catalog of user ${u}`).to.deep.equal(mine.map((r) => r.publicId).sort());
      const stored = await inventory(svc.deps.storage, users[u].userId);
      expect(stored.originals, `stored originals of user ${u}`).to.have.length(mine.length);
      const usage = await readUsage(svc.deps.catalog, users[u].userId);
      expect(usage.storageBytes, `usage bytes of user ${u}`).to.equal(mine.reduce((s, r) => s + r.bytes, 0));
      expect(usage.imageCount).to.equal(mine.length);
      await assertConsistent(svc.deps.catalog, svc.deps.storage, users[u].userId);
    }
    expect((await inventory(svc.deps.storage)).staging).to.deep.equal([]);
  });
});
