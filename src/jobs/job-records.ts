// Durable records of queued jobs that were answered 202 (async requests). The private
// redis-server fsyncs its append-only file once a second (appendfsync always cost 40-60 % of
// upload throughput: scripts/bench-redis-fsync.ts), which survives a SIGKILL of every process
// but not a power cut. So before a 202 the front door also stores the job under `_jobs/` with a
// durable storage write; the next start adds again every recorded job that Redis no longer has
// (replayJobRecords). When the job has run, the worker writes its outcome into the record
// (durably, before BullMQ marks the job finished), so GET /jobs/{id} answers with the real state
// and body for the whole retention even when Redis lost the job; records past it are removed.
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import { readIfPresent, type Storage } from '../storage/storage.js';
import type { Redis } from 'ioredis';
import { ALL_QUEUES, type QueueName } from './job-contract.js';
import { openQueue } from './queues.js';

export const JOB_RECORDS_PREFIX = '_jobs/';

/** What a finished job answered: its result, or BullMQ's failedReason of its final failure. */
export type RecordedOutcome = { ok: true; result: unknown; finishedOn: number } | { ok: false; reason: string; finishedOn: number };

export interface JobRecord {
  queue: QueueName;
  jobId: string;
  data: unknown;
  priority?: number;
  outcome?: RecordedOutcome;
}

/** How long a finished job answers GET /jobs/{id}: as long as BullMQ keeps completed jobs. */
export const OUTCOME_RETENTION_MS = 3600_000;

/** Where the record of a job lives (job ids may hold any character: the name is their hash). */
export function jobRecordKey(queue: QueueName, jobId: string): string {
  return `${JOB_RECORDS_PREFIX}${queue}/${createHash('sha256').update(jobId).digest('hex').slice(0, 40)}.json`;
}

/** Stores the record durably (fsync'd before it resolves); call before adding the job. */
export async function writeJobRecord(storage: Storage, record: JobRecord): Promise<string> {
  const key = jobRecordKey(record.queue, record.jobId);
  await storage.put(key, Buffer.from(JSON.stringify(record)), { contentType: 'application/json', durable: true });
  return key;
}

/** The record of a job (null when there is none or it cannot be read). */
export async function readJobRecord(storage: Storage, queue: QueueName, jobId: string): Promise<JobRecord | null> {
  return parseRecord(await readIfPresent(storage, jobRecordKey(queue, jobId)));
}

function parseRecord(bytes: Buffer | null): JobRecord | null {
  if (!bytes) return null;
  try {
    const record = JSON.parse(String(bytes)) as JobRecord;
    return record && typeof record.jobId === 'string' && ALL_QUEUES.includes(record.queue) ? record : null;
  } catch {
    return null; // a torn record of a request that was never answered 202
  }
}

/** Worker side: the job has run; its outcome is kept with its record (durably) for the retention. */
export async function recordJobOutcome(storage: Storage, key: string, outcome: RecordedOutcome): Promise<void> {
  const record = parseRecord(await readIfPresent(storage, key));
  if (!record) return;
  await storage.put(key, Buffer.from(JSON.stringify({ ...record, outcome })), { contentType: 'application/json', durable: true });
}

const expired = (record: JobRecord, now: number) => record.outcome !== undefined && now - record.outcome.finishedOn > OUTCOME_RETENTION_MS;

/** Removes records whose outcome is past the retention; returns how many. */
export async function sweepJobRecords(storage: Storage, now = Date.now()): Promise<number> {
  let removed = 0;
  let cursor: string | undefined;
  do {
    const page = await storage.list(JOB_RECORDS_PREFIX, { limit: 1000, cursor });
    for (const { key } of page.items) {
      const record = parseRecord(await readIfPresent(storage, key));
      if (record && expired(record, now)) {
        await storage.delete(key);
        removed++;
      }
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return removed;
}

export interface ReplayReport {
  /** Records whose job Redis no longer had: added again. */
  requeued: string[];
  /** Records of finished jobs (outcomes past the retention removed). */
  finished: number;
  /** Records whose job is still queued or running. */
  pending: number;
  unreadable: string[];
}

const FINISHED = new Set(['completed', 'failed']);

/**
 * At start-up (`npm start` before its reconcile, and every worker process): every recorded job is
 * queued, running or added again. Safe to run concurrently: an add with an existing job id is a no-op.
 */
export async function replayJobRecords(storage: Storage, connection: Redis): Promise<ReplayReport> {
  const opened = new Map<QueueName, Queue>();
  const queueFor = (name: QueueName) => opened.get(name) ?? opened.set(name, openQueue(name, connection)).get(name)!;
  try {
    return await replayWith(storage, queueFor);
  } finally {
    await Promise.all([...opened.values()].map((q) => q.close()));
  }
}

async function replayWith(storage: Storage, queues: (name: QueueName) => Queue): Promise<ReplayReport> {
  const report: ReplayReport = { requeued: [], finished: 0, pending: 0, unreadable: [] };
  let cursor: string | undefined;
  do {
    const page = await storage.list(JOB_RECORDS_PREFIX, { limit: 1000, cursor });
    for (const { key } of page.items) {
      const record = parseRecord(await readIfPresent(storage, key));
      if (!record) {
        report.unreadable.push(key);
        continue;
      }
      if (record.outcome) {
        if (expired(record, Date.now())) await storage.delete(key);
        report.finished++;
        continue;
      }
      const queue = queues(record.queue);
      const state = await queue.getJobState(record.jobId);
      if (FINISHED.has(state)) {
        // Finished while its outcome was not recorded (the worker stopped in between): kept from Redis now.
        const job = await queue.getJob(record.jobId);
        const finishedOn = job?.finishedOn ?? Date.now();
        await recordJobOutcome(storage, key, state === 'completed' ? { ok: true, result: job?.returnvalue, finishedOn } : { ok: false, reason: job?.failedReason ?? 'failed', finishedOn });
        report.finished++;
      } else if (state === 'unknown') {
        await queue.add(record.queue, record.data, { jobId: record.jobId, priority: record.priority });
        report.requeued.push(`${record.queue}/${record.jobId}`);
      } else {
        report.pending++;
      }
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return report;
}
