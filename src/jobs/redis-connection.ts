// One Redis connection for queues (fail fast while Redis is away), duplicated with
// maxRetriesPerRequest: null for workers and the job-outcome subscriber, as BullMQ and ioredis require for blocking calls.
import { Redis, type RedisOptions } from 'ioredis';

export function createQueueConnection(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    // Commands issued while disconnected reject at once: callers get a fast 503, not a hang.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
    ...extra,
  });
}

export function createBlockingConnection(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    connectTimeout: 3000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    ...extra,
  });
}
