// Durable records of queued jobs that were answered 202 (async requests). The private
// redis-server fsyncs its append-only file once a second (appendfsync always cost 40-60 % of
// upload throughput: scripts/bench-redis-fsync.ts), which survives a SIGKILL of every process
// but not a power cut. So before a 202 the front door also stores the job under `_jobs/` with a
// durable storage write; the worker removes the record when the job has run, and the next start
// adds again every recorded job that Redis no longer has (replayJobRecords).
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import { readIfPresent, type Storage } from '../storage/storage.js';
import type { Redis } from 'ioredis';
import { ALL_QUEUES, type QueueName } from './job-contract.js';
import { openQueue } from './queues.js';

export const JOB_RECORDS_PREFIX = '_jobs/';

interface JobRecord {
  queue: QueueName;
  jobId: string;
  data: unknown;
  priority?: number;
}

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

export interface ReplayReport {
  /** Records whose job Redis no longer had: added again. */
  requeued: string[];
  /** Records whose job had finished (the worker stopped before removing them): removed. */
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
      const bytes = await readIfPresent(storage, key);
      let record: JobRecord;
      try {
        record = JSON.parse(String(bytes)) as JobRecord;
        if (!record || typeof record.jobId !== 'string' || typeof record.queue !== 'string') throw new Error('not a job record');
      } catch {
        report.unreadable.push(key); // a torn record of a request that was never answered 202
        continue;
      }
      if (!ALL_QUEUES.includes(record.queue)) {
        report.unreadable.push(key);
        continue;
      }
      const queue = queues(record.queue);
      const state = await queue.getJobState(record.jobId);
      if (FINISHED.has(state)) {
        await storage.delete(key);
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
