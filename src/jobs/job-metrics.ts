// Job metrics of worker processes, pushed through Redis (no port per worker).
//
// Choice: each worker process keeps its own prom-client registry (job durations and outcomes,
// labelled with its worker id) and writes a JSON snapshot of it to Redis every heartbeat period,
// with an expiry of three periods, like its heartbeat. The front door's GET /metrics reads every
// snapshot at scrape time and renders them with prom-client's AggregatorRegistry. So Prometheus
// scrapes one target (the front door) however many workers run on however many machines, and
// workers need no listening port (nothing to expose on a PaaS worker dyno). A worker that stops
// or dies disappears after three periods; its series stop, as a vanished target's would, and
// because they carry a `worker` label no other series jumps (sum by queue in queries).
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { REDIS_PREFIX } from './job-contract.js';
import { readExpiringRecords } from './worker-heartbeat.js';

const KEY_PREFIX = `${REDIS_PREFIX}:metrics:worker:`;

/** Seconds; jobs range from a few ms (small transforms) to seconds (passport, big AVIF). */
export const JOB_DURATION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class JobMetricsPublisher {
  readonly registry = new Registry();
  private readonly duration: Histogram<'queue' | 'status' | 'worker'>;
  private readonly processed: Counter<'queue' | 'status' | 'worker'>;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly workerId: string,
    private readonly intervalMs: number,
  ) {
    this.duration = new Histogram({
      name: 'pictor_job_duration_seconds',
      help: 'Time a worker spent on one job attempt (processedOn to finishedOn)',
      labelNames: ['queue', 'status', 'worker'],
      buckets: JOB_DURATION_BUCKETS,
      registers: [this.registry],
    });
    this.processed = new Counter({
      name: 'pictor_jobs_processed_total',
      help: 'Job attempts finished by workers, by outcome (failed attempts may be retried)',
      labelNames: ['queue', 'status', 'worker'],
      registers: [this.registry],
    });
  }

  /** Observes every attempt a BullMQ worker finishes. */
  attach(worker: Worker, queue: string): void {
    const observe = (job: Job | undefined, status: 'completed' | 'failed') => {
      if (!job) return;
      const end = job.finishedOn ?? Date.now();
      const start = job.processedOn ?? end;
      const labels = { queue, status, worker: this.workerId };
      this.duration.observe(labels, Math.max(0, end - start) / 1000);
      this.processed.inc(labels);
    };
    worker.on('completed', (job) => observe(job, 'completed'));
    worker.on('failed', (job) => observe(job, 'failed'));
  }

  start(): void {
    const publish = () => {
      this.publish().catch(() => undefined);
    };
    publish();
    this.timer = setInterval(publish, this.intervalMs);
    this.timer.unref();
  }

  async publish(): Promise<void> {
    const snapshot = await this.registry.getMetricsAsJSON();
    await this.redis.set(KEY_PREFIX + this.workerId, JSON.stringify(snapshot), 'PX', this.intervalMs * 3);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.redis.del(KEY_PREFIX + this.workerId).catch(() => undefined);
  }
}

/** The front door's side: every live worker's snapshot as one Prometheus text block. */
export async function workerMetricsText(redis: Redis): Promise<string> {
  const snapshots: object[] = [];
  for (const value of await readExpiringRecords(redis, KEY_PREFIX)) {
    try {
      const parsed: unknown = JSON.parse(value);
      if (Array.isArray(parsed)) snapshots.push(parsed);
    } catch {
      /* a torn or foreign value: skip it */
    }
  }
  if (snapshots.length === 0) return '';
  return AggregatorRegistry.aggregate(snapshots).metrics();
}
