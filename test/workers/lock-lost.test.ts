// A worker whose job lock was taken from it (Redis out of reach longer than JOB_LOCK_MS, and the
// stalled check gave the job to another run) stops that job when its lock renewal says so: the
// first run's result is dropped and only the run that owns the job announces an outcome. The lock
// is taken away here by deleting its key in the real Redis while a slow job renders.
import { Redis } from 'ioredis';
import { expect } from 'chai';
import { JOB_OUTCOMES_CHANNEL, parseJobOutcome, REDIS_PREFIX } from '../../src/jobs/job-contract.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { SHORT_LOCKS, waitFor } from '../faults/fault-helpers.js';

describe('a worker that lost its job lock', function () {
  this.timeout(120_000);
  let svc: TestService;
  let subscriber: Redis;

  before(async () => {
    // AVIF at effort 4 from a 2400×1600 original: a job of a few seconds, longer than a lock renewal.
    svc = await TestService.start({ workers: 1, env: { ...SHORT_LOCKS, AVIF_EFFORT: '4', WORKER_CONCURRENCY: '1', JOB_TIMEOUT_MS: '90000' } });
    subscriber = new Redis(svc.env.REDIS_URL);
  });
  after(async () => {
    subscriber?.disconnect();
    await svc?.stop();
  });

  it('drops its result: one outcome, from the run that owns the job', async () => {
    const user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(2400, 1600), filename: 'big.jpg' });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    const outcomes: string[] = [];
    await subscriber.subscribe(JOB_OUTCOMES_CHANNEL);
    subscriber.on('message', (_channel: string, message: string) => {
      const outcome = parseJobOutcome(message);
      if (outcome?.queue === 'transform') outcomes.push(outcome.id);
    });

    const pending = request(svc.url(`/transform?src=${encodeURIComponent(up.body.public_url)}&w=1600&f=avif&q=60`), { key: user.key });
    const queue = svc.deps.jobs.queues.transform;
    const active = await waitFor('the transform job to become active', async () => (await queue.getJobs(['active']))[0], 15_000, 20);
    // Another owner now, as far as Redis knows: the worker's next renewal is refused.
    expect(await svc.deps.redis.del(`${REDIS_PREFIX}:transform:${active.id}:lock`)).to.equal(1);

    const res = await pending;
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    // Every run of the job is over once it is completed (the dropped run ended before the owner's began: one worker).
    await waitFor('the job to complete', async () => (await queue.getJobState(active.id!)) === 'completed', 60_000, 100);
    const finished = await queue.getJob(active.id!);
    expect(finished?.stalledCounter, 'the job ran again after its lock was lost').to.be.at.least(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(outcomes.filter((id) => id === active.id), 'outcomes announced for the job').to.have.length(1);
  });
});
