// Fault 4: storage write failures, injected in the fake GCS server the real client talks to.
// Every second write failing is absorbed by retries (the client's, then the job's) and every
// request succeeds; writes failing for longer than one job attempt are retried by the queue;
// a persistent failure ends in a clear 503 with no catalog row and nothing staged left behind.
import { Storage as GcsClient } from '@google-cloud/storage';
import { expect } from 'chai';
import { readUsage } from '../../src/catalog/usage.js';
import { blockGoogleCredentials, startFakeGcs, type FakeGcs } from '../fixtures/fake-gcs-server.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { assertConsistent, figure, inventory, queuesSettled, SHORT_LOCKS, timed, waitFor } from './fault-helpers.js';

describe('fault 4: storage write failures (fake GCS)', function () {
  this.timeout(90_000);
  let fake: FakeGcs;
  let svc: TestService;
  let restoreEnv = () => undefined as void;

  before(async () => {
    // No Google credentials may be looked up, in this process or in the forked workers.
    restoreEnv = blockGoogleCredentials();
    fake = await startFakeGcs();
    const admin = new GcsClient({ apiEndpoint: fake.endpoint, projectId: 'test', useAuthWithCustomEndpoint: false });
    await admin.createBucket('pictor-faults');
    svc = await TestService.start({
      workers: 1,
      // Storage-bound jobs mostly wait on retries: let one worker run all of them at once.
      env: { ...SHORT_LOCKS, STORAGE_DRIVER: 'gcs', GCS_BUCKET: 'pictor-faults', GCS_API_ENDPOINT: fake.endpoint, JOB_TIMEOUT_MS: '60000', WORKER_CONCURRENCY: '6' },
    });
  });
  afterEach(() => fake.faults.clear());
  after(async () => {
    await svc?.stop();
    await fake?.stop();
    restoreEnv();
  });

  it('every second write failing: uploads and transforms all succeed, stored and counted once', async () => {
    const user = await svc.createUser();
    const images = await Promise.all([0, 1, 2, 3].map((i) => jpeg(200 + i * 10, 150)));
    fake.faults.failEvery(2, 503, 'write');
    // One request at a time: with concurrent requests a global "every 2nd" counter can line up so
    // that one request's retries always land on the failing slot (a property of the fake, not of us).
    const sequential = async <T>(tasks: (() => Promise<T>)[]) => {
      const out: T[] = [];
      for (const task of tasks) out.push(await task());
      return out;
    };
    const ups = await timed(sequential(images.map((bytes, i) => () => upload(svc.baseUrl, { key: user.key, bytes, filename: `img-${i}.jpg` }))));
    for (const u of ups.value) expect(u.status, JSON.stringify(u.body)).to.equal(200);
    const trs = await timed(
      sequential(ups.value.slice(0, 2).map((u) => () => request(svc.url(`/transform?src=${encodeURIComponent(u.body.public_url)}&w=80&f=webp`), { key: user.key }))),
    );
    for (const t of trs.value) expect(t.status, JSON.stringify(t.body)).to.equal(200);
    const injected = fake.faults.injected;
    expect(injected).to.be.greaterThan(0);
    fake.faults.clear();
    await queuesSettled(svc.deps.jobs);
    const state = await assertConsistent(svc.deps.catalog, svc.deps.storage, user.userId);
    expect(state.images).to.equal(4);
    expect(state.derivatives).to.equal(2);
    expect(state.bytes).to.equal(images.reduce((s, b) => s + b.length, 0));
    expect((await readUsage(svc.deps.catalog, user.userId)).transformations).to.equal(2);
    figure(`fault 4: every 2nd write failing (${injected} failures injected): 4 uploads in ${ups.ms} ms, 2 transforms in ${trs.ms} ms, all 200`);
  });

  it('writes failing for longer than the client retries: the job is retried and succeeds', async () => {
    const user = await svc.createUser();
    const bytes = await jpeg(300, 200);
    // The staging write (one request: small uploads are staged from memory) and the async job's
    // durable record (src/jobs/job-records.ts) pass; the next four writes, the original's put and
    // the client's 3 retries of it, fail: attempt 1 of the job fails, the queue retries it,
    // attempt 2 succeeds.
    fake.faults.failNext(4, 503, 'write', 2);
    const accepted = await upload(svc.baseUrl, { key: user.key, bytes, filename: 'retried.jpg', query: { async: 'true' } });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
    const started = Date.now();
    const done = await waitFor('the job to finish', async () => {
      const s = await request(svc.url(`/jobs/${accepted.body.job_id}`), { key: user.key });
      return s.body.state === 'completed' || s.body.state === 'failed' ? s : null;
    }, 60_000, 250);
    expect(done.body.state, JSON.stringify(done.body)).to.equal('completed');
    const job = await svc.deps.jobs.queues['upload-finalize'].getJob(accepted.body.job_id);
    expect(job?.attemptsMade, 'attempts').to.equal(2);
    figure(`fault 4: 4 consecutive write failures → job attempt 1 failed, attempt 2 succeeded; ${Date.now() - started} ms`);
    const state = await assertConsistent(svc.deps.catalog, svc.deps.storage, user.userId);
    expect(state.images).to.equal(1);
  });

  it('writes failing persistently: a clear 503, no catalog row, nothing staged left', async () => {
    const user = await svc.createUser();
    fake.faults.failEvery(1, 503, 'write');
    const res = await timed(upload(svc.baseUrl, { key: user.key, bytes: await jpeg(300, 200), filename: 'never.jpg' }));
    expect(res.value.status, JSON.stringify(res.value.body)).to.equal(503);
    expect(res.value.headers.get('retry-after')).to.match(/^\d+$/);
    expect(res.value.body.msg).to.match(/unavailable|retry/i);
    figure(`fault 4: every write failing: upload answered ${res.value.status} "${res.value.body.msg}" after ${res.ms} ms`);
    fake.faults.clear();
    await queuesSettled(svc.deps.jobs);
    expect(await svc.deps.catalog.images.countDocuments({ userId: user.userId })).to.equal(0);
    expect((await inventory(svc.deps.storage)).staging).to.deep.equal([]);
    await assertConsistent(svc.deps.catalog, svc.deps.storage, user.userId);
  });
});
