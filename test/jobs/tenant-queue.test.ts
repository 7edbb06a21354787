// Per-tenant back-pressure: one tenant's burst neither makes another tenant wait
// behind it nor fills the queue for everyone. Real front door, real worker process (one job at a
// time, so the order in which jobs start is the queue's order), real renders.
import { expect } from 'chai';
import type { Credential } from '../../src/catalog/api-keys.js';
import { QUEUE_NAMES } from '../../src/jobs/job-contract.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

const CAP = 12;
const FLOOD = 24;

describe('per-tenant back-pressure (TENANT_MAX_WAITING)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let a: Credential;
  let b: Credential;
  let srcA: string;
  let srcB: string;

  before(async () => {
    svc = await TestService.start({ env: { TENANT_MAX_WAITING: String(CAP), WORKER_CONCURRENCY: '1' } });
    a = await svc.createUser('tenanta');
    b = await svc.createUser('tenantb');
    const photo = await jpeg(1600, 1200);
    srcA = (await upload(svc.baseUrl, { key: a.key, bytes: photo, query: { public_id: 'flood' } })).body.public_url;
    srcB = (await upload(svc.baseUrl, { key: b.key, bytes: photo, query: { public_id: 'interactive' } })).body.public_url;
  });
  after(async () => svc?.stop());

  it('tenant B\'s job runs ahead of tenant A\'s backlog; A past its cap gets 429 + Retry-After; nobody gets 5xx', async () => {
    const transform = (key: string, src: string, w: number) => request(svc.url(`/transform?src=${encodeURIComponent(src)}&w=${w}&f=webp`), { key });
    const flood = Promise.all(Array.from({ length: FLOOD }, (_, i) => transform(a.key, srcA, 300 + i)));
    // Wait until A's backlog is queued, then B asks once.
    const queue = svc.deps.jobs.queues[QUEUE_NAMES.transform];
    const deadline = Date.now() + 20_000;
    for (;;) {
      const counts = await queue.getJobCounts('waiting', 'prioritized');
      if ((counts.waiting ?? 0) + (counts.prioritized ?? 0) >= CAP - 2) break;
      if (Date.now() > deadline) throw new Error(`A's backlog did not build: ${JSON.stringify(counts)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const bAnswer = await transform(b.key, srcB, 640);
    const aAnswers = await flood;
    expect(bAnswer.status, JSON.stringify(bAnswer.body)).to.equal(200);

    const statuses = aAnswers.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 429), JSON.stringify(statuses)).to.equal(true);
    const refused = aAnswers.filter((r) => r.status === 429);
    expect(refused.length, 'A past its cap').to.be.at.least(1);
    for (const r of refused) {
      expect(r.body).to.deep.include({ type: 'request_error', status_code: 429 });
      expect(r.body.msg).to.match(/TENANT_MAX_WAITING/);
      expect(r.headers.get('retry-after')).to.equal('5');
    }

    // Order in which the worker started the jobs: B's among A's.
    const jobs = (await queue.getCompleted(0, 200)).filter((j) => j.processedOn);
    jobs.sort((x, y) => x.processedOn! - y.processedOn!);
    const order = jobs.map((j) => (j.data as { userId: string }).userId);
    const bIndex = order.indexOf(b.userId);
    const aAfterB = order.slice(bIndex + 1).filter((u) => u === a.userId).length;
    console.log(`      A: ${aAnswers.length - refused.length} rendered, ${refused.length} refused (429); B's job started with ${aAfterB} of A's jobs still behind it`);
    // A FIFO queue would have started B after all of A's queued jobs (≥ CAP - 2 when B asked).
    expect(aAfterB).to.be.at.least(CAP - 4);
    // Every job's tenant slot is released once it starts.
    const sets = (await svc.deps.redis.keys('pictor:tenant-waiting:*')).filter((k) => !k.endsWith(':last-place'));
    expect(await Promise.all(sets.map((k) => svc.deps.redis.scard(k)))).to.satisfy((sizes: number[]) => sizes.every((n) => n === 0));
  });
});
