import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ServiceError } from '../../src/errors.js';
import { DEFAULT_JOB_OPTIONS } from '../../src/jobs/queues.js';
import { type TransformJobData, QUEUE_NAMES } from '../../src/jobs/job-contract.js';
import { jpeg, truncated } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

function transformData(overrides: Partial<TransformJobData> = {}): TransformJobData {
  return {
    userId: 'nobody',
    imageId: '000000000000000000000000',
    sourceKey: 'nobody/images/x.jpg',
    version: 'v1',
    derivativeKey: 'nobody/images/x.jpg&v=v1&w=10.webp',
    plan: { width: 10, fit: 'inside', quality: 80, format: 'webp', blur: 0, sharp: 0, bri: 0, con: 0, sat: 0, hue: 0, opt: false } as TransformJobData['plan'],
    origin: 'api',
    ...overrides,
  };
}

/** The completed job matching `match`: callers get the result as the processor returns, and the
 * job is marked completed a moment later, so look for up to 5 s. */
async function completedJob<T extends { data: { userId: string } }>(list: () => Promise<T[]>, match: (job: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 5000; ; await new Promise((r) => setTimeout(r, 20))) {
    const job = (await list()).find(match);
    if (job || Date.now() > deadline) return job as T;
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('job producer: front door → queue → worker process → caller', () => {
  let svc: TestService;
  before(async function () {
    this.timeout(60_000);
    svc = await TestService.start({ workers: 1 });
  });
  after(async function () {
    this.timeout(60_000);
    await svc?.stop();
  });

  it('runs an upload and a transform in the separate worker process and hands each result to the waiting request', async function () {
    this.timeout(30_000);
    const user = await svc.createUser();
    const workerName = `${os.hostname()}:${svc.workers[0].pid}`;
    expect(svc.workers[0].pid).not.to.equal(process.pid);

    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(640, 480), filename: 'worker-proof.jpg' });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    const uploadQueue = svc.deps.jobs.queues[QUEUE_NAMES.uploadFinalize];
    const upJob = await completedJob(() => uploadQueue.getCompleted(), (j) => j.data.userId === user.userId);
    expect(upJob, 'completed upload-finalize job').to.not.equal(undefined);
    expect(upJob!.processedBy).to.equal(workerName);
    expect(upJob!.processedBy).not.to.include(`:${process.pid}`);
    // The answer the caller got is the worker's return value.
    expect(up.body.public_url).to.equal(svc.deps.storage.publicUrl(upJob!.returnvalue.storageKey));
    expect(up.body.size).to.equal(upJob!.returnvalue.size);
    expect(upJob!.returnvalue.width).to.equal(640);
    // Job data carries keys and parameters, never image bytes.
    expect(JSON.stringify(upJob!.data).length).to.be.below(1000);
    expect(upJob!.data.stagingKey).to.be.a('string');

    const tr = await request(svc.url(`/transform?src=${encodeURIComponent(up.body.public_url)}&w=200&f=webp`), { key: user.key });
    expect(tr.status, JSON.stringify(tr.body)).to.equal(200);
    const transformQueue = svc.deps.jobs.queues[QUEUE_NAMES.transform];
    const trJob = await completedJob(() => transformQueue.getCompleted(), (j) => j.data.userId === user.userId);
    expect(trJob!.processedBy).to.equal(workerName);
    expect(trJob!.returnvalue.width).to.equal(200);
    expect(tr.body.public_url).to.equal(svc.deps.storage.publicUrl(trJob!.returnvalue.key));
    expect(tr.body.size).to.equal(trJob!.returnvalue.size);
  });

  it('bounds completed and failed jobs and retries with backoff', async () => {
    const completed = await svc.deps.jobs.queues[QUEUE_NAMES.uploadFinalize].getCompleted();
    expect(completed.length).to.be.greaterThan(0);
    for (const job of completed) {
      expect(job.opts.removeOnComplete).to.deep.equal(DEFAULT_JOB_OPTIONS.removeOnComplete);
      expect(job.opts.removeOnFail).to.deep.equal(DEFAULT_JOB_OPTIONS.removeOnFail);
      expect(job.opts.attempts).to.be.greaterThan(1);
      expect(job.opts.backoff).to.deep.include({ type: 'exponential' });
    }
    const bound = DEFAULT_JOB_OPTIONS.removeOnComplete as { age: number; count: number };
    expect(bound.age).to.be.a('number').and.be.greaterThan(0);
    expect(bound.count).to.be.a('number').and.be.greaterThan(0);
    const failBound = DEFAULT_JOB_OPTIONS.removeOnFail as { age: number; count: number };
    expect(failBound.count).to.be.a('number').and.be.greaterThan(0);
  });

  it('fails a truncated upload at once (415, one attempt, no retries) and leaves nothing staged', async function () {
    this.timeout(30_000);
    const user = await svc.createUser();
    const res = await upload(svc.baseUrl, { key: user.key, bytes: truncated(await jpeg(800, 600), 0.5), filename: 'cut.jpg', mime: 'image/jpeg' });
    expect(res.status, JSON.stringify(res.body)).to.equal(415);
    expect(res.body.msg).to.match(/corrupt or truncated/);
    const failed = (await svc.deps.jobs.queues[QUEUE_NAMES.uploadFinalize].getFailed()).filter((j) => j.data.userId === user.userId);
    expect(failed).to.have.length(1);
    expect(failed[0].attemptsMade).to.equal(1);
    expect(failed[0].processedBy).to.equal(`${os.hostname()}:${svc.workers[0].pid}`);
    const staged = await svc.deps.storage.list('_staging/', { limit: 100 });
    expect(staged.items.map((i) => i.key)).to.deep.equal([]);
  });

  it('fails a transform of a corrupt stored original at once (422, one attempt)', async function () {
    this.timeout(30_000);
    const user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(400, 300), filename: 'rot.jpg' });
    expect(up.status).to.equal(200);
    const image = await svc.deps.catalog.images.findOne({ userId: user.userId }).lean();
    // Damage the stored bytes in place (same file, so its metadata sidecar still matches).
    const file = path.join(svc.storageDir, image!.storageKey);
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(file, Buffer.concat([bytes.subarray(0, 200), Buffer.alloc(bytes.length - 200, 0x5a)]));
    const tr = await request(svc.url(`/transform?src=${encodeURIComponent(up.body.public_url)}&w=100&f=png`), { key: user.key });
    expect(tr.status, JSON.stringify(tr.body)).to.equal(422);
    const failed = (await svc.deps.jobs.queues[QUEUE_NAMES.transform].getFailed()).filter((j) => j.data.userId === user.userId);
    expect(failed).to.have.length(1);
    expect(failed[0].attemptsMade).to.equal(1);
  });

  it('a caller joining a job that finished before it listened gets the outcome at once (no 2 s re-check)', async function () {
    this.timeout(30_000);
    const sourceKey = 'nobody/images/join.jpg';
    await svc.deps.storage.put(sourceKey, await jpeg(32, 24), { contentType: 'image/jpeg' });
    const data = transformData({ sourceKey, derivativeKey: `${sourceKey}&v=v1&w=10.webp` });
    const jobId = `join-${Date.now()}`;
    const first = await svc.deps.jobs.run(QUEUE_NAMES.transform, data, { jobId });
    expect(first.width).to.equal(10);
    // Its outcome message is long gone: the second caller's add joins the completed job.
    await new Promise((r) => setTimeout(r, 100));
    let started = performance.now();
    const joined = await svc.deps.jobs.run(QUEUE_NAMES.transform, data, { jobId });
    expect(joined).to.deep.equal(first);
    expect(performance.now() - started).to.be.below(1000);
    const job = await svc.deps.jobs.queues[QUEUE_NAMES.transform].getJob(jobId);
    expect(job!.attemptsMade).to.equal(1); // joined, not run again

    // A job that failed for good: the joining caller gets its failure as fast (here the id names a
    // failed job of another caller's run, finished before this one: run() clears it and runs again).
    const missing = transformData({ sourceKey: 'nobody/images/absent.jpg', derivativeKey: 'nobody/images/absent.jpg&v=v1&w=10.webp' });
    const failedId = `join-missing-${Date.now()}`;
    expect(((await rejection(svc.deps.jobs.run(QUEUE_NAMES.transform, missing, { jobId: failedId }))) as ServiceError).kind).to.equal('not_found');
    started = performance.now();
    expect(((await rejection(svc.deps.jobs.run(QUEUE_NAMES.transform, missing, { jobId: failedId }))) as ServiceError).kind).to.equal('not_found');
    expect(performance.now() - started).to.be.below(1000);
  });

  it('retries an unexpected failure with backoff, then tells the caller which job failed', async function () {
    this.timeout(30_000);
    // The original exists, so the job renders; storing the result then fails with something that is
    // not a ServiceError (its key would need the original's file to be a folder), which is treated
    // as transient and retried.
    const sourceKey = 'nobody/images/retry.jpg';
    await svc.deps.storage.put(sourceKey, await jpeg(16, 16), { contentType: 'image/jpeg' });
    const jobId = `retry-${Date.now()}`;
    const started = Date.now();
    const err = await rejection(svc.deps.jobs.run(QUEUE_NAMES.transform, transformData({ sourceKey, derivativeKey: `${sourceKey}/under-a-file&v=v1&w=10.webp` }), { jobId }));
    expect(err).to.be.instanceOf(ServiceError);
    expect((err as ServiceError).kind).to.equal('unavailable');
    expect((err as ServiceError).message).to.include(jobId);
    const job = await svc.deps.jobs.queues[QUEUE_NAMES.transform].getJob(jobId);
    expect(job!.attemptsMade).to.equal(DEFAULT_JOB_OPTIONS.attempts);
    // Exponential backoff from 300 ms: 300 + 600 + 1200 ms between the four attempts.
    expect(Date.now() - started).to.be.at.least(2000);
  });
});

describe('job producer deadline', () => {
  let svc: TestService;
  before(async function () {
    this.timeout(60_000);
    // No worker runs, so every job outlives its 300 ms deadline.
    svc = await TestService.start({ workers: 0, env: { JOB_TIMEOUT_MS: '300' } });
  });
  after(async function () {
    this.timeout(60_000);
    await svc?.stop();
  });

  it('rejects run() with a timeout ServiceError naming the job id', async () => {
    const started = Date.now();
    const err = await rejection(svc.deps.jobs.run(QUEUE_NAMES.transform, transformData()));
    const elapsed = Date.now() - started;
    expect(err).to.be.instanceOf(ServiceError);
    const e = err as ServiceError;
    expect(e.kind).to.equal('timeout');
    expect(e.status).to.equal(504);
    const waiting = await svc.deps.jobs.queues[QUEUE_NAMES.transform].getWaiting();
    expect(waiting).to.have.length(1);
    expect(e.message).to.include(`Job ${waiting[0].id} `);
    expect(e.message).to.include('300 ms');
    expect(elapsed).to.be.at.least(300).and.below(3000);
  });

  it('honours a per-call deadline and an explicit job id', async () => {
    const err = await rejection(svc.deps.jobs.run(QUEUE_NAMES.transform, transformData(), { jobId: 'deadline-probe', timeoutMs: 150 }));
    expect((err as ServiceError).kind).to.equal('timeout');
    expect((err as ServiceError).message).to.include('deadline-probe').and.include('150 ms');
  });

  it('answers an HTTP caller 504 with the job id in the message', async function () {
    this.timeout(20_000);
    const user = await svc.createUser();
    const res = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(64, 48), filename: 'late.jpg' });
    expect(res.status, JSON.stringify(res.body)).to.equal(504);
    expect(res.body.status_code).to.equal(504);
    const match = /Job (\S+) /.exec(res.body.msg as string);
    expect(match, res.body.msg).to.not.equal(null);
    const job = await svc.deps.jobs.queues[QUEUE_NAMES.uploadFinalize].getJob(match![1]);
    expect(job, `job ${match![1]} in the upload-finalize queue`).to.not.equal(undefined);
    expect(job!.data.userId).to.equal(user.userId);
  });
});
