// Per-process records kept in Redis with an expiry (heartbeats, metric snapshots): read them all.
import type { Redis } from 'ioredis';

/** Values of every key under `prefix` that has not expired (SCAN, then one MGET). */
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
