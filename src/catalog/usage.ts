// Usage counters. Each change is one atomic update of one document; `opId` makes a change
// idempotent: the filter `ops: {$ne: opId}` and the `$push` of opId happen in the same update.
// Through the driver's collection: these run on every miss's batch, bandwidth flush and quota
// read, where mongoose's casting cost more than the round trip.
import type { mongo } from 'mongoose';
import type { Catalog } from './catalog.js';
import { NEW_COUNTERS, type UsageDoc } from './models/usage.model.js';

const OPS_REMEMBERED = 500;

export type UsageDelta = Partial<Pick<UsageDoc, 'storageBytes' | 'imageCount' | 'derivativeCount' | 'derivativeBytes' | 'bandwidthBytes' | 'transformations'>>;

export function currentPeriod(now = new Date()): string {
  return now.toISOString().slice(0, 7);
}

function docId(userId: string, period: string): string {
  return period === 'total' ? userId : `${userId}:${period}`;
}

async function apply(catalog: Catalog, userId: string, period: string, delta: UsageDelta, opId?: string): Promise<boolean> {
  const inc = nonZero(delta);
  if (Object.keys(inc).length === 0) return false;
  if (!opId) {
    const { filter, update, upsert } = incrementOp(userId, period, inc);
    await catalog.driver.usage.updateOne(filter, update, { upsert });
    return true;
  }
  return applyOnce(catalog, userId, period, inc, opId);
}

function nonZero(delta: UsageDelta): Record<string, number> {
  return Object.fromEntries(Object.entries(delta).filter(([, v]) => v !== 0 && v !== undefined));
}

/** An increment without an op id: an upsert that starts a missing document as the schema would. */
function incrementOp(userId: string, period: string, inc: Record<string, number>): mongo.UpdateOneModel<UsageDoc> {
  const untouched = Object.fromEntries(Object.entries(NEW_COUNTERS).filter(([field]) => !(field in inc)));
  return { filter: { _id: docId(userId, period) }, update: { $inc: inc, $setOnInsert: { userId, period, ...untouched, ops: [] } }, upsert: true };
}

export interface UsageChange {
  userId: string;
  /** 'total' (storage counters) or 'month' (this month's: bandwidth, transformations). */
  counters: 'total' | 'month';
  delta: UsageDelta;
}

/**
 * Several increments without op ids in one round trip, applied in the order given (an ordered
 * bulk write: a failed one stops those after it).
 */
export async function addUsageInOrder(catalog: Catalog, changes: UsageChange[], now = new Date()): Promise<void> {
  const ops = changes
    .map((c) => ({ c, inc: nonZero(c.delta) }))
    .filter(({ inc }) => Object.keys(inc).length > 0)
    .map(({ c, inc }) => ({ updateOne: incrementOp(c.userId, c.counters === 'total' ? 'total' : currentPeriod(now), inc) }));
  if (ops.length > 0) await catalog.driver.usage.bulkWrite(ops, { ordered: true });
}

/**
 * An increment applied once per op id (driver: the hot path). The conditional update never
 * upserts (that could duplicate the document). It usually finds the document and is the only
 * round trip; when it matches nothing, the document is created if missing and the update tried
 * once more (the op may also simply have been applied already).
 */
async function applyOnce(catalog: Catalog, userId: string, period: string, inc: Record<string, number>, opId: string): Promise<boolean> {
  const id = docId(userId, period);
  const conditional = () =>
    catalog.driver.usage.updateOne({ _id: id, ops: { $ne: opId } }, { $inc: inc, $push: { ops: { $each: [opId], $slice: -OPS_REMEMBERED } } });
  const first = await conditional();
  if (first.modifiedCount === 1) return true;
  await ensureCounters(catalog, userId, period);
  const res = await conditional();
  return res.modifiedCount === 1;
}

/** Creates the counters document when missing, with every field the schema defaults (driver: no defaults of its own). */
async function ensureCounters(catalog: Catalog, userId: string, period: string): Promise<void> {
  await catalog.driver.usage.updateOne(
    { _id: docId(userId, period) },
    { $setOnInsert: { userId, period, ...NEW_COUNTERS, ops: [] } },
    { upsert: true },
  );
}

/** Storage-side counters (bytes stored, image and derivative counts). */
export const addStorageUsage = (catalog: Catalog, userId: string, delta: UsageDelta, opId?: string) =>
  apply(catalog, userId, 'total', delta, opId);

/** Start of the month after `now` (UTC): when the monthly counters start afresh. */
export function nextPeriodStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/** Monthly counters (bandwidth, transformations). */
export const addMonthlyUsage = (catalog: Catalog, userId: string, delta: UsageDelta, opId?: string) =>
  apply(catalog, userId, currentPeriod(), delta, opId);

/**
 * Holds `bytes` of storage for an upload in progress, only if the total stays within `quotaBytes`.
 * Check and increment are one conditional update, so concurrent uploads cannot pass the quota
 * together (a read-then-check can). Keyed by uploadId: a re-run of the job finds its own hold.
 * The hold is counted in storageBytes until settleUpload or releaseStorageHold (after the
 * upload's own delta is applied, or when it fails). Returns false when the quota would be exceeded.
 */
export async function holdStorage(catalog: Catalog, userId: string, uploadId: string, bytes: number, quotaBytes: number): Promise<boolean> {
  if (bytes <= 0) return true;
  const id = docId(userId, 'total');
  const field = `holds.${uploadId}`;
  // Usually the counters document exists and this is the only round trip.
  const hold = () =>
    catalog.driver.usage.updateOne(
      { _id: id, [field]: { $exists: false }, storageBytes: { $lte: quotaBytes - bytes } } as mongo.Filter<UsageDoc>,
      { $inc: { storageBytes: bytes }, $set: { [field]: bytes } },
    );
  if ((await hold()).modifiedCount === 1) return true;
  // The document may be missing (a user's first upload; or created meanwhile by another one).
  await ensureCounters(catalog, userId, 'total');
  if ((await hold()).modifiedCount === 1) return true;
  return (await catalog.driver.usage.findOne({ _id: id, [field]: { $exists: true } } as mongo.Filter<UsageDoc>, { projection: { _id: 1 } })) !== null;
}

/**
 * Applies an upload's usage delta (op `opId`) and releases its hold of `heldBytes` in one
 * conditional update: the common end of an upload, one round trip instead of four. Matches
 * nothing (returns false) when the op was applied already, or the hold is not exactly
 * `heldBytes` (0: none); the caller then takes the step-by-step path (addStorageUsage,
 * releaseStorageHold), which handles those cases.
 */
export async function settleUpload(catalog: Catalog, userId: string, uploadId: string, opId: string, delta: UsageDelta, heldBytes: number): Promise<boolean> {
  const field = `holds.${uploadId}`;
  const inc: Record<string, number> = { ...delta };
  inc.storageBytes = (inc.storageBytes ?? 0) - heldBytes;
  const res = await catalog.driver.usage.updateOne(
    { _id: docId(userId, 'total'), ops: { $ne: opId }, [field]: heldBytes > 0 ? heldBytes : { $exists: false } } as mongo.Filter<UsageDoc>,
    { $inc: inc, $push: { ops: { $each: [opId], $slice: -OPS_REMEMBERED } }, ...(heldBytes > 0 ? { $unset: { [field]: 1 } } : {}) },
  );
  return res.modifiedCount === 1;
}

/** Releases the hold of an upload (idempotent; nothing when there is none). */
export async function releaseStorageHold(catalog: Catalog, userId: string, uploadId: string): Promise<void> {
  const id = docId(userId, 'total');
  const field = `holds.${uploadId}`;
  const doc = await catalog.usage.findOne({ _id: id, [field]: { $exists: true } }, { holds: 1 }).lean();
  const held = doc?.holds?.[uploadId];
  if (typeof held !== 'number') return;
  await catalog.usage.updateOne({ _id: id, [field]: held }, { $inc: { storageBytes: -held }, $unset: { [field]: 1 } });
}

export async function readUsage(catalog: Catalog, userId: string) {
  const period = currentPeriod();
  // One read of both documents (driver: no casting; nothing is written).
  const ids = [docId(userId, 'total'), docId(userId, period)];
  const docs = await catalog.driver.usage.find({ _id: { $in: ids } }).toArray();
  const total = docs.find((d) => d._id === ids[0]);
  const month = docs.find((d) => d._id === ids[1]);
  return {
    storageBytes: total?.storageBytes ?? 0,
    imageCount: total?.imageCount ?? 0,
    derivativeCount: total?.derivativeCount ?? 0,
    derivativeBytes: total?.derivativeBytes ?? 0,
    bandwidthBytes: month?.bandwidthBytes ?? 0,
    transformations: month?.transformations ?? 0,
    period,
  };
}
