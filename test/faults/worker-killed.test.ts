// Fault 1: a worker process SIGKILLed in the middle of a job. Another worker takes the job over
// once its lock expires (short locks here), the waiting caller still gets its 200, and the
// derivative is stored, catalogued and counted exactly once.
import { expect } from 'chai';
import { readUsage } from '../../src/catalog/usage.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { assertConsistent, exited, figure, inventory, SHORT_LOCKS, waitFor } from './fault-helpers.js';

describe('fault 1: a worker SIGKILLed mid-job', function () {
  this.timeout(90_000);
  let svc: TestService;

  before(async () => {
    svc = await TestService.start({
      workers: 2,
      // AVIF at effort 4 from a 2400×1600 original: a job of a few seconds, long enough to kill.
      env: { ...SHORT_LOCKS, AVIF_EFFORT: '4', WORKER_CONCURRENCY: '1', JOB_TIMEOUT_MS: '60000' },
    });
  });
  after(async () => svc?.stop());

  it('another worker completes the job; the caller gets 200; stored and counted once', async () => {
    const user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(2400, 1600), filename: 'big.jpg' });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    const usageBefore = await readUsage(svc.deps.catalog, user.userId);

    const started = Date.now();
    const pending = request(svc.url(`/transform?src=${encodeURIComponent(up.body.public_url)}&w=1200&f=avif&q=60`), { key: user.key });

    // The job as soon as a worker has taken it, and the process that runs it.
    const transformQueue = svc.deps.jobs.queues.transform;
    const active = await waitFor('the transform job to become active', async () => {
      const [job] = await transformQueue.getJobs(['active']);
      return job?.processedBy ? job : null;
    }, 15_000, 20);
    const victimPid = Number(active.processedBy!.split(':').pop());
    const victim = svc.workers.find((w) => w.pid === victimPid);
    expect(victim, `worker ${active.processedBy} is one of ours`).to.not.equal(undefined);
    // Killed as soon as it holds the job (no guess at how long the encode takes); the job must not
    // have finished by then, or this would not test a takeover.
    victim!.kill('SIGKILL');
    await exited(victim!);
    const killedAt = Date.now();
    expect(['completed', 'failed'], 'the job was still unfinished when its worker died').to.not.include(await transformQueue.getJobState(active.id!));

    const res = await pending;
    const elapsed = Date.now() - started;
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.content_type).to.equal('image/avif');
    expect(elapsed).to.be.below(60_000);

    const finished = await transformQueue.getJob(active.id!);
    expect(finished?.processedBy, 'completed by the surviving worker').to.not.equal(active.processedBy);
    figure(`fault 1: worker killed ${killedAt - started} ms into the request; caller answered after ${elapsed} ms (${elapsed - (killedAt - started)} ms after the kill), stalled counter ${finished?.stalledCounter}`);

    // Exactly one derivative (row and object) and the usage counted once.
    await svc.derivativesSettled(user.userId);
    const stored = await inventory(svc.deps.storage, user.userId);
    expect(stored.derivatives).to.have.length(1);
    expect(await svc.deps.catalog.derivatives.countDocuments({ userId: user.userId })).to.equal(1);
    const usage = await readUsage(svc.deps.catalog, user.userId);
    expect(usage.derivativeCount).to.equal(usageBefore.derivativeCount + 1);
    expect(usage.transformations).to.equal(usageBefore.transformations + 1);
    await assertConsistent(svc.deps.catalog, svc.deps.storage, user.userId);

    // The same request again is answered from storage: nothing new is rendered or counted.
    const again = await request(svc.url(`/transform?src=${encodeURIComponent(up.body.public_url)}&w=1200&f=avif&q=60`), { key: user.key });
    expect(again.status).to.equal(200);
    expect(again.headers.get('x-cache')).to.equal('HIT');
    expect((await readUsage(svc.deps.catalog, user.userId)).transformations).to.equal(usageBefore.transformations + 1);
  });
});
