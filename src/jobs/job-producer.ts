// The front door's side of the queues: enqueue a job and await its result with a deadline.
import { Queue, QueueEvents, type JobsOptions } from 'bullmq';
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

export class JobProducer {
  readonly queues: Record<QueueName, Queue>;
  private readonly events: Record<QueueName, QueueEvents>;
  /** QueueEvents block on a duplicate of the client they are given and leave the original to us. */
  private readonly eventConnections: Redis[] = [];

  constructor(private readonly options: JobProducerOptions) {
    this.queues = {} as Record<QueueName, Queue>;
    this.events = {} as Record<QueueName, QueueEvents>;
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
    const job = await this.enqueue(name, data, opts);
    return this.wait(name, job.id as string, opts.timeoutMs);
  }

  async enqueue<N extends QueueName>(name: N, data: JobTypes[N]['data'], opts: RunOptions = {}) {
    const queue = this.queues[name];
    await this.assertCapacity(name, opts.priority);
    const jobOpts: JobsOptions = { jobId: opts.jobId, priority: opts.priority };
    let job = await queue.add(name, data, jobOpts);
    // A single-flight id may point at an old failed job: clear it and try once more.
    if (opts.jobId && (await job.isFailed())) {
      await job.remove().catch(() => undefined);
      job = await queue.add(name, data, jobOpts);
    }
    return job;
  }

  async wait<N extends QueueName>(name: N, jobId: string, timeoutMs = this.options.jobTimeoutMs): Promise<JobTypes[N]['result']> {
    const job = await this.queues[name].getJob(jobId);
    if (!job) throw new ServiceError('not_found', `Job ${jobId} not found`);
    try {
      return (await job.waitUntilFinished(this.events[name], timeoutMs)) as JobTypes[N]['result'];
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (message.includes('timed out before finishing')) {
        throw new ServiceError('timeout', `Job ${jobId} (${name}) did not finish within ${timeoutMs} ms; it may still complete`);
      }
      throw decodeFailure(message, jobId);
    }
  }

  /**
   * Back-pressure: refuse new work at once while the queue ahead of it is already deep.
   * Interactive jobs (no priority) run before prioritized bulk jobs, so only interactive jobs
   * count against an interactive caller; bulk callers count everything.
   */
  private async assertCapacity(name: QueueName, priority?: number): Promise<void> {
    const counts = await this.queues[name].getJobCounts('waiting', 'prioritized');
    const waiting = (counts.waiting ?? 0) + (priority ? (counts.prioritized ?? 0) : 0);
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

  async close(): Promise<void> {
    await Promise.all(ALL_QUEUES.map((n) => this.events[n].close()));
    await Promise.all(ALL_QUEUES.map((n) => this.queues[n].close()));
    // Without this they would keep reconnecting (and logging) after Redis is gone.
    await Promise.all(this.eventConnections.map((c) => c.quit().catch(() => c.disconnect())));
  }
}
