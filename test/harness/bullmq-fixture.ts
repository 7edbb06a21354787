// A real redis-server with BullMQ objects on it, connected as the service connects them (one
// connection for queues; a blocking one of its own for each Worker and QueueEvents:
// src/jobs/queues.ts) and closed in the service's order: workers and event listeners,
// then queues, then connections, then the server.
import { Queue, QueueEvents, Worker, type Processor, type QueueOptions, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { createBlockingConnection, createQueueConnection } from '../../src/jobs/queues.js';
import { startRedisServer, type RedisServerHandle } from '../../scripts/lib/redis-server.js';

export class BullmqFixture {
  /** The queues' connection (also for reading Redis directly). */
  readonly connection: Redis;
  private readonly blocking: Redis[] = [];
  private readonly listeners: (Worker | QueueEvents)[] = [];
  private readonly queues: Queue[] = [];

  private constructor(
    readonly redis: RedisServerHandle,
    readonly prefix: string,
  ) {
    this.connection = createQueueConnection(redis.url);
  }

  static async start(prefix: string): Promise<BullmqFixture> {
    return new BullmqFixture(await startRedisServer(), prefix);
  }

  queue(name: string, options: Partial<QueueOptions> = {}): Queue {
    const queue = new Queue(name, { ...options, connection: this.connection, prefix: this.prefix });
    this.queues.push(queue);
    return queue;
  }

  /** QueueEvents for the queue, ready (its stream read has started). */
  async events(name: string): Promise<QueueEvents> {
    const events = new QueueEvents(name, { connection: this.blockingConnection(), prefix: this.prefix });
    this.listeners.push(events);
    await events.waitUntilReady();
    return events;
  }

  worker<D = unknown, R = unknown>(name: string, processor: Processor<D, R>, options: Partial<WorkerOptions> = {}): Worker<D, R> {
    const worker = new Worker<D, R>(name, processor, { ...options, connection: this.blockingConnection(), prefix: this.prefix });
    this.listeners.push(worker);
    return worker;
  }

  async stop(): Promise<void> {
    for (const l of this.listeners) await l.close();
    for (const q of this.queues) await q.close();
    for (const c of [this.connection, ...this.blocking]) c.disconnect();
    await this.redis.stop();
  }

  private blockingConnection(): Redis {
    const c = createBlockingConnection(this.redis.url);
    this.blocking.push(c);
    return c;
  }
}
