// Shared checks of the fault tests: what is stored, what is catalogued, what is counted, and
// whether the queues have settled. Everything reads the real backends (storage, catalog, Redis).
import type { ChildProcess } from 'node:child_process';
import type { Catalog } from '../../src/catalog/catalog.js';
import { readUsage } from '../../src/catalog/usage.js';
import type { JobProducer } from '../../src/jobs/job-producer.js';
import { ALL_QUEUES } from '../../src/jobs/job-contract.js';
import type { Storage } from '../../src/storage/storage.js';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Short lock/stall settings (tests only): a killed worker's job is taken over within ~4 s. */
export const SHORT_LOCKS = { JOB_LOCK_MS: '3000', JOB_STALLED_INTERVAL_MS: '1000' };

export async function allKeys(storage: Storage, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await storage.list(prefix, { limit: 1000, cursor });
    keys.push(...page.items.map((i) => i.key));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return keys;
}

export interface StoredInventory {
  originals: string[];
  derivatives: string[];
  staging: string[];
}

/** Storage keys of one user (originals, derivatives) plus every `_staging/` leftover. */
export async function inventory(storage: Storage, userId?: string): Promise<StoredInventory> {
  const keys = await allKeys(storage, '');
  const own = keys.filter((k) => !k.startsWith('_') && (!userId || k.startsWith(`${userId}/`)));
  return {
    originals: own.filter((k) => !k.includes('&v=')),
    derivatives: own.filter((k) => k.includes('&v=')),
    staging: keys.filter((k) => k.startsWith('_staging/')),
  };
}

/** Polls until `check` returns a truthy value (returned) or the deadline passes (throws). */
export async function waitFor<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
}

/** Resolves when no queue has waiting, prioritized, delayed or active jobs. */
export async function queuesSettled(jobs: JobProducer, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    'the queues to settle',
    async () => {
      for (const name of ALL_QUEUES) {
        const c = await jobs.queues[name].getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'waiting-children');
        if (Object.values(c).some((n) => n > 0)) return false;
      }
      return true;
    },
    timeoutMs,
    200,
  );
}

export async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await work;
  return { value, ms: Math.round(performance.now() - start) };
}

/**
 * The invariant every fault must preserve for one user: catalog rows and stored originals are the
 * same set, every derivative row has its object, usage counters equal what is really stored, and
 * no staged upload is left behind. Derivative rows and counts are written by the workers in
 * batches shortly after their jobs answer, so the check is repeated for up to `settleMs`.
 */
export async function assertConsistent(catalog: Catalog, storage: Storage, userId: string, settleMs = 5000): Promise<{ images: number; bytes: number; derivatives: number }> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    try {
      return await checkConsistent(catalog, storage, userId);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(50);
    }
  }
}

async function checkConsistent(catalog: Catalog, storage: Storage, userId: string): Promise<{ images: number; bytes: number; derivatives: number }> {
  const images = await catalog.images.find({ userId }).lean();
  const derivativeRows = await catalog.derivatives.find({ userId }).lean();
  const stored = await inventory(storage, userId);
  const problems: string[] = [];
  const rowKeys = new Set(images.map((i) => i.storageKey));
  for (const key of stored.originals) if (!rowKeys.has(key)) problems.push(`stored original without catalog row: ${key}`);
  for (const key of rowKeys) if (!stored.originals.includes(key)) problems.push(`catalog row without stored original: ${key}`);
  const storedDerivatives = new Set(stored.derivatives);
  for (const d of derivativeRows) if (!storedDerivatives.has(d._id)) problems.push(`derivative row without object: ${d._id}`);
  if (stored.derivatives.length !== derivativeRows.length) problems.push(`${stored.derivatives.length} derivative objects but ${derivativeRows.length} rows`);
  if (stored.staging.length > 0) problems.push(`${stored.staging.length} staged upload(s) left: ${stored.staging.slice(0, 3).join(', ')}`);
  for (const i of images) if (i.pendingUsage) problems.push(`usage still pending on ${i.publicId}`);
  const bytes = images.reduce((sum, i) => sum + i.bytes, 0);
  const usage = await readUsage(catalog, userId);
  // Derivative bytes count toward storage (docs/limits.md).
  const derivativeBytes = derivativeRows.reduce((sum, d) => sum + d.bytes, 0);
  if (usage.storageBytes !== bytes + derivativeBytes) problems.push(`usage says ${usage.storageBytes} bytes, catalog holds ${bytes} + ${derivativeBytes} of derivatives`);
  if (usage.derivativeBytes !== derivativeBytes) problems.push(`usage says ${usage.derivativeBytes} derivative bytes, catalog holds ${derivativeBytes}`);
  if (usage.imageCount !== images.length) problems.push(`usage says ${usage.imageCount} images, catalog holds ${images.length}`);
  if (usage.derivativeCount !== derivativeRows.length) problems.push(`usage says ${usage.derivativeCount} derivatives, catalog holds ${derivativeRows.length}`);
  if (problems.length > 0) throw new Error(`inconsistent state for ${userId}:\n  ${problems.join('\n  ')}`);
  return { images: images.length, bytes, derivatives: derivativeRows.length };
}

export function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
  });
}

export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = exited(child);
  child.kill(signal);
  await done;
}

/** One line for the figures the fault tests measure (visible in the mocha output). */
export function figure(text: string): void {
  process.stdout.write(`      [figure] ${text}\n`);
}
