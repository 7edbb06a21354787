// The front door's side of the queues: enqueue a job and await its result with a deadline.
// Results arrive as one message per finished job on the job-outcomes channel (job-contract.ts);
// the job's own state is looked at when a caller joins an existing job and, as a safety net,
// while a caller has waited longer than OUTCOME_RECHECK_MS (a message lost to a reconnect).
import { randomUUID } from 'node:crypto';
import type { Job, JobType, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ServiceError } from '../errors.js';
import type { Storage } from '../storage/storage.js';
import { ALL_QUEUES, JOB_OUTCOMES_CHANNEL, decodeFailure, parseJobOutcome, type JobOutcome, type JobTypes, type QueueName, type RecordedJobData } from './job-contract.js';
import { jobRecordKey, writeJobRecord } from './job-records.js';
import { createBlockingConnection, hasFinished, openQueue } from './queues.js';
import { admitTenantJob, releaseTenantJob, tenantOfJobData, tenantPriority, type TenantAdmission } from './tenant-queue.js';

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
  /** Waiting jobs (all tenants) above which callers get 503 + Retry-After at once: a ceiling that protects Redis. */
  maxWaiting: number;
  /** Where enqueue() stores a durable record of each job before it is added (job-records.ts). */
  jobRecords?: Storage;
  /** Waiting jobs per tenant and queue (0 = no per-tenant accounting); see tenant-queue.ts. */
  tenantMaxWaiting?: number;
}

/** How long a waiting caller tolerates a lost Redis connection (reconnects take well under this). */
export const REDIS_LOSS_GRACE_MS = 2000;

const CAPACITY_REFRESH_MS = 100;
/** How often a caller still waiting looks at its job's state itself. */
const OUTCOME_RECHECK_MS = 2000;

interface Waiter {
  resolve(result: unknown): void;
  reject(err: unknown): void;
}

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

  added(): void {
    this.waiting++;
  }
}

export class JobProducer {
  /**
   * The BullMQ queues themselves, for Bull Board and tests. Other code goes through the methods
   * below (getJob, jobCounts, run, enqueue, wait), so what the front door does with a queue stays
   * in this class.
   */
  readonly queues: Record<QueueName, Queue>;
  /** Subscribed to the job-outcomes channel (a subscriber connection can do nothing else). */
  private readonly subscriber: Redis;
  private readonly subscribed: Promise<unknown>;
  /** Callers waiting per `<queue>:<job id>`. */
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** Since when the shared connection has been down (null while it is up). */
  private redisDownSince: number | null = null;
  private redisLossTimer: NodeJS.Timeout | undefined;
  /** Callers waiting on a job: failed with 503 when Redis stays away past the grace period. */
  private readonly lossWaiters = new Set<() => void>();
  private readonly capacity = new Map<QueueName, QueueCounts>();

  constructor(private readonly options: JobProducerOptions) {
    this.queues = {} as Record<QueueName, Queue>;
    options.connection.on('close', () => this.onRedisDown());
    options.connection.on('ready', () => this.onRedisUp());
    for (const name of ALL_QUEUES) {
      this.queues[name] = openQueue(name, options.connection);
      this.queues[name].on('error', () => undefined);
      this.queues[name].setMaxListeners(0);
    }
    this.subscriber = createBlockingConnection(options.redisUrl);
    // It reconnects and resubscribes by itself; errors are logged by the connection owner.
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== JOB_OUTCOMES_CHANNEL) return;
      const outcome = parseJobOutcome(message);
      if (outcome) this.settle(outcome);
    });
    this.subscribed = this.subscriber.subscribe(JOB_OUTCOMES_CHANNEL);
  }

  async ready(): Promise<void> {
    await this.subscribed;
  }

  /** Adds a job and waits for its result; bad-input failures come back as the worker's ServiceError. */
  async run<N extends QueueName>(name: N, data: JobTypes[N]['data'], opts: RunOptions = {}): Promise<JobTypes[N]['result']> {
    const enqueuedAt = Date.now();
    try {
      return await this.addAndWait(name, data, opts);
    } catch (err) {
      // A single-flight id may name an old failed job (add() then returns that one): clear it and
      // run once more. Checked only on failure, so a successful run costs no extra round trip.
      if (!opts.jobId || !(err instanceof ServiceError) || err.kind === 'timeout' || err.kind === 'unavailable') throw err;
      const stale = await this.queues[name].getJob(opts.jobId);
      if (!stale || !stale.finishedOn || stale.finishedOn >= enqueuedAt || !(await stale.isFailed())) throw err;
      await stale.remove().catch(() => undefined);
      return this.addAndWait(name, data, opts);
    }
  }

  /**
   * With a caller-chosen id the add may join an existing job, possibly one that finished before
   * this caller listened. The waiter is registered before any reply can arrive, and the job's
   * finishedOn is read in the same tick as the add (one HGET, answered with it): no extra round
   * trip after the add, and no Lua state scan of the queue's lists, per cache miss. (That round
   * trip cost ~5 % of miss throughput at 16 clients on 2 cores when removed outright; this
   * version measured within the run-to-run noise of that.)
   */
  private async addAndWait<N extends QueueName>(name: N, data: JobTypes[N]['data'], opts: RunOptions): Promise<JobTypes[N]['result']> {
    const added = this.add(name, data, opts);
    if (!opts.jobId) return this.waitFor(name, (await added).id as string, opts.timeoutMs, false);
    // An add that fails (back-pressure, Redis) ends the wait with its error.
    const addFailed = added.then(() => new Promise<never>(() => undefined));
    return this.waitFor(name, opts.jobId, opts.timeoutMs, true, addFailed);
  }

  /**
   * Adds a job without waiting for it (async callers poll GET /jobs/{id}). With `jobRecords`, a
   * durable record of the job is stored first, so a 202 survives Redis losing its last second
   * of writes (power cut): the next start adds recorded jobs Redis no longer has.
   */
  async enqueue<N extends QueueName>(name: N, data: JobTypes[N]['data'], opts: RunOptions = {}) {
    const records = this.options.jobRecords;
    if (records) {
      const jobId = opts.jobId ?? randomUUID();
      const recorded: RecordedJobData = { jobRecordKey: jobRecordKey(name, jobId) };
      data = { ...data, ...recorded } as JobTypes[N]['data'];
      opts = { ...opts, jobId };
      await writeJobRecord(records, { queue: name, jobId, data, priority: opts.priority });
    }
    try {
      let job = await this.add(name, data, opts);
      // A single-flight id may point at an old failed job: clear it and try once more.
      if (opts.jobId && (await job.isFailed())) {
        await job.remove().catch(() => undefined);
        job = await this.add(name, data, opts);
      }
      return job;
    } catch (err) {
      // Not queued: no record may bring it back.
      if (records && opts.jobId) await records.delete(jobRecordKey(name, opts.jobId)).catch(() => undefined);
      throw err;
    }
  }

  private async add<N extends QueueName>(name: N, data: JobTypes[N]['data'], opts: RunOptions) {
    await this.assertCapacity(name);
    const maxPerTenant = this.options.tenantMaxWaiting ?? 0;
    const tenant = maxPerTenant > 0 && opts.jobId ? tenantOfJobData(data) : undefined;
    let priority = opts.priority;
    let admission: TenantAdmission | null = null;
    if (tenant && opts.jobId) {
      admission = await admitTenantJob(this.options.connection, name, tenant, opts.jobId, maxPerTenant);
      if (admission.kind === 'full') {
        throw new ServiceError('rate_limited', `Too much work waiting for this account: ${maxPerTenant} ${name} jobs are queued already (TENANT_MAX_WAITING); retry shortly`, { retryAfterSeconds: 5 });
      }
      if (admission.kind === 'new') priority = tenantPriority(admission.place, opts.priority !== undefined);
    }
    try {
      const job = await this.queues[name].add(name, data, { jobId: opts.jobId, priority });
      this.capacity.get(name)?.added();
      return job;
    } catch (err) {
      if (tenant && opts.jobId && admission?.kind === 'new') await releaseTenantJob(this.options.connection, name, tenant, opts.jobId).catch(() => undefined);
      throw err;
    }
  }

  /** The job with this id, or undefined when there is none (or no longer). */
  async getJob<N extends QueueName>(name: N, jobId: string): Promise<Job<JobTypes[N]['data'], JobTypes[N]['result']> | undefined> {
    return (await this.queues[name].getJob(jobId)) as Job<JobTypes[N]['data'], JobTypes[N]['result']> | undefined;
  }

  /** How many jobs of the queue are in each of these states. */
  jobCounts(name: QueueName, ...states: JobType[]): Promise<Record<string, number>> {
    return this.queues[name].getJobCounts(...states);
  }

  async wait<N extends QueueName>(name: N, jobId: string, timeoutMs = this.options.jobTimeoutMs): Promise<JobTypes[N]['result']> {
    const job = await this.queues[name].getJob(jobId);
    if (!job) throw new ServiceError('not_found', `Job ${jobId} not found`);
    return this.waitFor(name, jobId, timeoutMs, true);
  }

  /**
   * Waits for the job's outcome message. `mayHaveFinished`: the job may have finished before this
   * caller listened (a joined or looked-up job), so its finishedOn is read once at the start.
   */
  private async waitFor<N extends QueueName>(
    name: N,
    jobId: string,
    timeoutMs = this.options.jobTimeoutMs,
    mayHaveFinished = false,
    abandon?: Promise<never>,
  ): Promise<JobTypes[N]['result']> {
    const key = `${name}:${jobId}`;
    let waiter: Waiter | undefined;
    const outcome = new Promise<unknown>((resolve, reject) => {
      waiter = { resolve, reject };
      const set = this.waiters.get(key) ?? new Set<Waiter>();
      set.add(waiter);
      this.waiters.set(key, set);
    });
    // Without Redis the result can never arrive: answer 503 soon instead of 504 at the deadline.
    let fail: () => void = () => undefined;
    const lost = new Promise<never>((_, reject) => {
      fail = () => reject(new ServiceError('unavailable', `Lost the connection to Redis while waiting for job ${jobId} (${name}); it may still complete`, { retryAfterSeconds: 5 }));
    });
    if (this.redisDownSince !== null && Date.now() - this.redisDownSince >= REDIS_LOSS_GRACE_MS) fail();
    else this.lossWaiters.add(fail);
    const deadline = setTimeout(() => {
      waiter!.reject(new ServiceError('timeout', `Job ${jobId} (${name}) did not finish within ${timeoutMs} ms; it may still complete`));
    }, timeoutMs);
    if (mayHaveFinished) void this.lookIfFinished(name, jobId);
    const recheck = setInterval(() => void this.lookAtJob(name, jobId), OUTCOME_RECHECK_MS);
    try {
      return (await Promise.race(abandon ? [outcome, lost, abandon] : [outcome, lost])) as JobTypes[N]['result'];
    } finally {
      clearTimeout(deadline);
      clearInterval(recheck);
      this.lossWaiters.delete(fail);
      const set = this.waiters.get(key);
      set?.delete(waiter!);
      if (set?.size === 0) this.waiters.delete(key);
    }
  }

  /** Resolves (or rejects) every caller waiting on a finished job. */
  private settle(outcome: JobOutcome): void {
    const key = `${outcome.queue}:${outcome.id}`;
    const set = this.waiters.get(key);
    if (!set) return;
    this.waiters.delete(key);
    for (const w of set) {
      if (outcome.ok) w.resolve(outcome.result);
      else w.reject(decodeFailure(outcome.reason, outcome.id));
    }
  }

  /** lookAtJob, only when the job's hash says it finished (one HGET instead of a state script). */
  private async lookIfFinished(name: QueueName, jobId: string): Promise<void> {
    try {
      // The queues' own connection: the HGET travels and is answered with the add.
      if (!(await hasFinished(this.options.connection, this.queues[name], jobId))) return;
    } catch {
      return; // Redis away: the loss handling answers the caller; otherwise the message or the recheck.
    }
    await this.lookAtJob(name, jobId);
  }

  /** Settles the job's waiters from its stored state when it has finished (errors: try later). */
  private async lookAtJob(name: QueueName, jobId: string): Promise<void> {
    if (!this.waiters.has(`${name}:${jobId}`)) return;
    try {
      const state = await this.queues[name].getJobState(jobId);
      if (state !== 'completed' && state !== 'failed') return;
      const job = await this.queues[name].getJob(jobId);
      if (!job) return;
      if (state === 'completed') this.settle({ queue: name, id: jobId, ok: true, result: job.returnvalue });
      else this.settle({ queue: name, id: jobId, ok: false, reason: job.failedReason });
    } catch {
      // Redis away: the loss handling answers the caller; otherwise the next look or the message.
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
   * Back-pressure, the global ceiling: refuse new work at once while the whole queue is deep
   * (fairness between tenants is tenant-queue.ts's; this protects Redis). The counts are read at
   * most every CAPACITY_REFRESH_MS (plus this front door's own adds since): a bound that is a
   * few jobs late is still a bound, and a cache miss then costs no extra round trip.
   */
  private async assertCapacity(name: QueueName): Promise<void> {
    let counts = this.capacity.get(name);
    if (!counts || counts.stale()) {
      const read = await this.queues[name].getJobCounts('waiting', 'prioritized');
      counts = new QueueCounts(read.waiting ?? 0, read.prioritized ?? 0);
      this.capacity.set(name, counts);
    }
    const waiting = counts.waiting + counts.prioritized;
    if (waiting >= this.options.maxWaiting) {
      throw new ServiceError('unavailable', `The ${name} queue is full (${waiting} waiting); retry shortly`, { retryAfterSeconds: 5 });
    }
  }

  /**
   * Closes the outcome subscription and the queues. BullMQ's close waits for Redis to answer, so
   * while Redis is away (or when it goes away meanwhile) the connections are dropped instead:
   * shutdown never hangs.
   */
  async close(): Promise<void> {
    const connection = this.options.connection;
    const graceful = (async () => {
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
    // Without this it would keep reconnecting (and logging) after Redis is gone.
    if (outcome === 'closed') await this.subscriber.quit().catch(() => this.subscriber.disconnect());
    else this.subscriber.disconnect();
  }
}
