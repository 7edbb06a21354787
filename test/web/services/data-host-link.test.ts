// A front door whose link to Redis and the catalog goes silent (no reset, as a pulled cable: the
// relays below stop carrying bytes and hold new connections) refuses requests at once with 503 +
// Retry-After in the route's error shape once its probe sees the link down, keeps answering
// /health itself, and serves again by itself after the heal. Real Redis, real catalog, real HTTP;
// only the cable is simulated, by TCP relays in this process.
import { expect } from 'chai';
import type { Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { freePort, startRedisServer, type RedisServerHandle } from '../../../scripts/lib/redis-server.js';
import { figure, timed, waitFor } from '../../faults/fault-helpers.js';
import { jpeg } from '../../fixtures/images.js';
import { request, upload } from '../../harness/http.js';
import { catalogUrlFor } from '../../harness/root-hooks.js';
import { TestService } from '../../harness/test-service.js';
import type { Catalog } from '../../../src/catalog/catalog.js';
import { createBlockingConnection, createQueueConnection } from '../../../src/jobs/queues.js';
import { CATALOG_LOST_CHANNEL, catalogErrorWatch, DataHostLink } from '../../../src/web/services/data-host-link.js';

/** A TCP relay to `target` that can stop carrying bytes without closing anything. */
class Cable {
  private cut = false;
  private readonly sockets = new Set<net.Socket>();
  private readonly held: (() => void)[] = [];
  private server: net.Server | null = null;

  constructor(private readonly target: { host: string; port: number }) {}

  async listen(): Promise<number> {
    const port = await freePort();
    this.server = net.createServer((client) => {
      const connect = () => {
        const upstream = net.connect(this.target.port, this.target.host);
        for (const [a, b] of [[client, upstream], [upstream, client]]) {
          this.sockets.add(a);
          a.on('data', (chunk: Buffer) => b.write(chunk));
          a.on('close', () => {
            this.sockets.delete(a);
            b.destroy();
          });
          a.on('error', () => undefined);
        }
        if (this.cut) this.setCut(true);
      };
      client.on('error', () => undefined);
      if (this.cut) this.held.push(connect);
      else connect();
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return port;
  }

  /** Cut: nothing is read any more (bytes wait in the kernel's buffers); heal: everything flows again. */
  setCut(cut: boolean): void {
    this.cut = cut;
    for (const socket of this.sockets) {
      if (cut) socket.pause();
      else socket.resume();
    }
    if (!cut) for (const connect of this.held.splice(0)) connect();
  }

  close(): void {
    for (const socket of this.sockets) socket.destroy();
    this.server?.close();
  }
}

/** What the probe may take to notice: its interval (0.5 s), its limit (1.5 s) and a loaded machine's margin. */
const NOTICE_MS = 4_000;
/** A refusal "at once": no backing service is asked. */
const AT_ONCE_MS = 500;

describe('DataHostLink: a front door cut off from Redis and the catalog', function () {
  this.timeout(60_000);
  let svc: TestService;
  let redisCable: Cable;
  let catalogCable: Cable;
  let redisServer: RedisServerHandle;

  before(async () => {
    redisServer = await startRedisServer();
    const redisUrl = new URL(redisServer.url);
    redisCable = new Cable({ host: redisUrl.hostname, port: Number(redisUrl.port) });
    const catalogUrl = new URL(catalogUrlFor(`data_host_link_${randomBytes(4).toString('hex')}`));
    catalogCable = new Cable({ host: catalogUrl.hostname, port: Number(catalogUrl.port) });
    const [redisPort, catalogPort] = [await redisCable.listen(), await catalogCable.listen()];
    catalogUrl.host = `127.0.0.1:${catalogPort}`;
    svc = await TestService.start({ workers: 1, env: { REDIS_URL: `redis://127.0.0.1:${redisPort}`, MONGO_URL: catalogUrl.toString() } });
  });
  after(async () => {
    redisCable?.setCut(false);
    catalogCable?.setCut(false);
    await svc?.stop();
    redisCable?.close();
    catalogCable?.close();
    await redisServer?.stop();
  });

  it('answers 503 + Retry-After at once while cut off, /health still itself, and recovers after the heal', async () => {
    const user = await svc.createUser();
    const image = await jpeg(160, 120);
    const before = await upload(svc.baseUrl, { key: user.key, bytes: image, filename: 'before.jpg' });
    expect(before.status, JSON.stringify(before.body)).to.equal(200);

    redisCable.setCut(true);
    catalogCable.setCut(true);
    const cutAt = Date.now();
    await waitFor('the probe to see the link down', async () => svc.deps.dataHost?.reachable === false, NOTICE_MS, 50);
    const noticedMs = Date.now() - cutAt;

    const up = await timed(upload(svc.baseUrl, { key: user.key, bytes: image, filename: 'during.jpg' }));
    expect(up.value.status, JSON.stringify(up.value.body)).to.equal(503);
    expect(up.value.headers.get('retry-after')).to.match(/^\d+$/);
    expect(up.value.body).to.include({ type: 'server_error', status_code: 503 }); // set A's shape
    expect(up.ms).to.be.below(AT_ONCE_MS);
    const list = await timed(request(svc.url('/cdn/images'), { key: user.key }));
    expect(list.value.status).to.equal(503);
    expect(list.value.body.detail).to.match(/unreachable/); // set B's shape
    expect(list.ms).to.be.below(AT_ONCE_MS);
    // /health is not refused: it runs its own checks and names what fails.
    const health = await request(svc.url('/health'));
    expect(health.status).to.equal(503);
    expect(health.body.failing).to.include.members(['redis', 'catalog']);

    redisCable.setCut(false);
    catalogCable.setCut(false);
    const healAt = Date.now();
    const after = await waitFor('an upload to succeed after the heal', async () => {
      const res = await upload(svc.baseUrl, { key: user.key, bytes: image, filename: 'after.jpg' });
      return res.status === 200 ? res : null;
    }, 30_000, 100);
    const recoveredMs = Date.now() - healAt;
    expect(after.body.public_url).to.match(/after\.jpg$/);
    figure(`data host link: cut seen after ${noticedMs} ms; then upload 503 in ${up.ms} ms, list 503 in ${list.ms} ms; first upload after the heal ${recoveredMs} ms`);
  });
});

describe('DataHostLink: a catalog the driver has lost', () => {
  // The decision alone, with the catalog's connection state stood in for (the end-to-end case, a
  // stopped catalog server, is test/faults/catalog-down.test.ts); no probe runs.
  const link = (connected: boolean) => new DataHostLink(null as unknown as Redis, { connected } as Catalog, pino({ level: 'silent' }));
  const req = (method: string, path: string) => ({ method, path }) as Request;

  it('refuses writes at once, lets reads and the passport endpoints (never catalogued) through', () => {
    const lost = link(false);
    for (const [method, path] of [['POST', '/upload'], ['POST', '/cdn/upload'], ['DELETE', '/cdn/abc'], ['POST', '/cdn/projects']]) {
      const refusal = lost.refusal(req(method, path));
      expect(refusal?.status, `${method} ${path}`).to.equal(503);
      expect(refusal?.message).to.match(/catalog is unreachable/);
    }
    for (const [method, path] of [['GET', '/cdn/images'], ['HEAD', '/cdn/abc'], ['POST', '/passport-photo/demo/process'], ['GET', '/health']]) {
      expect(lost.refusal(req(method, path)), `${method} ${path}`).to.equal(null);
    }
    expect(link(true).refusal(req('POST', '/upload'))).to.equal(null);
  });
});

describe('DataHostLink: a catalog loss reported by another front door', function () {
  // Real Redis and its channel; the catalog is stood in for (its connection's events and a ping
  // the test answers or fails at will): a host cut off from the catalog while this one still
  // reaches it cannot be made with one catalog server, and what is tested here is the decision.
  // The end-to-end case, two front-door processes and a stopped catalog, is
  // test/faults/catalog-down-cluster.test.ts.
  this.timeout(20_000);
  let redisServer: RedisServerHandle;
  let redis: Redis;
  let listener: Redis;
  let subscriber: Redis;
  let link: DataHostLink;
  const catalog = { connected: true, connection: new EventEmitter(), ping: () => Promise.resolve() as Promise<void> };
  const write = { method: 'POST', path: '/cdn/upload' } as Request;

  before(async () => {
    redisServer = await startRedisServer();
    redis = createQueueConnection(redisServer.url);
    listener = createBlockingConnection(redisServer.url);
    subscriber = createBlockingConnection(redisServer.url);
    link = new DataHostLink(redis, catalog as unknown as Catalog, pino({ level: 'silent' }), subscriber);
    await link.start();
  });
  after(async () => {
    link?.stop();
    subscriber?.disconnect();
    listener?.disconnect();
    redis?.disconnect();
    await redisServer?.stop();
  });

  /** A ping that answers (or fails without an answer) when the test says so. */
  function heldPing(): { answer: () => void; fail: () => void } {
    let answer = () => {};
    let fail = () => {};
    catalog.ping = () =>
      new Promise<void>((resolve, reject) => {
        answer = resolve;
        fail = () => reject(new Error('connect ECONNREFUSED'));
      });
    return { answer: () => answer(), fail: () => fail() };
  }

  it('refuses writes from another host\'s report until its own ping answers (a partition of that host alone)', async () => {
    const ping = heldPing();
    await redis.publish(CATALOG_LOST_CHANNEL, 'another-host:1');
    await waitFor('the report to arrive', async () => link.refusal(write) !== null, 2000, 5);
    expect(link.refusal(write)?.message).to.match(/catalog is unreachable/);
    expect(link.refusal({ method: 'GET', path: '/cdn/images' } as Request)).to.equal(null);
    ping.answer();
    const answeredAt = performance.now();
    await waitFor('the answered ping to clear the report', async () => link.refusal(write) === null, 2000, 1);
    figure(`data host link: another host's report cleared ${(performance.now() - answeredAt).toFixed(1)} ms after this host's ping answered`);
  });

  it('keeps refusing while its own ping gets no answer, and passes again from the first probe that answers', async () => {
    const ping = heldPing();
    await redis.publish(CATALOG_LOST_CHANNEL, 'another-host:1');
    await waitFor('the report to arrive', async () => link.refusal(write) !== null, 2000, 5);
    ping.fail();
    await new Promise((resolve) => setTimeout(resolve, 700)); // longer than a probe interval: the failing probes keep it
    expect(link.refusal(write)).to.not.equal(null);
    catalog.ping = () => Promise.resolve();
    await waitFor('a probe to clear the report', async () => link.refusal(write) === null, 2000, 10);
  });

  it('keeps refusing while its own ping is refused by the catalog (one shutting down answers ShutdownInProgress)', async () => {
    const shuttingDown = Object.assign(new Error('The server is in quiesce mode and will shut down'), { name: 'MongoServerError', code: 91 });
    catalog.ping = () => Promise.reject(shuttingDown);
    await redis.publish(CATALOG_LOST_CHANNEL, 'another-host:1');
    await waitFor('the report to arrive', async () => link.refusal(write) !== null, 2000, 5);
    await new Promise((resolve) => setTimeout(resolve, 700)); // longer than a probe interval: the refused pings keep it
    expect(link.refusal(write), 'a refused ping is no catalog to write to').to.not.equal(null);
    expect(link.reachable, 'an error reply still shows the link carries').to.equal(true);
    catalog.ping = () => Promise.resolve();
    await waitFor('a probe to clear the report', async () => link.refusal(write) === null, 2000, 10);
  });

  it('pings the catalog at once when a request meets a catalog error reply (a catalog whose journal failed answers a read so), one ping at a time', async () => {
    // A link that is not started: no probe runs, so every ping here is the watch's.
    const idle = new DataHostLink(redis, catalog as unknown as Catalog, pino({ level: 'silent' }));
    const watch = catalogErrorWatch(idle);
    let pings = 0;
    const ping = heldPing();
    const counted = catalog.ping;
    catalog.ping = () => (pings++, counted());
    const passed: unknown[] = [];
    const readRefused = Object.assign(new Error('catalog journal write failed: ENOSPC'), { name: 'MongoServerError', code: 1 });
    watch(readRefused, write, {} as Response, (err?: unknown) => passed.push(err));
    watch(readRefused, write, {} as Response, (err?: unknown) => passed.push(err));
    expect(pings, 'one ping for two errors while it is out').to.equal(1);
    ping.answer();
    await new Promise((resolve) => setImmediate(resolve));
    watch(new Error('not the catalog'), write, {} as Response, (err?: unknown) => passed.push(err));
    expect(pings, 'another error pings nothing').to.equal(1);
    watch(readRefused, write, {} as Response, (err?: unknown) => passed.push(err));
    expect(pings, 'the next catalog error, once the ping answered').to.equal(2);
    expect(passed, 'each error goes on to the error handler').to.have.length(4);
    catalog.ping = () => Promise.resolve();
  });

  it('reports its own driver\'s loss on the channel, and does not act on its own report', async () => {
    catalog.ping = () => Promise.reject(new Error('connect ECONNREFUSED'));
    const heard = new Promise<string>((resolve) => listener.once('message', (_channel: string, sender: string) => resolve(sender)));
    await listener.subscribe(CATALOG_LOST_CHANNEL);
    catalog.connection.emit('disconnected');
    const sender = await heard;
    expect(sender).to.match(/:\d+$/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(link.refusal(write), 'its own report marks nothing (its driver already knows)').to.equal(null);
    catalog.ping = () => Promise.resolve();
  });
});
