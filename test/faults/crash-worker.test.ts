// A worker process SIGKILLed mid-job with the default lock settings (JOB_LOCK_MS 3000, renewed
// every 1.5 s; JOB_STALLED_INTERVAL_MS 1000): its job runs again on another worker within 5 s,
// and the synchronous caller still gets its 200 within JOB_TIMEOUT_MS.
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { exited, figure, waitFor } from './fault-helpers.js';

describe('crash: a worker SIGKILLed mid-job with the default locks', function () {
  this.timeout(120_000);
  let svc: TestService;

  before(async () => {
    // No JOB_LOCK_MS / JOB_STALLED_INTERVAL_MS here: the defaults are under test.
    // AVIF at effort 4 from a 2400×1600 original: a job of a few seconds, long enough to kill.
    svc = await TestService.start({ workers: 2, env: { AVIF_EFFORT: '4', WORKER_CONCURRENCY: '1', JOB_TIMEOUT_MS: '30000' } });
    const defaults = loadConfig({});
    expect(svc.config.jobLockMs).to.equal(defaults.jobLockMs);
    expect(svc.config.stalledIntervalMs).to.equal(defaults.stalledIntervalMs);
  });
  after(async () => svc?.stop());

  it('the job runs again on the surviving worker within 5 s; the caller gets 200 within JOB_TIMEOUT_MS', async () => {
    const user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(2400, 1600), filename: 'big.jpg' });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    const started = Date.now();
    const pending = request(svc.url(`/transform?src=${encodeURIComponent(up.body.public_url)}&w=1200&f=avif&q=60`), { key: user.key });
    const queue = svc.deps.jobs.queues.transform;
    const active = await waitFor('the transform job to become active', async () => {
      const [job] = await queue.getJobs(['active']);
      return job?.processedBy ? job : null;
    }, 15_000, 20);
    const victim = svc.workers.find((w) => w.pid === Number(active.processedBy!.split(':').pop()))!;
    await new Promise((r) => setTimeout(r, 300)); // well inside the encode
    victim.kill('SIGKILL');
    await exited(victim);
    const killedAt = Date.now();
    const retaken = await waitFor('another worker to take the job', async () => {
      const job = await queue.getJob(active.id!);
      return job?.processedBy && job.processedBy !== active.processedBy ? Date.now() : null;
    }, 30_000, 25);
    const res = await pending;
    const answeredAt = Date.now();
    figure(`dead worker (default locks): job taken again ${retaken - killedAt} ms after the SIGKILL; caller answered ${answeredAt - started} ms after its request`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(retaken - killedAt, 'ms from the kill to the job running again').to.be.below(5000);
    expect(answeredAt - started).to.be.below(svc.config.jobTimeoutMs);
  });
});
