// One worker process: BullMQ workers for the queues it serves, sharing one catalog connection and
// one storage driver; each BullMQ worker gets its own blocking Redis connection, and the heartbeat
// uses a fail-fast one (so it can neither queue beats nor hang the shutdown while Redis is away).
import { Worker, type Processor } from 'bullmq';
import os from 'node:os';
import sharp from 'sharp';
import type { Logger } from 'pino';
import { Catalog } from '../src/catalog/catalog.js';
import { announceImageChange } from '../src/catalog/image-changes.js';
import { libvipsThreadsFor, type Config } from '../src/config.js';
import { closeDetectorThread } from '../src/vision/mediapipe/detector-thread.js';
import { canDecodeJpegAtShrink } from '../src/imaging/jpeg-shrink-decoder.js';
import { DecodedSourceCache } from './decoded-source-cache.js';
import { DerivativeLedger } from './derivative-ledger.js';
import { LibvipsThreads } from './libvips-threads.js';
import { ALL_QUEUES, QUEUE_NAMES, REDIS_PREFIX, publishJobOutcome, type QueueName, type RecordedJobData } from '../src/jobs/job-contract.js';
import { createBlockingConnection, createQueueConnection, isFinalFailure } from '../src/jobs/queues.js';
import { recordJobOutcome, replayJobRecords, sweepJobRecords, type RecordedOutcome } from '../src/jobs/job-records.js';
import { JobMetricsPublisher } from '../src/jobs/job-metrics.js';
import { WorkerHeartbeat } from '../src/jobs/worker-heartbeat.js';
import { releaseTenantJob, tenantOfJobData } from '../src/jobs/tenant-queue.js';
import { releaseAsyncUploadSlot } from '../src/jobs/async-upload-slots.js';
import { createStorage } from '../src/storage/create-storage.js';
import type { ProcessorContext } from './processors/processor-context.js';
import { guarded } from './processors/run-processor.js';
import { analyzeProcessor } from './processors/analyze.processor.js';
import { transformProcessor } from './processors/transform.processor.js';
import { uploadFinalizeProcessor } from './processors/upload-finalize.processor.js';
import type { Redis } from 'ioredis';

export class WorkerProcess {
  private workers: Worker[] = [];
  private heartbeat: WorkerHeartbeat | null = null;
  private metrics: JobMetricsPublisher | null = null;
  private connection: Redis | null = null;
  private workerConnections: Redis[] = [];
  private catalog: Catalog | null = null;
  private ledger: DerivativeLedger | null = null;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
    private readonly queues: readonly QueueName[] = ALL_QUEUES,
  ) {}

  private decodedSourceCache(): DecodedSourceCache | undefined {
    if (this.config.decodedSourceCacheMb === 0) return undefined;
    if (!canDecodeJpegAtShrink()) {
      this.log.warn('libvips C API not found in this process: decoded-source cache off');
      return undefined;
    }
    return new DecodedSourceCache(this.config.decodedSourceCacheMb * 1024 * 1024, this.config.maxInputPixels);
  }

  async start(): Promise<void> {
    const { config } = this;
    // libvips threads are set per pipeline from the jobs running at its start (see LibvipsThreads).
    const threads = new LibvipsThreads(config);
    sharp.concurrency(libvipsThreadsFor(config, 1));
    sharp.cache(false); // each job reads a different original; the cache only grows RSS
    this.catalog = await Catalog.connect(config.mongoUrl);
    const storage = createStorage(config);
    this.connection = createQueueConnection(config.redisUrl);
    this.connection.on('error', (err) => this.log.debug({ err: err.message }, 'heartbeat redis connection error'));
    const connection = this.connection;
    this.ledger = new DerivativeLedger(this.catalog, storage, this.log);
    const ctx: ProcessorContext = {
      config,
      catalog: this.catalog,
      storage,
      log: this.log,
      announceImageChange: (change) => announceImageChange(connection, change),
      libvips: threads,
      derivatives: this.ledger,
      decodedSources: this.decodedSourceCache(),
    };
    const processors: Partial<Record<QueueName, Processor>> = {
      [QUEUE_NAMES.uploadFinalize]: guarded(uploadFinalizeProcessor(ctx)) as Processor,
      [QUEUE_NAMES.transform]: guarded(transformProcessor(ctx)) as Processor,
      [QUEUE_NAMES.analyze]: guarded(analyzeProcessor(ctx)) as Processor,
    };
    // Job metrics reach the front door's /metrics through Redis (see src/jobs/job-metrics.ts).
    this.metrics = new JobMetricsPublisher(this.connection, `${os.hostname()}:${process.pid}`, config.heartbeatMs);
    const passport = await this.loadPassportProcessor(ctx);
    if (passport) processors[QUEUE_NAMES.passport] = passport;
    for (const name of this.queues) {
      const processor = processors[name];
      if (!processor) continue;
      const connection = createBlockingConnection(config.redisUrl);
      // BullMQ reports connection errors as worker 'error' events (logged below) while it runs.
      connection.on('error', () => undefined);
      this.workerConnections.push(connection);
      // Waiting callers learn the outcome from one message (src/jobs/job-contract.ts); a lost one
      // is made up for by the caller looking at the job's state. A result is announced as soon as
      // the processor returns, before BullMQ's moveToFinished round trip: the work is done and
      // stored, and the job's state follows within a moment (~1 ms off every caller's wait).
      const announce = (outcome: Parameters<typeof publishJobOutcome>[1]) =>
        publishJobOutcome(this.connection!, outcome).catch((err: unknown) => this.log.debug({ err: String(err) }, 'job outcome not published'));
      // An async job's durable record (src/jobs/job-records.ts) keeps its outcome once it has run,
      // written before BullMQ marks it finished; a crash before that only runs the (idempotent) job again.
      const recordOutcome = (job: { data?: RecordedJobData } | undefined, outcome: RecordedOutcome) =>
        job?.data?.jobRecordKey ? recordJobOutcome(storage, job.data.jobRecordKey, outcome).catch((err: unknown) => this.log.warn({ err: String(err) }, 'job outcome not recorded')) : undefined;
      // The third parameter makes BullMQ hand over the job's abort signal (see lockRenewalFailed below).
      const announcing: Processor = async (job, token, signal) => {
        // The job no longer waits: its tenant's next job moves up (src/jobs/tenant-queue.ts).
        const tenant = tenantOfJobData(job.data);
        if (tenant && job.id) void releaseTenantJob(this.connection!, name, tenant, job.id).catch(() => undefined);
        const result: unknown = await processor(job, token);
        // Another worker owns the job now and answers for it: this run's result is dropped.
        if (signal?.aborted) throw new Error(`job ${job.id} (${name}): ${String(signal.reason)}; result dropped`);
        void announce({ queue: name, id: job.id!, ok: true, result });
        await recordOutcome(job, { ok: true, result, finishedOn: Date.now() });
        return result;
      };
      const worker = new Worker(name, announcing, {
        // Recorded on every job it takes (job.processedBy): which process ran it.
        name: `${os.hostname()}:${process.pid}`,
        connection,
        prefix: REDIS_PREFIX,
        concurrency: config.workerConcurrency,
        lockDuration: config.jobLockMs,
        stalledInterval: config.stalledIntervalMs,
        maxStalledCount: 2,
      });
      worker.on('failed', (job, err) => {
        this.log.warn({ queue: name, jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'job failed');
        // Only final failures: a failure that will be retried has no outcome yet.
        if (job?.id && isFinalFailure(job)) {
          void announce({ queue: name, id: job.id, ok: false, reason: job.failedReason ?? err.message });
          void recordOutcome(job, { ok: false, reason: job.failedReason ?? err.message, finishedOn: job.finishedOn ?? Date.now() });
        }
      });
      worker.on('error', (err) => this.log.error({ queue: name, err: err.message }, 'worker error'));
      // Redis says the lock of a running job is no longer ours (it expired while Redis was out of
      // reach, and the stalled check gave the job to another worker): stop it as soon as we know.
      worker.on('lockRenewalFailed', (jobIds: string[]) => {
        this.log.warn({ queue: name, jobIds }, 'lock lost: another worker runs these jobs now; stopping them');
        for (const id of jobIds) worker.cancelJob(id, 'lock lost to another worker');
      });
      if (name === QUEUE_NAMES.uploadFinalize) {
        // An async upload in flight frees its user's slot when it ends (src/jobs/async-upload-slots.ts).
        const release = (job: { data: { userId: string; uploadId: string } } | undefined) => {
          if (job) void releaseAsyncUploadSlot(this.connection!, job.data.userId, job.data.uploadId).catch(() => undefined);
        };
        worker.on('completed', (job) => release(job));
        worker.on('failed', (job) => {
          if (job?.finishedOn) release(job);
        });
      }
      this.metrics.attach(worker, name);
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
    // Jobs answered 202 that Redis lost (a power cut within its last fsync second) are added again.
    await replayJobRecords(storage, connection).then(
      (replay) => replay.requeued.length > 0 && this.log.warn({ requeued: replay.requeued }, 'queued jobs lost by Redis added again from their records'),
      (err: unknown) => this.log.warn({ err: String(err) }, 'job records not replayed'),
    );
    // Outcomes past their retention go (also without a restart).
    setInterval(() => void sweepJobRecords(storage).catch((err: unknown) => this.log.warn({ err: String(err) }, 'job records not swept')), 10 * 60_000).unref();
    this.heartbeat = new WorkerHeartbeat(this.connection, config.heartbeatMs, { queues: [...this.queues], concurrency: config.workerConcurrency });
    await this.heartbeat.start();
    this.metrics.start();
    this.log.info({ queues: this.queues, concurrency: config.workerConcurrency, sharpThreads: config.sharpThreads || 'cores shared by running jobs' }, 'worker ready');
  }

  /** Passport needs MediaPipe (WASM, ~0.4 s to load); imported lazily so other queues start fast. */
  private async loadPassportProcessor(ctx: ProcessorContext): Promise<Processor | null> {
    if (!this.queues.includes(QUEUE_NAMES.passport)) return null;
    const mod = await import('./processors/passport.processor.js');
    const passport = await import('../src/passport/index.js');
    // Temporary input copies of passport workers killed during a decode.
    const swept = await passport.sweepStaleTempCopies();
    if (swept > 0) this.log.info({ files: swept }, 'removed temporary copies left by killed passport workers');
    const unwritable = await passport.unwritableTempDir();
    if (unwritable) this.log.warn({ dir: unwritable }, 'temporary directory not writable: large JPEG passport inputs are decoded at full size (slower); set TMPDIR');
    const started = performance.now();
    // Models load once per process, before the first job (not during a caller's wait).
    await passport.warmUp();
    this.closePassportModels = passport.closeModels;
    this.closePassportThreads = passport.closeEdgeThread;
    this.log.info({ ms: Math.round(performance.now() - started) }, 'passport models loaded');
    return guarded(mod.passportProcessor(ctx)) as Processor;
  }

  /** Closes MediaPipe tasks on shutdown (their telemetry timer would keep the process alive). */
  private closePassportModels: (() => Promise<void>) | null = null;
  private closePassportThreads: (() => Promise<void>) | null = null;

  /**
   * SIGTERM: stop taking work, let active jobs finish, then close workers → Redis → catalog.
   * With Redis away a job can be neither completed nor handed back (its lock lapses and BullMQ
   * retries it as stalled), so waiting would only hang the shutdown: close at once instead.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const connection = this.connection;
      const redisUp = connection?.status === 'ready';
      this.log.info({ redisUp }, redisUp ? 'worker shutting down: finishing active jobs' : 'worker shutting down: Redis is unreachable, active jobs are left to be retried');
      const redisLost = new Promise<void>((resolve) => connection?.once('close', () => resolve()));
      // Stop fetching at once (active jobs go on), then withdraw the heartbeat.
      const closed = Promise.all(this.workers.map((w) => w.close(!redisUp))).catch((err: unknown) => this.log.error({ err }, 'closing workers failed'));
      await this.heartbeat?.stop();
      await this.metrics?.stop();
      await Promise.race([closed, redisLost]);
      for (const c of this.workerConnections) c.disconnect();
      if (connection?.status === 'ready') await connection.quit().catch(() => undefined);
      else connection?.disconnect();
      // Jobs are done: their derivative records go to the catalog before it closes.
      await this.ledger?.close().catch((err: unknown) => this.log.error({ err }, 'closing the derivative ledger failed'));
      await this.catalog?.close().catch(() => undefined);
      await this.closePassportModels?.().catch(() => undefined);
      await closeDetectorThread().catch(() => undefined);
      await this.closePassportThreads?.().catch(() => undefined);
      this.log.info('worker stopped');
    })();
    return this.closing;
  }
}
