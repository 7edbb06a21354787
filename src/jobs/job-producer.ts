// The front door's side of the queues: enqueue a job and await its result with a deadline.
import { Queue, QueueEvents, type Job, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { ServiceError } from '../errors.js';
import { decodeFailure } from './job-failure.js';
import type { JobTypes } from './job-types.js';
import { ALL_QUEUES, REDIS_PREFIX, type QueueName } from './queue-names.js';
import { createBlockingConnection } from './redis-connection.js';

export interface RunOptions {
  /** Same id = same work: concurrent identical requests share one job (single-flight). */
  jobId?: string;
  /**
   * Unset for interactive callers: BullMQ runs jobs without a priority before any prioritized
   * job, so bulk work (priority ≥ 1) never delays a waiting caller.
   */
  priority?: number;
  timeoutMs?: number;
}

export interface JobProducerOptions {
  redisUrl: string;
  /** Shared queue connection (enableOfflineQueue: false so calls fail fast without Redis). */
  connection: Redis;
  jobTimeoutMs: number;
  /** Waiting jobs above which synchronous callers get 503 + Retry-After at once. */
  maxWaiting: number;
}

export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 4,
  backoff: { type: 'exponential', delay: 300 },
  removeOnComplete: { age: 3600, count: 2000 },
  removeOnFail: { age: 24 * 3600, count: 5000 },
};

/** How long a waiting caller tolerates a lost Redis connection (reconnects take well under this). */
export const REDIS_LOSS_GRACE_MS = 2000;

const CAPACITY_REFRESH_MS = 100;

/** Waiting-job counts of one queue as last read, plus this front door's adds since. */
class QueueCounts {
  private readonly readAt = Date.now();
  constructor(
    public waiting: number,
    public prioritized: number,
  ) {}

  stale(): boolean {
    return Date.now() - this.readAt >= CAPACITY_REFRESH_MS;
  }

  added(priority?: number): void {
    if (priority) this.prioritized++;
    else this.waiting++;
  }
}

export class JobProducer {
  readonly queues: Record<QueueName, Queue>;
  private readonly events: Record<QueueName, QueueEvents>;
  /** QueueEvents block on a duplicate of the client they are given and leave the original to us. */
  private readonly eventConnections: Redis[] = [];
  /** Since when the shared connection has been down (null while it is up). */
  private redisDownSince: number | null = null;
  private redisLossTimer: NodeJS.Timeout | undefined;
  /** Callers waiting on a job: failed with 503 when Redis stays away past the grace period. */
  private readonly lossWaiters = new Set<() => void>();
  private readonly capacity = new Map<QueueName, QueueCounts>();

  constructor(private readonly options: JobProducerOptions) {
    this.queues = {} as Record<QueueName, Queue>;
    this.events = {} as Record<QueueName, QueueEvents>;
    options.connection.on('close', () => this.onRedisDown());
    options.connection.on('ready', () => this.onRedisUp());
    for (const name of ALL_QUEUES) {
      this.queues[name] = new Queue(name, { connection: options.connection, prefix: REDIS_PREFIX, defaultJobOptions: DEFAULT_JOB_OPTIONS });
      this.events[name] = new QueueEvents(name, {
        connection: this.eventConnection(options.redisUrl),
        prefix: REDIS_PREFIX,
      });
      // QueueEvents reconnects by itself; errors are logged by the connection owner.
      this.events[name].on('error', () => undefined);
      this.queues[name].on('error', () => undefined);
      // Every request waiting on a job adds listeners (N concurrent identical requests share one
      // single-flight job), so their number follows the load: not a leak, no warning wanted.
      this.events[name].setMaxListeners(0);
      this.queues[name].setMaxListeners(0);
    }
  }

  async ready(): Promise<void> {
    await Promise.all(ALL_QUEUES.map((n) => this.events[n].waitUntilReady()));
  }

  /** Adds a job and waits for its result; bad-input failures come back as the worker's ServiceError. */
  async run<N extends QueueName>(name: N, data: JobTypes[N]['data'], opts: RunOptions = {}): Promise<JobTypes[N]['result']> {
    const enqueuedAt = Date.now();
    const job = await this.add(name, data, opts);
    try {
      return await this.waitFor(name, job, opts.timeoutMs);
    } catch (err) {
      // A single-flight id may name an old failed job (add() then returns that one): clear it and
      // run once more. Checked only on failure, so a successful run costs no extra round trip.
      if (!opts.jobId || !(err instanceof ServiceError) || err.kind === 'timeout' || err.kind === 'unavailable') throw err;
      const stale = await this.queues[name].getJob(opts.jobId);
      if (!stale || !stale.finishedOn || stale.finishedOn >= enqueuedAt || !(await stale.isFailed())) throw err;
      await stale.remove().catch(() => undefined);
      return this.waitFor(name, await this.add(name, data, opts), opts.timeoutMs);
    }
  }

  /** Adds a job without waiting for it (async callers poll GET /jobs/{id}). */
  async enqueue<N extends QueueName>(name: N, data: JobTypes[N]['data'], opts: RunOptions = {}) {
    let job = await this.add(name, data, opts);
    // A single-flight id may point at an old failed job: clear it and try once more.
    if (opts.jobId && (await job.isFailed())) {
      await job.remove().catch(() => undefined);
      job = await this.add(name, data, opts);
    }
    return job;
  }

  private async add<N extends QueueName>(name: N, data: JobTypes[N]['data'], opts: RunOptions) {
    await this.assertCapacity(name, opts.priority);
    const job = await this.queues[name].add(name, data, { jobId: opts.jobId, priority: opts.priority });
    this.capacity.get(name)?.added(opts.priority);
    return job;
  }

  async wait<N extends QueueName>(name: N, jobId: string, timeoutMs = this.options.jobTimeoutMs): Promise<JobTypes[N]['result']> {
    const job = await this.queues[name].getJob(jobId);
    if (!job) throw new ServiceError('not_found', `Job ${jobId} not found`);
    return this.waitFor(name, job, timeoutMs);
  }

  private async waitFor<N extends QueueName>(name: N, job: Job, timeoutMs = this.options.jobTimeoutMs): Promise<JobTypes[N]['result']> {
    const jobId = job.id as string;
    // Without Redis the result can never arrive: answer 503 soon instead of 504 at the deadline.
    let fail: () => void = () => undefined;
    const lost = new Promise<never>((_, reject) => {
      fail = () => reject(new ServiceError('unavailable', `Lost the connection to Redis while waiting for job ${jobId} (${name}); it may still complete`, { retryAfterSeconds: 5 }));
    });
    if (this.redisDownSince !== null && Date.now() - this.redisDownSince >= REDIS_LOSS_GRACE_MS) fail();
    else this.lossWaiters.add(fail);
    try {
      return (await Promise.race([job.waitUntilFinished(this.events[name], timeoutMs), lost])) as JobTypes[N]['result'];
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      const message = err instanceof Error ? err.message : String(err);
      if (message.includes('timed out before finishing')) {
        throw new ServiceError('timeout', `Job ${jobId} (${name}) did not finish within ${timeoutMs} ms; it may still complete`);
      }
      throw decodeFailure(message, jobId);
    } finally {
      this.lossWaiters.delete(fail);
    }
  }

  private onRedisDown(): void {
    if (this.redisDownSince !== null) return;
    this.redisDownSince = Date.now();
    this.redisLossTimer = setTimeout(() => {
      for (const fail of this.lossWaiters) fail();
    }, REDIS_LOSS_GRACE_MS);
    this.redisLossTimer.unref();
  }

  private onRedisUp(): void {
    this.redisDownSince = null;
    clearTimeout(this.redisLossTimer);
  }

  /**
   * Back-pressure: refuse new work at once while the queue ahead of it is already deep.
   * Interactive jobs (no priority) run before prioritized bulk jobs, so only interactive jobs
   * count against an interactive caller; bulk callers count everything. The counts are read at
   * most every CAPACITY_REFRESH_MS (plus this front door's own adds since): a bound that is a
   * few jobs late is still a bound, and a cache miss then costs no extra round trip.
   */
  private async assertCapacity(name: QueueName, priority?: number): Promise<void> {
    let counts = this.capacity.get(name);
    if (!counts || counts.stale()) {
      const read = await this.queues[name].getJobCounts('waiting', 'prioritized');
      counts = new QueueCounts(read.waiting ?? 0, read.prioritized ?? 0);
      this.capacity.set(name, counts);
    }
    const waiting = counts.waiting + (priority ? counts.prioritized : 0);
    if (waiting >= this.options.maxWaiting) {
      throw new ServiceError('unavailable', `The ${name} queue is full (${waiting} waiting); retry shortly`, { retryAfterSeconds: 5 });
    }
  }

  private eventConnection(redisUrl: string): Redis {
    const connection = createBlockingConnection(redisUrl);
    connection.on('error', () => undefined);
    this.eventConnections.push(connection);
    return connection;
  }

  /**
   * Closes queue events and queues. BullMQ's close waits for Redis to answer, so while Redis is
   * away (or when it goes away meanwhile) the connections are dropped instead: shutdown never hangs.
   */
  async close(): Promise<void> {
    const connection = this.options.connection;
    const graceful = (async () => {
      await Promise.all(ALL_QUEUES.map((n) => this.events[n].close()));
      await Promise.all(ALL_QUEUES.map((n) => this.queues[n].close()));
    })().then(
      () => 'closed' as const,
      () => 'closed' as const,
    );
    let onClose: () => void = () => undefined;
    const lost = new Promise<'lost'>((resolve) => {
      onClose = () => resolve('lost');
      if (connection.status !== 'ready') resolve('lost');
      else connection.once('close', onClose);
    });
    const outcome = await Promise.race([graceful, lost]);
    connection.off('close', onClose);
    // Without this they would keep reconnecting (and logging) after Redis is gone.
    if (outcome === 'closed') await Promise.all(this.eventConnections.map((c) => c.quit().catch(() => c.disconnect())));
    else for (const c of this.eventConnections) c.disconnect();
  }
}
