// The hit path (src/web/hit-path.ts): a request the general path answered with a derivative from
// memory is answered again before Express with the same status, headers and bytes, and still
// counted (request id, bandwidth); whatever would change the general path's answer — a delete,
// another Accept, an expired signature, a used-up bandwidth budget, a conditional or Range
// request — is answered by the general path. Which path answered is observed on the plan limits'
// mayServeNow, which only the hit path asks and whose `true` is its last check before answering
// (an observation, not a mock: the answer is unchanged).
import { expect } from 'chai';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino } from 'pino';
import type { Credential } from '../../src/catalog/api-keys.js';
import { planById } from '../../src/catalog/plans.js';
import { addMonthlyUsage, readUsage } from '../../src/catalog/usage.js';
import { signedTransformUrl } from '../../src/imaging/signing.js';
import { createHitPath } from '../../src/web/hit-path.js';
import type { RequestLog } from '../../src/web/middleware/request-context.js';
import type { FrontDoorMetrics } from '../../src/web/monitoring/metrics.js';
import type { MemoEntry } from '../../src/web/services/hit-memo.js';
import type { WebDeps } from '../../src/web/web-deps.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, expectDetail, tinyJpeg } from './set-b-helpers.js';

/** Headers that differ per response by design. */
const PER_RESPONSE = new Set(['x-request-id', 'date']);

function stableHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!PER_RESPONSE.has(name)) out[name] = value;
  });
  return out;
}

describe('hit path', function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: Credential;
  /** Requests the hit path answered. */
  let answered = 0;

  before(async () => {
    // Keys cached as in production (the harness turns the cache off): answers that relied on a key can be kept.
    svc = await TestService.start({ env: { API_KEY_CACHE_MS: '5000' } });
    user = await svc.createUser();
    const limits = svc.deps.limits;
    const mayServeNow = limits.mayServeNow.bind(limits);
    limits.mayServeNow = (ownerId) => {
      const yes = mayServeNow(ownerId);
      if (yes === true) answered++;
      return yes;
    };
  });
  after(async () => {
    await svc?.stop();
  });

  /** GETs `url` and tells whether the hit path answered. */
  async function get(url: string, headers: Record<string, string> = {}) {
    const before = answered;
    const res = await request(url, { headers });
    return { ...res, viaHitPath: answered > before };
  }

  it('answers a repeated /cdn/{id} with the general path’s status, headers and bytes, and counts its bandwidth', async () => {
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(1, 200, 120), { filename: 'hit.jpg' });
    const url = svc.url(`/cdn/${pic.imageId}?w=100&f=webp`);
    const miss = await get(url);
    expect(miss.headers.get('x-cache')).to.equal('MISS');
    const general = await get(url);
    expect(general.headers.get('x-cache')).to.equal('HIT');
    expect(general.viaHitPath, 'the first hit is the general path’s (it records the answer)').to.equal(false);
    await svc.deps.bandwidth.flush(user.userId);
    const usedBefore = (await readUsage(svc.deps.catalog, user.userId)).bandwidthBytes;
    const fast = await get(url);
    expect(fast.viaHitPath).to.equal(true);
    expect(fast.status).to.equal(200);
    expect(stableHeaders(fast.headers)).to.deep.equal(stableHeaders(general.headers));
    expect(fast.bytes.equals(general.bytes)).to.equal(true);
    expect(fast.headers.get('x-request-id')).to.match(/\S/);
    expect(fast.headers.get('x-request-id')).not.to.equal(general.headers.get('x-request-id'));
    await svc.deps.bandwidth.flush(user.userId);
    expect((await readUsage(svc.deps.catalog, user.userId)).bandwidthBytes - usedBefore).to.equal(fast.bytes.length);
  });

  it('counts a hit-path answer in /metrics as the general path counts it, and honours X-Request-Id', async () => {
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(7, 200, 120), { filename: 'counted.jpg' });
    const url = svc.url(`/cdn/${pic.imageId}?w=100&f=webp`);
    await get(url);
    const scrape = async () => (await request(svc.url('/metrics'))).bytes.toString('utf8');
    /** The value of the sample `name{…labels…}` (0 when absent). */
    const sample = (text: string, name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    const series: [string, string][] = [
      ['pictor_http_requests_total', 'method="GET",route="/cdn/:image_id",status_code="200"'],
      ['pictor_http_request_duration_seconds_count', 'method="GET",route="/cdn/:image_id",status_code="200"'],
      ['pictor_derivative_cache_total', 'route="/cdn/:image_id",result="hit"'],
      ['pictor_image_bytes_served_total', 'route="/cdn/:image_id"'],
    ];
    const moved = async (answer: () => Promise<{ viaHitPath: boolean; bytes: Buffer }>, viaHitPath: boolean) => {
      const before = await scrape();
      const res = await answer();
      expect(res.viaHitPath).to.equal(viaHitPath);
      // The counts are taken when the response closes, just after the client has it.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const after = await scrape();
      return { sizes: res.bytes.length, deltas: series.map(([name, labels]) => sample(after, name, labels) - sample(before, name, labels)) };
    };
    const general = await moved(() => get(url), false);
    expect(general.deltas).to.deep.equal([1, 1, 1, general.sizes]);
    const fast = await moved(() => get(url, { 'X-Request-Id': 'trace-42.a' }), true);
    expect(fast.deltas).to.deep.equal(general.deltas);
    expect((await get(url, { 'X-Request-Id': 'trace-42.a' })).headers.get('x-request-id')).to.equal('trace-42.a');
  });

  it('logs a hit-path answer as the general path logs it: its id, URL (signature redacted) and status, once', async () => {
    // The lines the front door's logger hands its destination, at the production level (the
    // harness logs only warnings); kept here instead of written to the test's output.
    const log = svc.deps.log;
    const stream = (log as unknown as Record<symbol, { write(line: string): unknown }>)[pino.symbols.streamSym];
    const { write } = stream;
    const level = log.level;
    const lines: string[] = [];
    stream.write = (line: string) => lines.push(line);
    log.level = 'info';
    try {
      const pic = await cdnUpload(svc, user.key, await tinyJpeg(9, 200, 120), { filename: 'logged.jpg' });
      const url = svc.url(`/cdn/${pic.imageId}?w=60&f=webp&sig=not-a-secret-to-log`);
      await get(url);
      await get(url);
      const fast = await get(url, { 'X-Request-Id': 'logged-hit.1' });
      expect(fast.viaHitPath).to.equal(true);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const mine = lines.filter((line) => line.includes('"logged-hit.1"')).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(mine).to.have.length(1);
      expect(mine[0]).to.deep.include({ level: 30, msg: 'request completed', req: { id: 'logged-hit.1', method: 'GET', url: `/cdn/${pic.imageId}?w=60&f=webp&sig=[redacted]` }, res: { statusCode: 200 } });
    } finally {
      stream.write = write;
      log.level = level;
    }
  });

  it('leaves conditional, Range and HEAD requests to the general path (304, 206)', async () => {
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(2, 200, 120), { filename: 'cond.jpg' });
    const url = svc.url(`/cdn/${pic.imageId}?w=90&f=png`);
    await get(url);
    const whole = await get(url);
    expect((await get(url)).viaHitPath).to.equal(true);
    const conditional = await get(url, { 'If-None-Match': whole.headers.get('etag')! });
    expect(conditional.status).to.equal(304);
    expect(conditional.viaHitPath).to.equal(false);
    const ranged = await get(url, { Range: 'bytes=0-9' });
    expect(ranged.status).to.equal(206);
    expect(ranged.bytes.equals(whole.bytes.subarray(0, 10))).to.equal(true);
    const head = await request(url, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(head.bytes.length).to.equal(0);
  });

  it('a negotiated answer is kept per Accept: each client gets its own format', async () => {
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(3, 200, 120), { filename: 'neg.jpg' });
    const url = svc.url(`/cdn/${pic.imageId}?w=80`);
    for (let i = 0; i < 3; i++) {
      const webp = await get(url, { Accept: 'image/webp,*/*' });
      expect(webp.headers.get('content-type')).to.equal('image/webp');
      const jpeg = await get(url, { Accept: 'image/jpeg' });
      expect(jpeg.headers.get('content-type')).to.equal('image/jpeg');
      expect(jpeg.headers.get('vary')).to.include('Accept');
    }
  });

  it('a deleted image is a 404 at once, though its answer was kept', async () => {
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(4, 64, 64), { filename: 'del.jpg' });
    const url = svc.url(`/cdn/${pic.imageId}?w=32&f=webp`);
    await get(url);
    await get(url);
    expect((await get(url)).viaHitPath).to.equal(true);
    expect((await request(svc.url(`/cdn/${pic.imageId}`), { method: 'DELETE', key: user.key })).status).to.equal(200);
    const gone = await get(url);
    expect(gone.status).to.equal(404);
    expect(gone.viaHitPath).to.equal(false);
  });

  it('a kept signed /transform URL stops answering when its exp passes (403)', async () => {
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(5, 200, 120), { filename: 'exp.jpg' });
    const exp = Math.floor(Date.now() / 1000) + 2;
    const url = signedTransformUrl(svc.baseUrl, { src: pic.public_url, w: 60, f: 'jpeg', exp }, { kid: user.keyId, secret: user.secret });
    expect((await get(url)).status).to.equal(200);
    const fast = await get(url);
    expect(fast.status).to.equal(200);
    expect(fast.viaHitPath).to.equal(true);
    await new Promise((resolve) => setTimeout(resolve, exp * 1000 - Date.now() + 50));
    const expired = await get(url);
    expect(expired.status).to.equal(403);
    expect(expired.viaHitPath).to.equal(false);
  });

  it('a kept answer is refused (429) once the owner’s bandwidth is used up', async () => {
    const owner = await svc.createUser(undefined, 'free');
    const pic = await cdnUpload(svc, owner.key, await tinyJpeg(6, 120, 80), { filename: 'bw.jpg' });
    const url = svc.url(`/cdn/${pic.imageId}?w=40&f=jpeg`);
    await get(url);
    await get(url);
    expect((await get(url)).viaHitPath).to.equal(true);
    await svc.deps.bandwidth.flush(owner.userId);
    const used = (await readUsage(svc.deps.catalog, owner.userId)).bandwidthBytes;
    await addMonthlyUsage(svc.deps.catalog, owner.userId, { bandwidthBytes: planById('free').bandwidth_bytes_per_month - used });
    svc.deps.limits.forget(owner.userId);
    const refused = await get(url);
    expectDetail(refused, 429, /bandwidth per month/);
    expect(refused.viaHitPath).to.equal(false);
  });

  it('/image/{path} with a key: another key (or none) is not answered from the kept entry', async () => {
    const other = await svc.createUser();
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(7, 120, 80), { filename: 'own.jpg' });
    const url = svc.url(`/image/own.webp?src=${encodeURIComponent(pic.public_url)}&w=50`);
    await get(url, { 'X-API-Key': user.key });
    await get(url, { 'X-API-Key': user.key });
    expect((await get(url, { 'X-API-Key': user.key })).viaHitPath).to.equal(true);
    expect((await get(url, { 'X-API-Key': other.key })).status).to.equal(404);
    expect((await get(url)).status).to.equal(422);
  });

  it('a derivative’s /files URL is answered again until its image is deleted', async () => {
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(8, 120, 80), { filename: 'file.jpg' });
    const made = await request(svc.url(`/transform?src=${encodeURIComponent(pic.public_url)}&w=70&f=png`), { key: user.key });
    expect(made.status).to.equal(200);
    const url = made.body.public_url as string;
    const first = await get(url);
    expect(first.status).to.equal(200);
    expect(first.headers.get('cache-control')).to.include('immutable');
    const fast = await get(url);
    expect(fast.viaHitPath).to.equal(true);
    expect(fast.bytes.equals(first.bytes)).to.equal(true);
    expect((await request(svc.url(`/cdn/${pic.imageId}`), { method: 'DELETE', key: user.key })).status).to.equal(200);
    const gone = await get(url);
    expect(gone.status).to.equal(404);
    expect(gone.viaHitPath).to.equal(false);
  });
});

describe('hit path: when an answer is logged', () => {
  // The kernel takes a whole in-memory derivative at once on loopback (the memory cache keeps
  // objects up to 4 MiB; loopback sockets buffer more), so an answer still being sent cannot be
  // made with a real socket here: the response is a stand-in that says it is still sending.
  function answer(writableFinished: boolean) {
    const entry: MemoEntry = { objectKey: 'k', ownerId: 'o', head: ['x-request-id', ''], loggedUrl: '"/cdn/a"', cacheHit: true, route: '/cdn/:image_id', holds: [], validUntil: Infinity };
    const deps = {
      hits: { lookup: () => entry, forget: () => undefined },
      derivatives: { hot: () => Buffer.alloc(10) },
      limits: { mayServeNow: () => true },
      bandwidth: { add: () => undefined },
    } as unknown as WebDeps;
    const events: string[] = [];
    const requestLog = { id: () => 'id-1', written: (_res: ServerResponse, id: string, _m: string, url: string) => events.push(`log ${id} ${url}`) } as unknown as RequestLog;
    const metrics = { countHit: (_res: ServerResponse, route: string, size: number) => events.push(`count ${route} ${size}`) } as unknown as FrontDoorMetrics;
    let onClose: (() => void) | undefined;
    const res = { writableFinished, writeHead: () => undefined, end: () => undefined, once: (_event: string, listener: () => void) => (onClose = listener) };
    const answered = createHitPath(deps, metrics, requestLog)({ method: 'GET', headers: {} } as IncomingMessage, res as unknown as ServerResponse);
    expect(answered).to.equal(true);
    return { events, close: () => onClose?.() };
  }

  it('at once when the socket took every byte', () => {
    const { events } = answer(true);
    expect(events).to.deep.equal(['log id-1 "/cdn/a"', 'count /cdn/:image_id 10']);
  });

  it('at its close when bytes are still being sent, once', () => {
    const { events, close } = answer(false);
    expect(events).to.deep.equal([]);
    close();
    expect(events).to.deep.equal(['log id-1 "/cdn/a"', 'count /cdn/:image_id 10']);
  });
});
