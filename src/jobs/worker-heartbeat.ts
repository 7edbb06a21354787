// Worker liveness for /health: each worker process refreshes a Redis key with an expiry.
// (Redis key expiry is fine here; only the catalog avoids relying on TTLs.)
import os from 'node:os';
import type { Redis } from 'ioredis';
import { readExpiringRecords } from './expiring-records.js';
import { REDIS_PREFIX } from './queue-names.js';

const KEY_PREFIX = `${REDIS_PREFIX}:workers:`;

export interface WorkerBeat {
  id: string;
  pid: number;
  host: string;
  queues: string[];
  concurrency: number;
  rssBytes: number;
  startedAt: string;
}

export class WorkerHeartbeat {
  private timer: NodeJS.Timeout | null = null;
  readonly id = `${os.hostname()}:${process.pid}`;
  private readonly startedAt = new Date().toISOString();

  constructor(
    private readonly redis: Redis,
    private readonly intervalMs: number,
    private readonly info: { queues: string[]; concurrency: number },
  ) {}

  /** Resolves once the first beat is written (or failed), so "ready" implies "visible to /health". */
  async start(): Promise<void> {
    const beat = () => {
      const value: WorkerBeat = {
        id: this.id,
        pid: process.pid,
        host: os.hostname(),
        queues: this.info.queues,
        concurrency: this.info.concurrency,
        rssBytes: process.memoryUsage.rss(),
        startedAt: this.startedAt,
      };
      return this.redis.set(KEY_PREFIX + this.id, JSON.stringify(value), 'PX', this.intervalMs * 3).then(
        () => undefined,
        () => undefined,
      );
    };
    this.timer = setInterval(() => void beat(), this.intervalMs);
    this.timer.unref();
    await beat();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.redis.del(KEY_PREFIX + this.id).catch(() => undefined);
  }
}

export async function liveWorkers(redis: Redis): Promise<WorkerBeat[]> {
  return (await readExpiringRecords(redis, KEY_PREFIX)).map((v) => JSON.parse(v) as WorkerBeat);
}
