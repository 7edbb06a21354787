// The per-render deadline: a render over RENDER_TIMEOUT_SECONDS is cancelled by
// libvips in the worker and answered 422 with a clear message, without retries, and the same
// worker process goes on serving.
import { expect } from 'chai';
import sharp from 'sharp';
import { QUEUE_NAMES } from '../../src/jobs/job-contract.js';
import { liveWorkers } from '../../src/jobs/worker-heartbeat.js';
import { jpeg } from '../fixtures/images.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectDetail } from '../web/set-b-helpers.js';

describe('render deadline (RENDER_TIMEOUT_SECONDS)', function () {
  this.timeout(120_000);
  let svc: TestService;

  before(async () => {
    svc = await TestService.start({ env: { RENDER_TIMEOUT_SECONDS: '1', WORKER_CONCURRENCY: '1' } });
  });
  after(async () => svc?.stop());

  it('a deliberately slow render is stopped and answered 422; the worker then renders the next request', async () => {
    const user = await svc.createUser();
    const up = await cdnUpload(svc, user.key, await jpeg(1200, 900), { filename: 'slow.jpg' });
    const src = encodeURIComponent(up.public_url);
    const pid = svc.workers[0].pid;
    // With the owner's key nothing is capped: a 4200² PNG with the heaviest blur and sharpening
    // takes well over a second (16-26 s was measured on a quiet machine).
    const started = performance.now();
    const slow = await request(svc.url(`/image/x.png?src=${src}&w=4200&h=4200&fit=fill&blur=100&sharp=100&f=png&opt=true`), { key: user.key });
    const elapsedMs = performance.now() - started;
    expectDetail(slow, 422, /longer than the 1 s render limit and was stopped/);
    console.log(`      slow render refused after ${Math.round(elapsedMs)} ms`);
    expect(elapsedMs).to.be.below(15_000);
    // Refused for good: one attempt, no retries.
    const failed = await svc.deps.jobs.queues[QUEUE_NAMES.transform].getFailed();
    expect(failed).to.have.length(1);
    expect(failed[0].attemptsMade).to.equal(1);
    // Nothing stored, nothing counted.
    expect(await svc.deps.catalog.derivatives.countDocuments({ userId: user.userId })).to.equal(0);

    const next = await request(svc.url(`/image/x.png?src=${src}&w=300&f=png`), { key: user.key });
    expect(next.status).to.equal(200);
    expect((await sharp(next.bytes).metadata()).width).to.equal(300);
    expect(svc.workers[0].exitCode).to.equal(null);
    const live = await liveWorkers(svc.deps.redis);
    expect(live.map((w) => w.id)).to.deep.equal([live.find((w) => w.id.endsWith(`:${pid}`))!.id]);
  });
});
