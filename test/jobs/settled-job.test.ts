// settledJob (src/jobs/settled-job.ts) against a real redis-server and a real BullMQ Worker: a job
// read while it ran and found finished by the state read comes back read again, with its result
// (or failure reason); a job read after it finished is returned as it is.
import { expect } from 'chai';
import type { Job, Queue, QueueEvents } from 'bullmq';
import { settledJob } from '../../src/jobs/settled-job.js';
import { BullmqFixture } from '../harness/bullmq-fixture.js';

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
