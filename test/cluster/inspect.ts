// Runs on the data host after a scenario: compares what callers were acknowledged with what the
// catalog, storage and usage hold, and how many jobs are still queued. Prints one JSON line.
// Usage (env: the service's MONGO_URL, REDIS_URL, STORAGE_DRIVER=gcs …): node inspect.js <ackFile> <userId>
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Catalog } from '../../src/catalog/catalog.js';
import { readUsage } from '../../src/catalog/usage.js';
import { loadConfig } from '../../src/config.js';
import { ALL_QUEUES } from '../../src/jobs/job-contract.js';
import { createQueueConnection, openQueue } from '../../src/jobs/queues.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { assertConsistent, inventory } from '../faults/fault-helpers.js';
import type { Acknowledgements, Inspection } from './load-report.js';

const [ackFile, userId] = process.argv.slice(2);
const ack = JSON.parse(fs.readFileSync(ackFile, 'utf8')) as Acknowledgements;
const config = loadConfig(process.env);
const catalog = await Catalog.connect(config.mongoUrl);
const storage = createStorage(config);
const connection = createQueueConnection(config.redisUrl);

const images = await catalog.images.find({ userId }).lean();
const rowsByPublicId = new Map<string, number>();
for (const image of images) rowsByPublicId.set(image.publicId, (rowsByPublicId.get(image.publicId) ?? 0) + 1);
const lostUploads: string[] = [];
for (const upload of ack.uploads) {
  const row = images.find((i) => String(i._id) === upload.imageId);
  if (!row) {
    lostUploads.push(`${upload.publicId}: no catalog row`);
    continue;
  }
  const bytes = await storage.read(row.storageKey).catch(() => null);
  if (!bytes) lostUploads.push(`${upload.publicId}: original ${row.storageKey} not stored`);
  else if (createHash('sha256').update(bytes).digest('hex') !== upload.sha256) lostUploads.push(`${upload.publicId}: stored bytes differ`);
}
const stored = await inventory(storage, userId);
const derivativeObjects = new Set(stored.derivatives);
const lostDerivatives = ack.derivatives.filter((url) => !derivativeObjects.has(decodeURIComponent(url.slice(config.cdnUrl.length + 1))));
const derivativeRows = await catalog.derivatives.countDocuments({ userId });
const usage = await readUsage(catalog, userId);
const derivativeBytes = (await catalog.derivatives.find({ userId }, { bytes: 1 }).lean()).reduce((sum, d) => sum + d.bytes, 0);
const originalBytes = images.reduce((sum, i) => sum + i.bytes, 0);
const waiting: Record<string, number> = {};
const restarted: Inspection['restarted'] = [];
const released: Inspection['released'] = [];
for (const name of ALL_QUEUES) {
  const queue = openQueue(name, connection);
  const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'waiting-children');
  waiting[name] = Object.values(counts).reduce((a, b) => a + b, 0);
  // Jobs that ran again after their worker vanished, and when their last run began.
  for (const job of await queue.getJobs(['completed'], 0, 2000)) {
    if (job?.stalledCounter && job.processedOn) restarted.push({ id: job.id!, processedOn: job.processedOn });
  }
  // When the stalled check gave such a job back to the queue: BullMQ's own event stream, whose
  // entry ids begin with the Redis server's time in ms.
  for (const [entryId, fields] of await connection.xrange(queue.keys.events, '-', '+')) {
    const field = (name: string) => fields[fields.indexOf(name) + 1];
    if (field('event') === 'stalled') released.push({ id: field('jobId'), at: Number(entryId.split('-')[0]) });
  }
  await queue.close();
}
// Reported on their own (and judged by the runner): derivative objects without rows, and the
// derivative counters' drift, which is what a worker killed inside a batch of derivative records
// leaves (see scenario options in run.ts).
const OWN_FIGURES = [/derivative objects but \d+ rows/, /^\s*usage says \d+ (bytes|derivative bytes|derivatives), catalog holds/];
let consistency = 'consistent';
try {
  await assertConsistent(catalog, storage, userId, 15_000);
} catch (err) {
  const [first, ...problems] = (err as Error).message.split('\n');
  const left = problems.filter((p) => !OWN_FIGURES.some((figure) => figure.test(p)));
  if (left.length) consistency = [first, ...left].join('\n');
}
const report: Inspection = {
  catalogImages: images.length,
  duplicateImageRows: [...rowsByPublicId.values()].reduce((sum, n) => sum + n - 1, 0),
  lostUploads,
  lostDerivatives,
  derivativeRows,
  derivativeObjects: stored.derivatives.length,
  usageDrift: {
    images: usage.imageCount - images.length,
    derivatives: usage.derivativeCount - derivativeRows,
    derivativeBytes: usage.derivativeBytes - derivativeBytes,
    originalBytes: usage.storageBytes - usage.derivativeBytes - originalBytes,
    transformations: usage.transformations - derivativeRows,
  },
  jobsLeft: Object.values(waiting).reduce((a, b) => a + b, 0),
  restarted,
  released,
  consistency,
};
process.stdout.write(JSON.stringify(report) + '\n');
await catalog.close();
connection.disconnect();
process.exit(0);
