import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

const CHECKS = ['redis', 'catalog', 'storage', 'worker'];
const ADMIN_TOKEN = 'status-admin-token';

/** /health as the operator sees it (admin credential: latencies, errors, worker processes). */
async function health(svc: TestService) {
  const started = performance.now();
  const res = await request(svc.url('/health'), { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  return { ...res, ms: performance.now() - started };
}

/** Polls /health until `done` holds; returns the answer and the time it took. */
async function pollHealth(svc: TestService, done: (res: Awaited<ReturnType<typeof health>>) => boolean, timeoutMs: number) {
  const started = performance.now();
  for (;;) {
    const res = await health(svc);
    if (done(res)) return { res, elapsedMs: performance.now() - started };
    if (performance.now() - started > timeoutMs) throw new Error(`/health did not change within ${timeoutMs} ms; last: ${res.status} ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
  });
}

describe('GET / and GET /health', () => {
  let svc: TestService;
  before(async function () {
    this.timeout(60_000);
    svc = await TestService.start({ workers: 1, env: { ADMIN_TOKEN } });
  });
  after(async function () {
    this.timeout(60_000);
    await svc?.stop();
  });

  it('GET / names the service, its version and its links', async () => {
    const res = await request(svc.url('/'));
    expect(res.status).to.equal(200);
    expect(res.body.name).to.equal('Pictor');
    expect(res.body.version).to.equal('0.0.1');
    expect(res.body.links).to.be.an('object');
    expect(res.body.links.health).to.equal(svc.url('/health'));
    for (const link of Object.values(res.body.links as Record<string, string>)) expect(() => new URL(link)).not.to.throw();
  });

  it('GET /health is 200 with redis, catalog, storage and worker checks ok', async () => {
    const res = await health(svc);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.body.status).to.equal('ok');
    expect(res.body.failing).to.deep.equal([]);
    expect(Object.keys(res.body.checks)).to.have.members(CHECKS);
    for (const name of CHECKS) expect(res.body.checks[name].ok, name).to.equal(true);
    expect(res.body.checks.worker.detail.count).to.equal(1);
    expect(res.body.checks.worker.detail.processes[0].id).to.include(`:${svc.workers[0].pid}`);
  });

  it('the public answer is status only: ok per component, no hosts, PIDs, latencies or error texts', async () => {
    const variants: Record<string, string>[] = [{}, { 'X-Admin-Token': 'wrong' }, { Authorization: 'Bearer nope' }];
    for (const headers of variants) {
      const res = await request(svc.url('/health'), { headers });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ok', version: '0.0.1', failing: [], checks: { redis: { ok: true }, catalog: { ok: true }, storage: { ok: true }, worker: { ok: true } } });
      expect(JSON.stringify(res.body)).not.to.include(String(svc.workers[0].pid));
    }
  });

  it('the storage probe (a written and fsynced file) runs at most once per HEALTH_CACHE_MS however often /health is called', async () => {
    const storage = svc.deps.storage;
    const original = storage.check.bind(storage);
    let probes = 0;
    storage.check = async () => {
      probes++;
      return original();
    };
    try {
      // A probe is cached, then expires: the calls below must run at least one of their own.
      expect((await request(svc.url('/health'))).status).to.equal(200);
      await new Promise((r) => setTimeout(r, svc.config.healthCacheMs));
      probes = 0;
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 40 }, () => request(svc.url('/health'))));
      for (const a of answers) expect(a.status).to.equal(200);
      for (let i = 0; i < 20; i++) expect((await request(svc.url('/health'))).status).to.equal(200);
      const elapsed = Date.now() - started;
      // 60 calls; at least one probe, at most one per started cache period (2 s by default).
      expect(probes).to.be.at.least(1).and.at.most(Math.ceil(elapsed / svc.config.healthCacheMs) + 1);
      expect(probes).to.be.below(5);
    } finally {
      storage.check = original;
    }
  });

  it('reports the worker check failing (503) after the only worker is killed, and recovers when one starts', async function () {
    this.timeout(60_000);
    const victim = svc.workers[0];
    victim.kill('SIGKILL');
    await exited(victim);
    const down = await pollHealth(svc, (r) => r.status !== 200, 30_000);
    expect(down.res.status).to.equal(503);
    expect(down.res.body.status).to.equal('unhealthy');
    expect(down.res.body.failing).to.deep.equal(['worker']);
    expect(down.res.body.checks.worker.ok).to.equal(false);
    expect(down.res.body.checks.worker.error).to.match(/no live worker/);
    const publicDown = await request(svc.url('/health'));
    expect(publicDown.status).to.equal(503);
    expect(publicDown.body.checks.worker).to.deep.equal({ ok: false });
    expect(publicDown.body.failing).to.deep.equal(['worker']);
    // Heartbeat every 500 ms with a 1.5 s expiry in tests: well within the 30 s requirement.
    expect(down.elapsedMs).to.be.below(5_000);
    console.log(`      /health went 503 ${Math.round(down.elapsedMs)} ms after SIGKILL`);

    const restarted = performance.now();
    const fresh = svc.startWorker();
    const up = await pollHealth(svc, (r) => r.status === 200, 30_000);
    expect(up.res.body.failing).to.deep.equal([]);
    expect(up.res.body.checks.worker.detail.count).to.equal(1);
    expect(up.res.body.checks.worker.detail.processes[0].id).to.include(`:${fresh.pid}`);
    console.log(`      /health back to 200 ${Math.round(performance.now() - restarted)} ms after starting a worker`);
  });

  it('a worker stopped with SIGTERM withdraws its heartbeat at once', async function () {
    this.timeout(30_000);
    const second = svc.startWorker();
    await svc.waitForWorkers(2);
    second.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => second.once('exit', (c) => resolve(c)));
    expect(code).to.equal(0);
    // No waiting for the expiry: the key is deleted on the way out.
    const res = await health(svc);
    expect(res.status).to.equal(200);
    expect(res.body.checks.worker.detail.count).to.equal(1);
  });

  // Last in this suite: the private redis-server goes away for good.
  it('answers 503 naming redis, without hanging, when Redis is down', async function () {
    this.timeout(30_000);
    await svc.redis.stop();
    const res = await health(svc);
    expect(res.status, JSON.stringify(res.body)).to.equal(503);
    expect(res.body.failing).to.include('redis');
    expect(res.body.failing).not.to.include('catalog');
    expect(res.body.failing).not.to.include('storage');
    expect(res.body.checks.redis.ok).to.equal(false);
    expect(res.body.checks.redis.error).to.be.a('string').and.not.equal('');
    expect(res.ms).to.be.below(3_000);
    console.log(`      /health answered 503 in ${Math.round(res.ms)} ms with Redis down`);

    // SIGTERM still stops the worker (exit 0) rather than waiting for Redis to come back.
    const worker = svc.workers.find((w) => w.exitCode === null && w.signalCode === null)!;
    const started = performance.now();
    worker.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => worker.once('exit', (c) => resolve(c)));
    expect(code).to.equal(0);
    expect(performance.now() - started).to.be.below(5_000);
  });
});
