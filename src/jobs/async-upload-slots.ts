// Per-user bounds on async uploads in flight (answered 202, not yet finalised by a worker): how
// many, and how many bytes they have staged. Kept in Redis so every front door shares them: a
// sorted set of slot ids (score = when taken) and a hash of their bytes. The front door takes a
// slot before the body is staged (sized by Content-Length or the upload limit), renames it to the
// upload id with the real size once received; the worker frees it when the job ends (done or
// failed for good). A slot older than SLOT_TTL_MS is dropped, so a lost release cannot pin a
// user's bound for ever.
import type { Redis } from 'ioredis';
import { REDIS_PREFIX } from './job-contract.js';

const SLOT_TTL_MS = 3600_000;

const keys = (userId: string): [string, string] => [`${REDIS_PREFIX}:async-uploads:${userId}`, `${REDIS_PREFIX}:async-upload-bytes:${userId}`];

// KEYS: slots (zset), bytes (hash). ARGV: slot id, bytes, now, max count, max bytes, TTL ms.
// Returns {1, count, bytes} when taken; {0, count, bytes} at the count cap; {-1, count, bytes} at the byte cap.
const TAKE = `
local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[3]) - tonumber(ARGV[6]))
for _, id in ipairs(stale) do redis.call('ZREM', KEYS[1], id); redis.call('HDEL', KEYS[2], id) end
local n = redis.call('ZCARD', KEYS[1])
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do total = total + tonumber(v) end
if n >= tonumber(ARGV[4]) then return {0, n, total} end
if total + tonumber(ARGV[2]) > tonumber(ARGV[5]) then return {-1, n, total} end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[6]); redis.call('PEXPIRE', KEYS[2], ARGV[6])
return {1, n + 1, total + tonumber(ARGV[2])}`;

// KEYS: slots, bytes. ARGV: old id, new id, bytes, now.
const RENAME = `
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1`;

export interface SlotRefusal {
  reason: 'count' | 'bytes';
  inFlight: number;
  stagedBytes: number;
}

export async function takeAsyncUploadSlot(
  redis: Redis,
  userId: string,
  slotId: string,
  bytes: number,
  limits: { maxCount: number; maxBytes: number },
): Promise<SlotRefusal | null> {
  const [slots, sizes] = keys(userId);
  const [status, inFlight, stagedBytes] = (await redis.eval(TAKE, 2, slots, sizes, slotId, String(bytes), String(Date.now()), String(limits.maxCount), String(limits.maxBytes), String(SLOT_TTL_MS))) as number[];
  if (status === 1) return null;
  return { reason: status === 0 ? 'count' : 'bytes', inFlight, stagedBytes };
}

/** The slot now belongs to the received upload (its id and real size). */
export async function renameAsyncUploadSlot(redis: Redis, userId: string, slotId: string, uploadId: string, bytes: number): Promise<void> {
  const [slots, sizes] = keys(userId);
  await redis.eval(RENAME, 2, slots, sizes, slotId, uploadId, String(bytes), String(Date.now()));
}

/** Frees a slot (by slot id or upload id); nothing when there is none (a synchronous upload). */
export async function releaseAsyncUploadSlot(redis: Redis, userId: string, id: string): Promise<void> {
  const [slots, sizes] = keys(userId);
  await redis.multi().zrem(slots, id).hdel(sizes, id).exec();
}
