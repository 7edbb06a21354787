// Worker liveness for /health: each worker process refreshes a Redis key with an expiry.
// (Redis key expiry is fine here; only the catalog avoids relying on TTLs.)
import os from 'node:os';
import type { Redis } from 'ioredis';
import { REDIS_PREFIX } from './job-contract.js';

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

/**
 * Values of every key under `prefix` that has not expired (SCAN, then one MGET): the per-process
 * records kept in Redis with an expiry (heartbeats here, metric snapshots in job-metrics.ts).
 */
export async function readExpiringRecords(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 200);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  if (keys.length === 0) return [];
  return (await redis.mget(keys)).filter((v): v is string => v !== null);
}
