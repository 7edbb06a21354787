// One worker process: BullMQ workers for the queues it serves, sharing one catalog connection,
// one storage driver and one Redis connection (duplicated per worker as BullMQ needs).
import { Worker, type Processor } from 'bullmq';
import os from 'node:os';
import sharp from 'sharp';
import type { Logger } from 'pino';
import { Catalog } from '../src/catalog/catalog.js';
import type { Config } from '../src/config.js';
import { ALL_QUEUES, QUEUE_NAMES, REDIS_PREFIX, type QueueName } from '../src/jobs/queue-names.js';
import { createBlockingConnection } from '../src/jobs/redis-connection.js';
import { WorkerHeartbeat } from '../src/jobs/worker-heartbeat.js';
import { createStorage } from '../src/storage/create-storage.js';
import type { ProcessorContext } from './processors/processor-context.js';
import { guarded } from './processors/run-processor.js';
import { transformProcessor } from './processors/transform.processor.js';
import { uploadFinalizeProcessor } from './processors/upload-finalize.processor.js';
import type { Redis } from 'ioredis';

export class WorkerProcess {
  private workers: Worker[] = [];
  private heartbeat: WorkerHeartbeat | null = null;
  private connection: Redis | null = null;
  private catalog: Catalog | null = null;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
    private readonly queues: readonly QueueName[] = ALL_QUEUES,
  ) {}

  async start(): Promise<void> {
    const { config } = this;
    // Size libvips' thread pool so processes × concurrency × threads ≈ cores (README: Running at scale).
    const threads = config.sharpThreads || Math.max(1, Math.floor(os.availableParallelism() / config.workerConcurrency));
    sharp.concurrency(threads);
    sharp.cache(false); // each job reads a different original; the cache only grows RSS
    this.catalog = await Catalog.connect(config.mongoUrl);
    const storage = createStorage(config);
    const ctx: ProcessorContext = { config, catalog: this.catalog, storage, log: this.log };
    this.connection = createBlockingConnection(config.redisUrl);
    const processors: Partial<Record<QueueName, Processor>> = {
      [QUEUE_NAMES.uploadFinalize]: guarded(uploadFinalizeProcessor(ctx)) as Processor,
      [QUEUE_NAMES.transform]: guarded(transformProcessor(ctx)) as Processor,
    };
    const passport = await this.loadPassportProcessor(ctx);
    if (passport) processors[QUEUE_NAMES.passport] = passport;
    for (const name of this.queues) {
      const processor = processors[name];
      if (!processor) continue;
      const worker = new Worker(name, processor, {
        // Recorded on every job it takes (job.processedBy): which process ran it.
        name: `${os.hostname()}:${process.pid}`,
        connection: this.connection.duplicate(),
        prefix: REDIS_PREFIX,
        concurrency: config.workerConcurrency,
        lockDuration: config.jobLockMs,
        stalledInterval: config.stalledIntervalMs,
        maxStalledCount: 2,
      });
      worker.on('failed', (job, err) => this.log.warn({ queue: name, jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'job failed'));
      worker.on('error', (err) => this.log.error({ queue: name, err: err.message }, 'worker error'));
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
    this.heartbeat = new WorkerHeartbeat(this.connection, config.heartbeatMs, { queues: [...this.queues], concurrency: config.workerConcurrency });
    this.heartbeat.start();
    this.log.info({ queues: this.queues, concurrency: config.workerConcurrency, sharpThreads: threads }, 'worker ready');
  }

  /** Passport needs MediaPipe (WASM, ~0.4 s to load); imported lazily so other queues start fast. */
  private async loadPassportProcessor(ctx: ProcessorContext): Promise<Processor | null> {
    if (!this.queues.includes(QUEUE_NAMES.passport)) return null;
    const mod = await import('./processors/passport.processor.js');
    return guarded(mod.passportProcessor(ctx)) as Processor;
  }

  /** SIGTERM: stop taking work, let active jobs finish, then close workers → Redis → catalog. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.log.info('worker shutting down: finishing active jobs');
      await this.heartbeat?.stop();
      await Promise.all(this.workers.map((w) => w.close()));
      await this.connection?.quit().catch(() => undefined);
      await this.catalog?.close().catch(() => undefined);
      this.log.info('worker stopped');
    })();
    return this.closing;
  }
}
