// Catalog operations on images and derivatives. Each step is one atomic single-document update,
// ordered so that a job that runs twice (crash, stalled lock, retry) changes nothing the 2nd time.
// Access rule (docs/maintainers.md): a function uses mongoose models or the driver's collections
// (catalog.driver), never both; the driver serves the upload and derivative hot path, and each
// driver write sets every field the schema would (defaults, timestamps).
import { randomBytes, randomInt } from 'node:crypto';
import { Types, type mongo } from 'mongoose';
import type { Storage } from '../storage/storage.js';
import type { Catalog } from './catalog.js';
import type { DerivativeDoc, DerivativeOrigin } from './models/derivative.model.js';
import type { ImagePreview } from '../imaging/preview.js';
import type { ImageDoc } from './models/image.model.js';
import { addStorageUsage, addUsageInOrder, settleUpload, type UsageChange } from './usage.js';

export function baseImageKey(userId: string, publicId: string, extension: string): string {
  return `${userId}/images/${publicId}.${extension}`;
}

/** Prefix shared by every derivative of one stored original (any version). */
export function derivativePrefix(storageKey: string): string {
  return `${storageKey}&v=`;
}

/** The version of an image stored by an upload (part of its derivatives' keys). */
export function imageVersion(uploadId: string): string {
  return uploadId.replace(/[^A-Za-z0-9]/g, '').slice(-12);
}

let idCounter = randomInt(0, 0xffffff);

/**
 * A new imageId. Listings are newest first by _id, but a standard ObjectId orders only by the
 * second and then by a per-process random part, so images recorded by different worker processes
 * within one second come out in random order. This one keeps the ObjectId layout's leading
 * seconds and adds milliseconds: 4 bytes seconds, 2 bytes milliseconds, 3 bytes per-process
 * counter (order within a process and millisecond), 3 random bytes.
 */
export function newImageId(now = Date.now()): Types.ObjectId {
  const id = Buffer.alloc(12);
  id.writeUInt32BE(Math.floor(now / 1000), 0);
  id.writeUInt16BE(now % 1000, 4);
  idCounter = (idCounter + 1) & 0xffffff;
  id.writeUIntBE(idCounter, 6, 3);
  randomBytes(3).copy(id, 9);
  return new Types.ObjectId(id);
}

export interface RecordUploadInput {
  uploadId: string;
  userId: string;
  publicId: string;
  projectId: string | null;
  format: string;
  contentType: string;
  width: number;
  height: number;
  bytes: number;
  checksum: string;
  storageKey: string;
  /** The id a new image gets (generated when absent): the upload's original carries it in its metadata. */
  imageId?: string;
  /** Creation time of a new image (now when absent). */
  createdAt?: Date;
  /** Faces and placeholders of this version (null when they could not be computed). */
  preview?: ImagePreview | null;
}

export interface RecordUploadOutcome {
  image: ImageDoc;
  previous: ImageDoc | null;
  /** The usage delta is applied and the upload's hold released (false: release it yourself). */
  settled: boolean;
}

export interface RecordUploadOptions {
  /** The image as the caller just read it by (userId, publicId), saving a read (null: none). */
  existing?: ImageDoc | null;
  /** Storage this upload holds (holdStorage), released together with its usage delta. */
  heldBytes?: number;
}

/**
 * Upserts the image by (userId, publicId). The usage delta is written onto the image document in
 * the same update (`pendingUsage`) and applied with an op id, so a crash between the two steps is
 * finished by the retry and never counted twice. Writes are conditional on what was read, so a
 * stale `existing` only costs a re-read.
 */
export async function recordUpload(catalog: Catalog, input: RecordUploadInput, options: RecordUploadOptions = {}): Promise<RecordUploadOutcome> {
  let existing = options.existing !== undefined ? options.existing : await readImage(catalog, input);
  for (let attempt = 1; ; attempt++) {
    const outcome = await tryRecordUpload(catalog, input, existing, options.heldBytes ?? 0);
    if (outcome) return outcome;
    // Lost a race with another write of the same image: read it again and retry, a bounded number
    // of times (a plain error: the job is retried later with backoff).
    if (attempt >= RECORD_UPLOAD_ATTEMPTS) throw new Error(`Image ${input.userId}/${input.publicId} kept changing under upload ${input.uploadId} (${attempt} attempts)`);
    existing = await readImage(catalog, input);
  }
}

/** Conflicting writes of one image that recordUpload outlasts before giving up for now. */
const RECORD_UPLOAD_ATTEMPTS = 10;

function readImage(catalog: Catalog, input: RecordUploadInput): Promise<ImageDoc | null> {
  return findImage(catalog, input.userId, input.publicId);
}

/** The image `publicId` of `userId` (hot path: the upload worker, the front door's image cache), or null. */
export function findImage(catalog: Catalog, userId: string, publicId: string): Promise<ImageDoc | null> {
  return catalog.driver.images.findOne({ userId, publicId });
}

/** The image with this id (and owner, when given), or null (hot path: the front door's image cache). */
export function findImageById(catalog: Catalog, imageId: Types.ObjectId, userId?: string): Promise<ImageDoc | null> {
  return catalog.driver.images.findOne({ _id: imageId, ...(userId ? { userId } : {}) });
}

/** The image as recorded by this upload, or null (another upload's version, or none). */
export function findImageOfUpload(catalog: Catalog, userId: string, publicId: string, uploadId: string): Promise<ImageDoc | null> {
  return catalog.driver.images.findOne({ userId, publicId, uploadId });
}

/** One attempt of recordUpload against the image as read (`existing`); null when another write got there first. */
async function tryRecordUpload(catalog: Catalog, input: RecordUploadInput, existing: ImageDoc | null, heldBytes: number): Promise<RecordUploadOutcome | null> {
  if (existing && existing.uploadId === input.uploadId) {
    await applyPendingUsage(catalog, existing._id);
    return { image: existing, previous: null, settled: false };
  }
  const pendingUsage = {
    opId: `upload:${input.uploadId}`,
    storageBytes: input.bytes - (existing?.bytes ?? 0),
    imageCount: existing ? 0 : 1,
  };
  const { imageId, createdAt, ...fields } = input;
  const set = {
    projectId: fields.projectId ? new Types.ObjectId(fields.projectId) : (existing?.projectId ?? null),
    format: fields.format,
    contentType: fields.contentType,
    width: fields.width,
    height: fields.height,
    bytes: fields.bytes,
    checksum: fields.checksum,
    storageKey: fields.storageKey,
    version: imageVersion(fields.uploadId),
    uploadId: fields.uploadId,
    pendingUsage,
    preview: input.preview ?? null,
    // What was computed for the version replaced no longer holds (an object, so that analyze
    // jobs can set its fields one by one).
    analysis: {},
  };
  let image: ImageDoc | null;
  if (existing) {
    // Conditional on the version we read: a concurrent replacement makes us re-read and retry.
    image = await catalog.driver.images.findOneAndUpdate({ _id: existing._id, uploadId: existing.uploadId }, { $set: { ...set, updatedAt: new Date() } }, { returnDocument: 'after' });
    if (!image) return null;
  } else {
    try {
      // Every schema field set here, timestamps included (the driver applies no defaults).
      const now = new Date();
      const _id = imageId ? new Types.ObjectId(imageId) : newImageId(now.getTime());
      const created: ImageDoc = { _id, userId: input.userId, publicId: input.publicId, ...set, createdAt: createdAt ?? now, updatedAt: now };
      await catalog.driver.images.insertOne(created);
      image = created;
    } catch (err) {
      if ((err as { code?: number }).code === 11000) return null;
      throw err;
    }
  }
  const { opId, ...delta } = pendingUsage;
  const settled = await settleUpload(catalog, input.userId, input.uploadId, opId, delta, heldBytes);
  if (settled) await clearPendingUsage(catalog, image._id, opId);
  else await applyPendingUsage(catalog, image._id);
  return { image, previous: existing, settled };
}

async function applyPendingUsage(catalog: Catalog, imageId: Types.ObjectId): Promise<void> {
  const doc = await catalog.driver.images.findOne({ _id: imageId }, { projection: { pendingUsage: 1, userId: 1 } });
  const pending = doc?.pendingUsage;
  if (!doc || !pending) return;
  await addStorageUsage(catalog, doc.userId, { storageBytes: pending.storageBytes, imageCount: pending.imageCount }, pending.opId);
  await clearPendingUsage(catalog, imageId, pending.opId);
}

async function clearPendingUsage(catalog: Catalog, imageId: Types.ObjectId, opId: string): Promise<void> {
  // Bookkeeping, not a change of the image: updatedAt stays.
  await catalog.driver.images.updateOne({ _id: imageId, 'pendingUsage.opId': opId }, { $unset: { pendingUsage: 1 } });
}

/**
 * One page of the images matching `scope` (a user's: `{ userId }`, or a project's:
 * projectImageFilter), newest first, older than `before` when given.
 */
export async function listImagesPage(catalog: Catalog, scope: Record<string, unknown>, limit: number, before?: Types.ObjectId): Promise<{ images: ImageDoc[]; hasMore: boolean }> {
  const docs = await catalog.images.find(before ? { ...scope, _id: { $lt: before } } : scope).sort({ _id: -1 }).limit(limit + 1).lean();
  return { images: docs.slice(0, limit), hasMore: docs.length > limit };
}

/** Ids of at most `limit` derivatives of an image made through one origin (the keyless caps count them). */
export async function derivativeIdsOfOrigin(catalog: Catalog, imageId: Types.ObjectId, origin: DerivativeOrigin, limit: number): Promise<string[]> {
  const found = await catalog.derivatives.find({ imageId, origin }, { _id: 1 }).limit(limit).lean();
  return found.map((d) => String(d._id));
}

/** Removes every derivative of a stored original from storage and catalog. Returns how many. */
export async function purgeDerivatives(catalog: Catalog, storage: Storage, image: Pick<ImageDoc, '_id' | 'userId' | 'storageKey'>, keepVersion?: string): Promise<number> {
  const prefix = derivativePrefix(image.storageKey);
  let removed = 0;
  let cursor: string | undefined;
  const keep = keepVersion ? `${prefix}${keepVersion}&` : null;
  do {
    const page = await storage.list(prefix, { limit: 500, cursor });
    for (const item of page.items) {
      if (keep && item.key.startsWith(keep)) continue;
      await storage.delete(item.key);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  const docs = await catalog.derivatives.find({ imageId: image._id }, { _id: 1, bytes: 1 }).lean();
  const stale = docs.filter((d) => !(keep && d._id.startsWith(keep)));
  // One at a time, so the bytes taken off storage are exactly those of the records this call removed.
  let bytes = 0;
  for (const d of stale) {
    const res = await catalog.derivatives.deleteOne({ _id: d._id });
    if (res.deletedCount === 1) {
      removed++;
      bytes += d.bytes ?? 0;
    }
  }
  if (removed > 0) await addStorageUsage(catalog, image.userId, { derivativeCount: -removed, derivativeBytes: -bytes, storageBytes: -bytes });
  return removed;
}

/**
 * Deletes an image owned by userId. Null when not found. The original's bytes go first, then the
 * entry: the start-up reconcile re-adopts an original no entry explains (from its metadata), so
 * an original left behind by a crash after the entry went would come back. A crash between the
 * two leaves an entry without its file, which the reconcile sets aside (out of listings and usage).
 */
export async function deleteImage(catalog: Catalog, storage: Storage, userId: string, imageId: string): Promise<ImageDoc | null> {
  if (!Types.ObjectId.isValid(imageId) || String(new Types.ObjectId(imageId)) !== imageId) return null;
  const _id = new Types.ObjectId(imageId);
  let doc: ImageDoc | null = null;
  while (!doc) {
    const current = await catalog.images.findOne({ _id, userId }).lean();
    if (!current) return null;
    await storage.delete(current.storageKey);
    // Conditional on the version whose bytes were deleted: a replacement meanwhile (maybe under
    // another extension) is deleted in the next round.
    doc = await catalog.images.findOneAndDelete({ _id, userId, uploadId: current.uploadId }).lean();
  }
  await addStorageUsage(catalog, userId, { storageBytes: -doc.bytes, imageCount: -1 }, `delete:${imageId}:${doc.uploadId}`);
  await purgeDerivatives(catalog, storage, doc);
  return doc;
}

export interface DerivativeRecord {
  key: string;
  userId: string;
  imageId: string;
  /** The original's version the derivative was rendered from. */
  version: string;
  bytes: number;
  contentType: string;
  origin: DerivativeOrigin;
  /** The encoder quality q=auto chose. */
  quality?: number;
}

/**
 * Records a batch of stored derivatives in four round trips whatever its size: one read of their
 * originals, one bulk upsert, a second read of the originals of the records it created, and one
 * ordered write of every owner's counters. A derivative whose original changed after the render
 * (replaced or deleted: checked after storing, so a replacement's purge cannot miss it) is not
 * recorded and its bytes are deleted. Only the upsert that created a
 * record counts it, so a re-run of the same batch counts no stored derivative twice.
 * Returns the keys of those stale derivatives.
 */
const versionOf = (r: { imageId: string; userId: string; version: string }) => `${r.imageId}|${r.userId}|${r.version}`;

/** The image versions among `records` that are current in the catalog (as versionOf keys). */
async function currentVersions(catalog: Catalog, records: DerivativeRecord[]): Promise<Set<string>> {
  // An id that is not an ObjectId names no image: such a record is stale, never a failed batch.
  const ids = [...new Set(records.map((r) => r.imageId))].filter((id) => Types.ObjectId.isValid(id)).map((id) => new Types.ObjectId(id));
  const originals = await catalog.driver.images.find({ _id: { $in: ids } }, { projection: { _id: 1, userId: 1, version: 1 } }).toArray();
  return new Set(originals.map((o) => versionOf({ imageId: String(o._id), userId: o.userId, version: o.version })));
}

export async function recordDerivatives(catalog: Catalog, storage: Storage, records: DerivativeRecord[]): Promise<string[]> {
  if (records.length === 0) return [];
  const current = await currentVersions(catalog, records);
  // Per owner: derivatives newly stored, and renders answered (each counts as a transformation,
  // a stale one included: its caller got the bytes).
  const counts = new Map<string, { stored: number; storedBytes: number; rendered: number }>();
  const countFor = (userId: string) => counts.get(userId) ?? counts.set(userId, { stored: 0, storedBytes: 0, rendered: 0 }).get(userId)!;
  const liveRecords: DerivativeRecord[] = [];
  const stale: string[] = [];
  for (const r of records) {
    if (current.has(versionOf(r))) {
      liveRecords.push(r);
    } else {
      stale.push(r.key);
      countFor(r.userId).rendered++;
    }
  }
  let upserted: Record<string, unknown> = {};
  if (liveRecords.length > 0) {
    const createdAt = new Date();
    const ops: mongo.AnyBulkWriteOperation<DerivativeDoc>[] = liveRecords.map((r) => ({
      updateOne: {
        filter: { _id: r.key },
        update: { $setOnInsert: { userId: r.userId, imageId: new Types.ObjectId(r.imageId), bytes: r.bytes, contentType: r.contentType, origin: r.origin, ...(r.quality !== undefined ? { quality: r.quality } : {}), createdAt } },
        upsert: true,
      },
    }));
    try {
      // The driver's bulkWrite: the ops are built typed above, and mongoose's per-op casting was
      // most of the worker's catalog CPU per batch.
      upserted = (await catalog.driver.derivatives.bulkWrite(ops, { ordered: false })).upsertedIds ?? {};
    } catch (err) {
      // Another worker's upsert of the same key won a race (E11000): that one recorded it.
      const bulk = err as { code?: number; writeErrors?: { code?: number }[]; result?: { upsertedIds?: Record<string, unknown> } };
      const duplicatesOnly = bulk.code === 11000 || (bulk.writeErrors?.length && bulk.writeErrors.every((e) => e.code === 11000));
      if (!duplicatesOnly) throw err;
      upserted = bulk.result?.upsertedIds ?? {};
    }
  }
  // An image deleted or replaced between the read above and the upsert has had its derivatives
  // purged already: records this batch created for it since are taken back (read again after the
  // write, so one of the two always sees the other).
  const created = Object.keys(upserted).map((index) => liveRecords[Number(index)]);
  const vanished = new Set<string>();
  if (created.length > 0) {
    const still = await currentVersions(catalog, created);
    const gone = created.filter((r) => !still.has(versionOf(r))).map((r) => r.key);
    // One at a time: a record that the image's purge deleted first was taken off the counters by
    // that purge, so it is counted below to balance it; only the records this call deleted stay
    // uncounted (with deleteMany, such a race left the count one lower than the records).
    for (const key of gone) {
      const res = await catalog.driver.derivatives.deleteOne({ _id: key });
      if (res.deletedCount === 1) vanished.add(key);
    }
    stale.push(...gone);
  }
  // Only the upsert that created a record counts it. The derivative count is written last (after
  // the transformations, before stale bytes go), so once rows, objects and that count agree, the
  // whole batch is visible.
  for (const record of created) {
    if (vanished.has(record.key)) {
      countFor(record.userId).rendered++;
      continue;
    }
    const c = countFor(record.userId);
    c.stored++;
    c.storedBytes += record.bytes;
    c.rendered++;
  }
  // Every owner's counters in one round trip, in this order. Derivative bytes count toward the
  // plan's storage (docs/limits.md).
  const owners = [...counts];
  await addUsageInOrder(catalog, [
    ...owners.map(([userId, c]): UsageChange => ({ userId, counters: 'month', delta: { transformations: c.rendered } })),
    ...owners.map(([userId, c]): UsageChange => ({ userId, counters: 'total', delta: { derivativeCount: c.stored, derivativeBytes: c.storedBytes, storageBytes: c.storedBytes } })),
  ]);
  await Promise.all(stale.map((key) => storage.delete(key)));
  return stale;
}
