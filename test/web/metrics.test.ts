// GET /metrics (Prometheus) and the queue dashboard (/admin/queues): the series exist and move
// when requests and jobs run (job metrics come from the worker process through Redis); both are
// behind ADMIN_TOKEN; without ADMIN_TOKEN the dashboard is 404 and /metrics is public.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { QUEUE_NAMES } from '../../src/jobs/job-contract.js';
import { createApp } from '../../src/web/app.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

const ADMIN_TOKEN = 'metrics-admin-token';
const bearer = { Authorization: `Bearer ${ADMIN_TOKEN}` };

type Series = { name: string; labels: Record<string, string>; value: number }[];

function parse(text: string): Series {
  const out: Series = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** Sum of the samples of `name` whose labels include `labels`. */
function total(series: Series, name: string, labels: Record<string, string> = {}): number {
  return series.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

function has(series: Series, name: string, labels: Record<string, string> = {}): boolean {
  return series.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

describe('GET /metrics and /admin/queues', function () {
  this.timeout(60_000);
  let svc: TestService;
  let key: string;

  before(async () => {
    svc = await TestService.start({ workers: 1, env: { ADMIN_TOKEN } });
    key = (await svc.createUser()).key;
  });
  after(async () => {
    await svc?.stop();
  });

  async function scrape(): Promise<Series> {
    const res = await request(svc.url('/metrics'), { headers: bearer });
    expect(res.status).to.equal(200);
    return parse(res.bytes.toString('utf8'));
  }

  async function scrapeUntil(done: (s: Series) => boolean, what: string): Promise<Series> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const s = await scrape();
      if (done(s)) return s;
      if (Date.now() > deadline) throw new Error(`metrics did not show ${what} within 15 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('/metrics needs the admin credential when ADMIN_TOKEN is set (Bearer, X-Admin-Token or Basic)', async () => {
    const none = await request(svc.url('/metrics'));
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.match(/^Basic /);
    expect(none.body).to.have.property('detail');
    expect((await request(svc.url('/metrics'), { headers: { Authorization: 'Bearer nope' } })).status).to.equal(401);
    expect((await request(svc.url('/metrics'), { key })).status, 'an API key is not an admin credential').to.equal(401);
    const ok = await request(svc.url('/metrics'), { headers: bearer });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    expect((await request(svc.url('/metrics'), { headers: { 'X-Admin-Token': ADMIN_TOKEN } })).status).to.equal(200);
    const basic = Buffer.from(`ops:${ADMIN_TOKEN}`).toString('base64');
    expect((await request(svc.url('/metrics'), { headers: { Authorization: `Basic ${basic}` } })).status).to.equal(200);
  });

  it('HTTP, cache, bytes, job, queue and memory series exist and move when requests and jobs run', async () => {
    const before = await scrape();
    const up = await upload(svc.baseUrl, { bytes: await jpeg(400, 300), key, query: { public_id: 'metrics/one' } });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    const src = encodeURIComponent(up.body.public_url);
    const miss = await request(svc.url(`/transform?src=${src}&w=120`), { key });
    expect(miss.headers.get('x-cache')).to.equal('MISS');
    const hit = await request(svc.url(`/transform?src=${src}&w=120`), { key });
    expect(hit.headers.get('x-cache')).to.equal('HIT');
    const image = await request(svc.url(`/image/thumb-${Date.now()}.webp?src=${src}&w=64`), { key });
    expect(image.status).to.equal(200);
    const original = await request(up.body.public_url);
    expect(original.status).to.equal(200);
    await request(svc.url('/no/such/route'));

    const after = await scrapeUntil(
      (s) => total(s, 'pictor_job_duration_seconds_count', { queue: 'transform', status: 'completed' }) >= 2,
      'the worker’s transform jobs',
    );
    const delta = (name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);

    // Requests by route pattern, method and status; durations.
    expect(delta('pictor_http_requests_total', { route: '/upload', method: 'POST', status_code: '200' })).to.equal(1);
    expect(delta('pictor_http_requests_total', { route: '/transform', method: 'GET', status_code: '200' })).to.equal(2);
    expect(delta('pictor_http_requests_total', { route: '/image/*path', method: 'GET', status_code: '200' })).to.equal(1);
    expect(delta('pictor_http_requests_total', { route: '(unmatched)', status_code: '404' })).to.equal(1);
    expect(delta('pictor_http_request_duration_seconds_count', { route: '/upload', method: 'POST' })).to.equal(1);
    expect(has(after, 'pictor_http_request_duration_seconds_bucket', { route: '/transform', le: '+Inf' })).to.equal(true);
    const routes = new Set(after.filter((s) => s.name === 'pictor_http_requests_total').map((s) => s.labels.route));
    for (const r of routes) expect(r, 'route labels are patterns, never raw URLs').not.to.match(/thumb-|metrics\/one|\?/);

    // Derivative cache (from X-Cache) and bytes served by the image responder.
    expect(delta('pictor_derivative_cache_total', { route: '/transform', result: 'miss' })).to.equal(1);
    expect(delta('pictor_derivative_cache_total', { route: '/transform', result: 'hit' })).to.equal(1);
    expect(delta('pictor_derivative_cache_total', { route: '/image/*path', result: 'miss' })).to.equal(1);
    expect(delta('pictor_image_bytes_served_total', { route: '/image/*path' })).to.equal(image.bytes.length);
    expect(delta('pictor_image_bytes_served_total', { route: '/files/*key' })).to.equal(original.bytes.length);

    // Jobs from the worker (pushed through Redis), per queue and outcome.
    expect(delta('pictor_job_duration_seconds_count', { queue: 'upload-finalize', status: 'completed' })).to.be.at.least(1);
    expect(delta('pictor_jobs_processed_total', { queue: 'transform', status: 'completed' })).to.be.at.least(2);
    const workerIds = new Set(after.filter((s) => s.name === 'pictor_jobs_processed_total').map((s) => s.labels.worker));
    expect(workerIds.size).to.equal(1);
    expect(total(after, 'pictor_job_duration_seconds_sum', { queue: 'transform' })).to.be.greaterThan(0);

    // Queue states at scrape time, worker and front door memory.
    expect(delta('pictor_queue_jobs', { queue: 'upload-finalize', state: 'completed' })).to.be.at.least(1);
    expect(has(after, 'pictor_queue_depth', { queue: 'transform' })).to.equal(true);
    expect(total(after, 'pictor_workers')).to.equal(1);
    const rss = after.filter((s) => s.name === 'pictor_worker_resident_memory_bytes');
    expect(rss).to.have.length(1);
    expect(rss[0].value).to.be.greaterThan(10 * 1024 * 1024);
    expect(rss[0].labels.worker).to.equal([...workerIds][0]);
    expect(total(after, 'process_resident_memory_bytes')).to.be.greaterThan(10 * 1024 * 1024);
  });

  it('queue depth follows jobs that wait (no worker serves the passport queue here)', async () => {
    const jobId = `pp-metrics-${Date.now()}`;
    const job = await svc.deps.jobs.enqueue(
      QUEUE_NAMES.passport,
      { requestId: jobId, stagingKey: '_staging/none', country: 'usa', removeBackground: true, enhance: true, includePrintSheet: false, faceBox: null },
      { jobId },
    );
    const waiting = await scrape();
    expect(total(waiting, 'pictor_queue_depth', { queue: 'passport' })).to.equal(1);
    expect(total(waiting, 'pictor_queue_jobs', { queue: 'passport', state: 'waiting' })).to.equal(1);
    await job.remove();
    const drained = await scrape();
    expect(total(drained, 'pictor_queue_depth', { queue: 'passport' })).to.equal(0);
  });

  it('/admin/queues (Bull Board) answers 401 without the admin credential and 200 with it', async () => {
    const none = await request(svc.url('/admin/queues'));
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.match(/^Basic realm="Pictor admin"/);
    expect((await request(svc.url('/admin/queues'), { headers: { 'X-Admin-Token': 'wrong' } })).status).to.equal(401);
    expect((await request(svc.url('/admin/queues/api/queues'))).status).to.equal(401);

    const page = await request(svc.url('/admin/queues'), { headers: bearer });
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(page.bytes.toString('utf8')).to.contain('Pictor queues');
    const basic = Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64');
    const api = await request(svc.url('/admin/queues/api/queues'), { headers: { Authorization: `Basic ${basic}` } });
    expect(api.status).to.equal(200);
    expect((api.body.queues as { name: string }[]).map((q) => q.name)).to.include.members(['upload-finalize', 'transform', 'passport']);
  });

  it('without ADMIN_TOKEN the queue dashboard is disabled (404) and /metrics is public', async () => {
    const app = createApp({ ...svc.deps, config: { ...svc.deps.config, adminToken: '' } });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await request(`${base}/admin/queues`)).status).to.equal(404);
      expect((await request(`${base}/admin/queues`, { headers: bearer })).status).to.equal(404);
      const metrics = await request(`${base}/metrics`);
      expect(metrics.status).to.equal(200);
      expect(metrics.bytes.toString('utf8')).to.contain('pictor_http_requests_total');
      const doc = (await request(`${base}/openapi.json`)).body;
      expect(doc.paths['/admin/queues']).to.equal(undefined);
      expect(doc.paths['/metrics'].get.security).to.deep.equal([]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
