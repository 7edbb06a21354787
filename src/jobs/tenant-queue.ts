// Per-tenant accounting of waiting jobs, so one tenant's burst neither starves the others nor
// fills the queue for everyone. Each tenant has, per queue, a Redis set of its jobs that wait
// (added by the front door with the job, removed by the worker when the job starts). Its size
// at add time is the job's place among the tenant's own waiting jobs:
//  - place 0 (the tenant has nothing waiting): the job goes in as asked (an interactive job in
//    BullMQ's plain wait list, which workers take before any prioritized job);
//  - place n > 0: priority n (interactive) or BULK_PRIORITY + n (bulk). BullMQ takes lower
//    priorities first, FIFO within one, so tenants' jobs interleave: a tenant that just arrived
//    waits behind at most one job of every other tenant, not behind their bursts. A tenant's
//    places do not go down while it has jobs waiting, so its own jobs keep their order;
//  - place ≥ TENANT_MAX_WAITING: refused (429 + Retry-After).
import type { Redis } from 'ioredis';
import { REDIS_PREFIX } from './job-contract.js';

/** Bulk jobs' priority base: above any interactive place, below BullMQ's maximum (2^21). */
export const BULK_PRIORITY = 1_000_000;

/** A set untouched this long is dropped (jobs lost before they started never leave it otherwise). */
const SET_TTL_SECONDS = 3600;

export function tenantWaitingKey(queue: string, tenant: string): string {
  return `${REDIS_PREFIX}:tenant-waiting:${queue}:${tenant}`;
}

/** The tenant a job's data names (every job of a user carries `userId`). */
export function tenantOfJobData(data: unknown): string | undefined {
  const userId = (data as { userId?: unknown } | null)?.userId;
  return typeof userId === 'string' && userId !== '' ? userId : undefined;
}

// KEYS[1]: the tenant's waiting set; KEYS[2]: the place given to its last job. ARGV: job id, cap,
// TTL. Returns the job's place, -1 when the id is already waiting (a single-flight join: counted
// once), or -2 when the tenant is at its cap. While the tenant has jobs waiting its places never
// go down (so its own jobs keep their order, FIFO within one priority); with none waiting it
// starts again at 0.
const ADMIT = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return -1 end
local n = redis.call('SCARD', KEYS[1])
if n >= tonumber(ARGV[2]) then return -2 end
local place = 0
if n > 0 then place = math.max(n, tonumber(redis.call('GET', KEYS[2]) or '0')) end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
redis.call('SET', KEYS[2], place, 'EX', tonumber(ARGV[3]))
return place`;

export type TenantAdmission = { kind: 'new'; place: number } | { kind: 'joined' } | { kind: 'full' };

export async function admitTenantJob(redis: Redis, queue: string, tenant: string, jobId: string, max: number): Promise<TenantAdmission> {
  const key = tenantWaitingKey(queue, tenant);
  const res = Number(await redis.eval(ADMIT, 2, key, `${key}:last-place`, jobId, String(max), String(SET_TTL_SECONDS)));
  if (res === -1) return { kind: 'joined' };
  if (res === -2) return { kind: 'full' };
  return { kind: 'new', place: res };
}

/** The BullMQ priority of a job at `place` among its tenant's waiting jobs (see above). */
export function tenantPriority(place: number, bulk: boolean): number | undefined {
  if (bulk) return BULK_PRIORITY + Math.min(place, BULK_PRIORITY - 1);
  return place === 0 ? undefined : Math.min(place, BULK_PRIORITY - 1);
}

/** The job no longer waits (it started, or was never added). */
export async function releaseTenantJob(redis: Redis, queue: string, tenant: string, jobId: string): Promise<void> {
  await redis.srem(tenantWaitingKey(queue, tenant), jobId);
}
