// Pins src/jobs/queues.ts to the installed BullMQ: its version (an upgrade past the major checked
// makes this fail, so the module is read again) and, against a real redis-server with a real
// Worker, each behaviour the module relies on; settledJob among them: a job read while it ran and
// found finished by the state read comes back read again, with its result (or failure reason); a
// job read after it finished is returned as it is.
import { expect } from 'chai';
import type { Job, Queue, QueueEvents, Worker } from 'bullmq';
import { createRequire } from 'node:module';
import { CHECKED_BULLMQ_VERSION, hasFinished, isFinalFailure, settledJob } from '../../src/jobs/queues.js';
import { BullmqFixture } from '../harness/bullmq-fixture.js';

describe('BullMQ internals (pinned to the installed version)', function () {
  this.timeout(30_000);
  let bull: BullmqFixture;
  let queue: Queue;
  let worker: Worker | undefined;

  before(async () => {
    bull = await BullmqFixture.start('internals-test');
    queue = bull.queue('internals');
  });
  after(async () => bull?.stop());

  /** Runs a worker with this processor and collects what its 'failed' events saw. */
  function startWorker(processor: (job: Job) => Promise<unknown>) {
    const failures: { id: string; final: boolean; finishedInRedis: boolean }[] = [];
    const completed: string[] = [];
    worker = bull.worker('internals', processor);
    worker.on('failed', (job) => {
      if (!job) return;
      const final = isFinalFailure(job);
      void hasFinished(bull.connection, queue, job.id!).then((finishedInRedis) => failures.push({ id: job.id!, final, finishedInRedis }));
    });
    worker.on('completed', (job) => completed.push(job.id!));
    return { failures, completed };
  }

  async function until(what: string, condition: () => boolean): Promise<void> {
    for (const deadline = Date.now() + 20_000; !condition(); await new Promise((r) => setTimeout(r, 10))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    }
  }

  it(`the installed BullMQ has the major version checked (${CHECKED_BULLMQ_VERSION})`, () => {
    const installed = (createRequire(import.meta.url)('bullmq/package.json') as { version: string }).version;
    expect(installed.split('.')[0], `installed ${installed}: re-check src/jobs/queues.ts, then update CHECKED_BULLMQ_VERSION`).to.equal(CHECKED_BULLMQ_VERSION.split('.')[0]);
  });

  it('finishedOn: absent while waiting and after a failure that will be retried; set after the last failure and after completion', async () => {
    const { failures, completed } = startWorker(async (job) => {
      // The second attempt waits until the first failure has been looked at in Redis.
      if (job.name === 'fails' && job.attemptsMade === 1) await until('the first failure recorded', () => failures.length === 1);
      if (job.name === 'fails') throw new Error(`attempt ${job.attemptsMade + 1} fails`);
      return 'done';
    });
    await worker!.pause();
    const failing = await queue.add('fails', {}, { jobId: 'fails-1', attempts: 2 });
    const succeeding = await queue.add('succeeds', {}, { jobId: 'succeeds-1' });
    expect(await hasFinished(bull.connection, queue, failing.id!)).to.equal(false);
    expect(await hasFinished(bull.connection, queue, 'no-such-job')).to.equal(false);
    await worker!.resume();
    await until('two failures and one completion', () => failures.length === 2 && completed.length === 1);
    expect(failures).to.deep.equal([
      { id: 'fails-1', final: false, finishedInRedis: false },
      { id: 'fails-1', final: true, finishedInRedis: true },
    ]);
    expect(await queue.getJobState('fails-1')).to.equal('failed');
    expect(await hasFinished(bull.connection, queue, succeeding.id!)).to.equal(true);
    expect(await queue.getJobState('succeeds-1')).to.equal('completed');
  });

  it('adding a job under an existing id returns that job (what single-flight ids rely on)', async () => {
    const first = await queue.add('succeeds', { n: 1 }, { jobId: 'same-id' });
    const second = await queue.add('succeeds', { n: 2 }, { jobId: 'same-id' });
    expect(second.id).to.equal(first.id);
    expect((await queue.getJob('same-id'))!.data).to.deep.equal({ n: 1 });
  });
});

describe('settledJob: a job and its state read consistently', function () {
  this.timeout(30_000);
  let bull: BullmqFixture;
  let queue: Queue;
  let events: QueueEvents;
  // The processor waits for the test to let each job finish.
  const release = new Map<string, () => void>();

  before(async () => {
    bull = await BullmqFixture.start('settled-job-test');
    queue = bull.queue('settled');
    events = await bull.events('settled');
    bull.worker('settled', async (job: Job) => {
      await new Promise<void>((resolve) => release.set(job.id!, resolve));
      if (job.data.fail) throw new Error('made to fail');
      return { imageId: `image-of-${job.id}` };
    });
  });
  after(async () => bull?.stop());

  /** The job as read while it runs, and a promise of its end. */
  async function readWhileRunning(id: string, fail = false): Promise<{ stale: Job; finish: () => Promise<unknown> }> {
    const added = await queue.add('settled', { fail }, { jobId: id, attempts: 1 });
    const ended = added.waitUntilFinished(events).catch(() => 'failed');
    while (!release.has(id)) await new Promise((r) => setTimeout(r, 10));
    const stale = (await queue.getJob(id))!;
    expect(await stale.getState()).to.equal('active');
    return { stale, finish: () => (release.get(id)!(), ended) };
  }

  it('a job read while running and completed before its state is read: read again, with its result', async () => {
    const { stale, finish } = await readWhileRunning('c1');
    await finish();
    expect(stale.returnvalue ?? null, 'the object read while it ran has no result').to.equal(null);
    const settled = await settledJob(stale, async () => queue.getJob('c1'));
    expect(settled?.state).to.equal('completed');
    expect(settled?.job.returnvalue).to.deep.equal({ imageId: 'image-of-c1' });
  });

  it('a job read while running and failed before its state is read: read again, with its reason', async () => {
    const { stale, finish } = await readWhileRunning('f1', true);
    await finish();
    const settled = await settledJob(stale, async () => queue.getJob('f1'));
    expect(settled?.state).to.equal('failed');
    expect(settled?.job.failedReason).to.equal('made to fail');
  });

  it('a job still running, or read after it finished, is returned as read (no second read)', async () => {
    const { stale, finish } = await readWhileRunning('r1');
    let rereads = 0;
    const running = await settledJob(stale, async () => (rereads++, queue.getJob('r1')));
    expect(running?.state).to.equal('active');
    expect(running?.job).to.equal(stale);
    await finish();
    const done = (await queue.getJob('r1'))!;
    const settled = await settledJob(done, async () => (rereads++, queue.getJob('r1')));
    expect(settled?.job).to.equal(done);
    expect(settled?.job.returnvalue).to.deep.equal({ imageId: 'image-of-r1' });
    expect(rereads).to.equal(0);
  });

  it('a job removed between the reads is gone (undefined), not a half-read job', async () => {
    const { stale, finish } = await readWhileRunning('g1');
    await finish();
    const settled = await settledJob(stale, async () => undefined);
    expect(settled).to.equal(undefined);
  });
});
