import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

const CHECKS = ['redis', 'catalog', 'storage', 'worker'];

async function health(svc: TestService) {
  const started = performance.now();
  const res = await request(svc.url('/health'));
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
    svc = await TestService.start({ workers: 1 });
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
