// Builds the front door's dependencies, listens, and shuts down in order on SIGTERM:
// stop accepting → finish in-flight requests → queues → Redis → catalog.
import http from 'node:http';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { parseKeySeed, seedCredential } from '../catalog/api-keys.js';
import { Catalog } from '../catalog/catalog.js';
import type { Config } from '../config.js';
import { JobProducer } from '../jobs/job-producer.js';
import { createBlockingConnection, createQueueConnection } from '../jobs/queues.js';
import { createStorage } from '../storage/create-storage.js';
import { createFrontDoorApp } from './app.js';
import { markArrivedWhileDraining } from './middleware/draining.js';
import { PlanLimits } from './services/plan-limits.js';
import { DataHostLink } from './services/data-host-link.js';
import { BandwidthCounter } from './services/bandwidth-counter.js';
import { DerivativeCache } from './services/derivative-cache.js';
import { HitMemo } from './services/hit-memo.js';
import { ImageCache } from './services/image-cache.js';
import type { WebDeps } from './web-deps.js';

/**
 * A catalog or Redis command of the front door not answered within this fails (503 with
 * Retry-After). A data host behind a broken link sends no reset: without a limit a caller would
 * wait until the link heals. Front-door commands are single-document reads and writes, answered
 * in milliseconds when the link works (docs/operations.md, cluster figures). Only requests already
 * waiting when the link breaks meet this limit: once the probe sees the link down, new ones are
 * refused at once (DataHostLink).
 */
const BACKEND_ANSWER_TIMEOUT_MS = 3_000;

export class FrontDoor {
  private server: http.Server | null = null;
  private deps: WebDeps | null = null;
  /** The front door's subscriber connection (image changes, catalog loss), closed after those who listen on it. */
  private subscriber: Redis | null = null;
  private closing: Promise<void> | null = null;

  constructor(private readonly config: Config, private readonly log: Logger) {}

  async start(): Promise<{ port: number; deps: WebDeps }> {
    const { config, log } = this;
    const catalog = await Catalog.connect(config.mongoUrl, { answerTimeoutMs: BACKEND_ANSWER_TIMEOUT_MS });
    for (const seed of parseKeySeed(config.apiKeysSeed)) await seedCredential(catalog, seed.userId, seed.key, seed.secret, seed.plan);
    const storage = createStorage(config);
    const redis = createQueueConnection(config.redisUrl, { commandTimeout: BACKEND_ANSWER_TIMEOUT_MS });
    redis.on('error', (err) => log.warn({ err: err.message }, 'redis connection error'));
    await new Promise<void>((resolve, reject) => {
      if (redis.status === 'ready') return resolve();
      redis.once('ready', () => resolve());
      setTimeout(() => reject(new Error(`Redis at ${config.redisUrl} is not reachable`)), 10_000).unref();
    });
    // Async requests (202) get a durable job record in storage too (src/jobs/job-records.ts).
    const jobs = new JobProducer({ redisUrl: config.redisUrl, connection: redis, jobTimeoutMs: config.jobTimeoutMs, maxWaiting: config.queueMaxWaiting, tenantMaxWaiting: config.tenantMaxWaiting, jobRecords: storage });
    await jobs.ready();
    const images = new ImageCache(catalog, config.imageCacheMs);
    // One subscriber connection for the front door's channels (image changes, catalog loss): a
    // subscriber can do nothing else; it reconnects and subscribes again by itself.
    const subscriber = createBlockingConnection(config.redisUrl);
    subscriber.on('error', () => undefined);
    this.subscriber = subscriber;
    await images.listen(subscriber);
    const bandwidth = new BandwidthCounter(catalog, log);
    const limits = new PlanLimits(catalog, bandwidth, config.quotaCacheMs, (err) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'plan limits: usage not readable; requests pass unchecked meanwhile'));
    const dataHost = new DataHostLink(redis, catalog, log, subscriber);
    await dataHost.start();
    this.deps = { config, catalog, storage, jobs, redis, log, images, derivatives: new DerivativeCache(storage, config.memoryCacheMb), hits: new HitMemo(), bandwidth, limits, dataHost };
    const { app, hitPath } = createFrontDoorApp(this.deps);
    this.server = http.createServer((req, res) => {
      if (this.closing) {
        // Shutting down: this connection ends with this response, and new work is refused.
        res.setHeader('Connection', 'close');
        markArrivedWhileDraining(req);
      } else if (hitPath(req, res)) return;
      app(req, res);
    });
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      // A taken port rejects start() (one fatal log line) instead of throwing an unhandled 'error'.
      this.server!.once('error', reject);
      this.server!.listen(config.port, config.host, () => {
        this.server!.off('error', reject);
        resolve();
      });
    });
    const address = this.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    log.info({ port, baseUrl: config.baseUrl }, 'front door listening');
    return { port, deps: this.deps };
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.server) {
        const server = this.server;
        await new Promise<void>((resolve) => {
          // A keep-alive connection whose in-flight request finishes after close() would hold the
          // server open until keepAliveTimeout: close connections as they become idle, and any
          // still open once a waiting request would have timed out anyway.
          const idle = setInterval(() => server.closeIdleConnections(), 100);
          const deadline = setTimeout(() => server.closeAllConnections(), this.config.jobTimeoutMs + 5000);
          server.close(() => {
            clearInterval(idle);
            clearTimeout(deadline);
            resolve();
          });
          server.closeIdleConnections();
        });
      }
      if (this.deps) {
        // Counts of the last requests go to the catalog before it closes.
        await this.deps.bandwidth.close().catch(() => undefined);
        this.deps.dataHost?.stop();
        this.subscriber?.disconnect();
        await this.deps.jobs.close().catch(() => undefined);
        await this.deps.redis.quit().catch(() => this.deps?.redis.disconnect());
        await this.deps.catalog.close().catch(() => undefined);
      }
    })();
    return this.closing;
  }
}
