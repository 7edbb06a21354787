import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import sharp from 'sharp';
import { QUEUE_NAMES } from '../../src/jobs/job-contract.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('worker shutdown (SIGTERM)', () => {
  let svc: TestService;
  before(async function () {
    this.timeout(60_000);
    // WebP at full effort plus a wide blur makes a large transform take a second or more:
    // long enough to signal the worker mid-job.
    svc = await TestService.start({ workers: 1, env: { WEBP_EFFORT: '6', JOB_TIMEOUT_MS: '120000', WORKER_CONCURRENCY: '3' } });
  });
  after(async function () {
    this.timeout(60_000);
    await svc?.stop();
  });

  it('finishes the active jobs, takes no new ones and exits 0', async function () {
    this.timeout(120_000);
    const user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(2400, 1800), filename: 'big.jpg' });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    const src = encodeURIComponent(up.body.public_url);
    const queue = svc.deps.jobs.queues[QUEUE_NAMES.transform];
    const worker = svc.workers[0];
    const oldWorkerName = `${os.hostname()}:${worker.pid}`;

    // Two slow transforms at once, with a slot to spare (WORKER_CONCURRENCY=3).
    const slow = [2400, 2300].map((w) => request(svc.url(`/transform?src=${src}&w=${w}&f=webp&q=90&blur=60`), { key: user.key }));
    await until('both transforms to be active', async () => (await queue.getActiveCount()) === 2, 30_000);

    const exit = exitOf(worker);
    const signalledAt = Date.now();
    worker.kill('SIGTERM');
    // Work that arrives during the shutdown waits for another worker.
    await until('the worker to stop fetching', async () => (await svc.deps.redis.keys('pictor:workers:*')).length === 0, 10_000);
    const late = request(svc.url(`/transform?src=${src}&w=100&f=webp`), { key: user.key });

    const { code, signal } = await exit;
    expect(signal).to.equal(null);
    expect(code).to.equal(0);
    const finishedIn = Date.now() - signalledAt;

    const answers = await Promise.all(slow);
    for (const res of answers) {
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.content_type).to.equal('image/webp');
      const stored = await request(res.body.public_url);
      expect(stored.status).to.equal(200);
      expect((await sharp(stored.bytes).metadata()).format).to.equal('webp');
    }
    const completed = (await queue.getCompleted()).filter((j) => j.data.userId === user.userId);
    expect(completed).to.have.length(2);
    for (const job of completed) {
      expect(job.processedBy).to.equal(oldWorkerName);
      expect(job.attemptsMade).to.equal(1);
      // Still running when the signal came: the worker finished it before exiting.
      expect(job.finishedOn).to.be.greaterThan(signalledAt);
    }
    console.log(`      worker exited 0 ${finishedIn} ms after SIGTERM, with both active jobs completed`);

    // The late job was left for the next worker, not taken by the one shutting down.
    expect(await queue.getWaitingCount()).to.equal(1);
    const fresh = svc.startWorker();
    const lateRes = await late;
    expect(lateRes.status, JSON.stringify(lateRes.body)).to.equal(200);
    // The caller's answer is announced as the processor returns; the job is marked completed a
    // moment later.
    const lateJob = async () => (await queue.getCompleted()).find((j) => j.data.userId === user.userId && j.data.plan.width === 100);
    await until('the late job to be completed', async () => (await lateJob()) !== undefined, 5_000);
    expect((await lateJob())!.processedBy).to.equal(`${os.hostname()}:${fresh.pid}`);
  });
});
