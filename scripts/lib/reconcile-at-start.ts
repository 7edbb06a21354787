// The reconcile of `npm start` and `npm run catalog -- reconcile` (docs/durability.md, "Reconcile at start-up").
import { reconcileCatalogWithStorage } from '../../src/catalog/reconcile.js';
import type { Catalog } from '../../src/catalog/catalog.js';
import type { Config } from '../../src/config.js';
import { QUEUE_NAMES, uploadJobId } from '../../src/jobs/job-contract.js';
import { replayJobRecords } from '../../src/jobs/job-records.js';
import { createQueueConnection, openQueue } from '../../src/jobs/queues.js';
import { createStorage } from '../../src/storage/create-storage.js';

const PENDING_JOB_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/**
 * Replays the job records Redis lost, then reconciles catalog and storage (any catalog: the
 * embedded one or MongoDB through MONGO_URL — the same driver calls). Prints what it adopted,
 * quarantined and dropped; nothing is deleted but unexplained derivatives and staged uploads no
 * job will finish. Run it while nothing else writes: `npm start` before it starts the front
 * door and the workers, `npm run catalog -- reconcile` before a deployment's processes start.
 */
export async function reconcileAtStart(catalog: Catalog, config: Config, say: (line: string) => void): Promise<void> {
  const connection = createQueueConnection(config.redisUrl);
  const queue = openQueue(QUEUE_NAMES.uploadFinalize, connection);
  try {
    const storage = createStorage(config);
    // First the jobs answered 202 that Redis lost: their staged uploads then count as pending.
    const replay = await replayJobRecords(storage, connection);
    if (replay.requeued.length || replay.unreadable.length) {
      say(`jobs      ${replay.requeued.length} job(s) answered 202 added again from their records (Redis had lost them)` + (replay.unreadable.length ? `; ${replay.unreadable.length} unreadable record(s) left in _jobs/` : ''));
    }
    const started = performance.now();
    const report = await reconcileCatalogWithStorage(catalog, storage, {
      uploadJobPending: async (uploadId) => PENDING_JOB_STATES.has(await queue.getJobState(uploadJobId(uploadId))),
    });
    say(
      `reconcile ${report.imagesChecked} catalog entries and ${report.objectsChecked} stored objects in ${Math.round(performance.now() - started)} ms: ` +
        `${report.adopted.length} adopted, ${report.quarantined.length} quarantined, ${report.dropped.length} dropped (entries without their original, kept in lostImages), ` +
        `${report.derivativesRemoved} derivatives of old versions removed, ${report.derivativesRecorded} re-recorded, ${report.stagingKept} staged uploads kept for their jobs, ${report.stagingCleared} cleared` +
        (report.usageRecounted.length ? `, usage recounted for ${report.usageRecounted.length} user(s)` : ''),
    );
    const shown = 20;
    for (const key of report.adopted.slice(0, shown)) say(`reconcile   adopted     ${key}`);
    for (const q of report.quarantined.slice(0, shown)) say(`reconcile   quarantined ${q.key} -> ${q.to}: ${q.reason}`);
    for (const d of report.dropped.slice(0, shown)) say(`reconcile   dropped     ${d.storageKey} (image ${d.imageId}): original missing`);
    for (const f of report.failed) say(`reconcile   FAILED      ${f.key}: ${f.error} (left in place; tried again at the next start)`);
    const more = Math.max(0, report.adopted.length - shown) + Math.max(0, report.quarantined.length - shown) + Math.max(0, report.dropped.length - shown);
    if (more) say(`reconcile   ... and ${more} more`);
  } finally {
    await queue.close();
    connection.disconnect();
  }
}
