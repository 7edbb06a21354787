// Brings catalog and storage back in line at start-up (docs/durability.md, "Reconcile at start-up").
// It never deletes an original: an original no catalog entry explains is re-adopted from the
// metadata it carries (original-metadata.ts) or, when that cannot be trusted, moved under
// `_quarantine/`. A catalog entry whose original is missing is set aside in `lostImages` (out of
// listings and usage, reported) and comes back if its original does. Derivatives of a version no
// entry lists are deleted (re-rendered on demand), those of a current version are kept and
// recorded; staged uploads are kept while their job exists.
// Usage totals (bytes, images, derivatives) are then recounted from what the catalog lists.
// Runs before the front door and the workers start: nothing else writes meanwhile.
import { createHash } from 'node:crypto';
import { Types, type Model } from 'mongoose';
import type { Storage, StoredObject } from '../storage/storage.js';
import type { Catalog } from './catalog.js';
import { imageVersion, recordUpload } from './images.js';
import type { ImageDoc } from './models/image.model.js';
import { lostImageModel, type LostImageDoc } from './models/lost-image.model.js';
import { parseOriginalMetadata, type OriginalEntry } from './original-metadata.js';

export const QUARANTINE_PREFIX = '_quarantine/';
const STAGING_PREFIX = '_staging/';

export interface ReconcileOptions {
  /**
   * Whether a staged upload may still be finished by its job (`_staging/<uploadId>`); kept when
   * true or when the answer is unknown (throws). Without it every staged upload is kept.
   */
  uploadJobPending?: (uploadId: string) => Promise<boolean>;
}

export interface ReconcileReport {
  imagesChecked: number;
  objectsChecked: number;
  /** Originals given back a catalog entry from their metadata (storage keys). */
  adopted: string[];
  /** Originals moved under _quarantine/ (their original key and why). */
  quarantined: { key: string; to: string; reason: string }[];
  /** Catalog entries set aside because their original is missing (moved to lostImages). */
  dropped: { imageId: string; userId: string; storageKey: string }[];
  /** Derivatives of versions no entry lists, deleted (re-rendered on demand). */
  derivativesRemoved: number;
  /** Derivatives of current versions whose catalog record was missing, recorded again. */
  derivativesRecorded: number;
  stagingCleared: number;
  stagingKept: number;
  /** Originals neither adopted nor quarantined because storage or catalog failed (left in place). */
  failed: { key: string; error: string }[];
  /** Users whose storage counters did not match their listed images and were recounted. */
  usageRecounted: string[];
}

interface KnownOriginal {
  imageId: Types.ObjectId;
  userId: string;
  version: string;
}

async function* allObjects(storage: Storage, prefix: string): AsyncGenerator<StoredObject> {
  let cursor: string | undefined;
  do {
    const page = await storage.list(prefix, { limit: 1000, cursor });
    yield* page.items;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}

/** Entries set aside because their original was missing (see LostImageDoc). */
export function lostImages(catalog: Catalog): Model<LostImageDoc> {
  return lostImageModel(catalog.connection);
}

export async function reconcileCatalogWithStorage(catalog: Catalog, storage: Storage, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const report: ReconcileReport = {
    imagesChecked: 0,
    objectsChecked: 0,
    adopted: [],
    quarantined: [],
    dropped: [],
    derivativesRemoved: 0,
    derivativesRecorded: 0,
    stagingCleared: 0,
    stagingKept: 0,
    usageRecounted: [],
    failed: [],
  };
  const lost = lostImages(catalog);
  // Every listed original by storage key: its current version and owner.
  const known = new Map<string, KnownOriginal>();

  // One listing instead of a stat per entry (a round trip each on GCS): original key → the upload
  // its metadata names ('' when none).
  const originals = new Map<string, string>();
  for await (const object of allObjects(storage, '')) {
    if (!object.key.startsWith('_') && !object.key.includes('&v=')) originals.set(object.key, object.metadata?.uploadId ?? '');
  }

  for await (const image of catalog.images.find({}).lean().cursor()) {
    report.imagesChecked++;
    const storedUpload = originals.get(image.storageKey);
    // Listed before the entry was read: a stat settles whether it is really gone.
    const object = storedUpload === undefined ? await storage.stat(image.storageKey) : null;
    if (storedUpload === undefined && !object) {
      await setAside(catalog, lost, image);
      report.dropped.push({ imageId: String(image._id), userId: image.userId, storageKey: image.storageKey });
      continue;
    }
    const stored = storedUpload === image.uploadId || storedUpload === '' ? null : parseOriginalMetadata(object ?? (await storage.stat(image.storageKey))!);
    if (stored?.ok && stored.entry.uploadId !== image.uploadId) {
      // The bytes under this key are another upload (a replacement stored, then a crash before its
      // entry was written): the entry follows the bytes.
      await adopt(catalog, lost, stored.entry, image);
      report.adopted.push(image.storageKey);
      known.set(image.storageKey, { imageId: image._id, userId: image.userId, version: imageVersion(stored.entry.uploadId) });
      continue;
    }
    known.set(image.storageKey, { imageId: image._id, userId: image.userId, version: image.version });
  }

  const knownDerivatives = new Set((await catalog.derivatives.find({}, { _id: 1 }).lean()).map((d) => d._id));
  for await (const object of allObjects(storage, '')) {
    report.objectsChecked++;
    const key = object.key;
    if (key.startsWith(STAGING_PREFIX)) {
      if (await stagedUploadPending(key.slice(STAGING_PREFIX.length), options)) {
        report.stagingKept++;
      } else {
        await storage.delete(key);
        report.stagingCleared++;
      }
      continue;
    }
    if (key.startsWith('_')) continue; // internal prefixes (_quarantine, _passport, ...)
    const marker = key.indexOf('&v=');
    if (marker !== -1) {
      const original = known.get(key.slice(0, marker));
      if (!original || !key.startsWith(`${key.slice(0, marker)}&v=${original.version}&`)) {
        // Rendered from a version no entry lists: never requested again (keys name the version).
        await storage.delete(key);
        report.derivativesRemoved++;
      } else if (!knownDerivatives.has(key)) {
        // A render of the current version whose record was lost: kept and recorded (a completed
        // transform job in Redis may still answer with this key).
        await catalog.derivatives.updateOne(
          { _id: key },
          { $setOnInsert: { userId: original.userId, imageId: original.imageId, bytes: object.size, contentType: object.contentType, origin: 'api', createdAt: object.updatedAt } },
          { upsert: true },
        );
        report.derivativesRecorded++;
      }
      continue;
    }
    if (known.has(key)) continue;
    const outcome = await adoptOrQuarantine(catalog, storage, lost, object).catch((err: unknown) => ({ failed: err instanceof Error ? err.message : String(err) }));
    if ('failed' in outcome) {
      // Left where it is (nothing lost); the next start tries again.
      report.failed.push({ key, error: outcome.failed });
    } else if (outcome.adopted) {
      report.adopted.push(key);
      known.set(key, { imageId: new Types.ObjectId(outcome.adopted.imageId), userId: outcome.adopted.userId, version: imageVersion(outcome.adopted.uploadId) });
    } else {
      report.quarantined.push({ key, to: outcome.to, reason: outcome.reason });
    }
  }

  report.usageRecounted = await recountStorageUsage(catalog);
  return report;
}

/** Moves an entry without its original to lostImages, with its derivative rows. */
async function setAside(catalog: Catalog, lost: Model<LostImageDoc>, image: ImageDoc): Promise<void> {
  const { pendingUsage: _pending, ...entry } = image;
  await lost.replaceOne({ _id: image._id }, { ...entry, lostAt: new Date() }, { upsert: true });
  await catalog.images.deleteOne({ _id: image._id, uploadId: image.uploadId });
  await catalog.derivatives.deleteMany({ imageId: image._id });
}

type Outcome = { adopted: OriginalEntry } | { adopted?: undefined; to: string; reason: string };

async function adoptOrQuarantine(catalog: Catalog, storage: Storage, lost: Model<LostImageDoc>, object: StoredObject): Promise<Outcome> {
  const parsed = parseOriginalMetadata(object);
  const bytes = await storage.read(object.key);
  let reason: string;
  if (!parsed.ok) {
    reason = parsed.reason;
  } else {
    const entry = parsed.entry;
    const sameName = await catalog.images.findOne({ userId: entry.userId, publicId: entry.publicId }).lean();
    const sameId = await catalog.images.exists({ _id: new Types.ObjectId(entry.imageId) });
    const checksum = createHash('sha256').update(bytes).digest('hex');
    if (checksum !== entry.checksum) reason = `checksum ${checksum} differs from the metadata's ${entry.checksum}`;
    else if (sameName) reason = `superseded: ${entry.userId}/${entry.publicId} is catalogued as ${sameName.storageKey} (upload ${sameName.uploadId})`;
    else if (sameId) reason = `imageId ${entry.imageId} belongs to another catalog entry`;
    else {
      await adopt(catalog, lost, entry, null);
      return { adopted: entry };
    }
  }
  const to = QUARANTINE_PREFIX + object.key;
  await storage.put(to, bytes, { contentType: object.contentType, metadata: { ...object.metadata, quarantineReason: reason.slice(0, 500) } });
  await storage.delete(object.key);
  return { to, reason };
}

/** Writes (or rewrites) the catalog entry an original describes; its usage is recounted afterwards. */
async function adopt(catalog: Catalog, lost: Model<LostImageDoc>, entry: OriginalEntry, existing: ImageDoc | null): Promise<void> {
  // A project that no longer exists leaves the image in the default project.
  const projectExists = entry.projectId ? await catalog.projects.exists({ _id: new Types.ObjectId(entry.projectId), userId: entry.userId }) : null;
  await recordUpload(catalog, { ...entry, projectId: projectExists ? entry.projectId : null }, { existing });
  await lost.deleteOne({ _id: new Types.ObjectId(entry.imageId) });
}

async function stagedUploadPending(uploadId: string, options: ReconcileOptions): Promise<boolean> {
  if (!options.uploadJobPending) return true;
  try {
    return await options.uploadJobPending(uploadId);
  } catch {
    return true; // not known: keeping a staged file costs little, losing an acknowledged upload does not
  }
}

/**
 * Sets every user's storage counters to what the catalog lists (bytes and count of images, bytes
 * and count of derivatives; derivative bytes count toward storage as when they are recorded) and
 * drops holds and pending deltas of uploads that were in flight: their
 * jobs, if still queued, take a new hold when they run again.
 */
async function recountStorageUsage(catalog: Catalog): Promise<string[]> {
  const totals = new Map<string, { storageBytes: number; imageCount: number; derivativeCount: number; derivativeBytes: number }>();
  const totalFor = (userId: string) => totals.get(userId) ?? totals.set(userId, { storageBytes: 0, imageCount: 0, derivativeCount: 0, derivativeBytes: 0 }).get(userId)!;
  for await (const image of catalog.images.find({}, { userId: 1, bytes: 1 }).lean().cursor()) {
    const t = totalFor(image.userId);
    t.storageBytes += image.bytes;
    t.imageCount++;
  }
  for await (const derivative of catalog.derivatives.find({}, { userId: 1, bytes: 1 }).lean().cursor()) {
    const t = totalFor(derivative.userId);
    t.derivativeCount++;
    t.derivativeBytes += derivative.bytes;
    t.storageBytes += derivative.bytes;
  }
  for await (const usage of catalog.usage.find({ period: 'total' }, { userId: 1 }).lean().cursor()) totalFor(usage.userId);
  await catalog.images.updateMany({ pendingUsage: { $exists: true } }, { $unset: { pendingUsage: 1 } }, { timestamps: false });

  const recounted: string[] = [];
  for (const [userId, t] of totals) {
    const current = await catalog.usage.findById(userId, { storageBytes: 1, imageCount: 1, derivativeCount: 1, derivativeBytes: 1, holds: 1 }).lean();
    const holds = current?.holds && Object.keys(current.holds).length > 0;
    const same = current && current.storageBytes === t.storageBytes && current.imageCount === t.imageCount && current.derivativeCount === t.derivativeCount && (current.derivativeBytes ?? 0) === t.derivativeBytes;
    if (same && !holds) continue;
    await catalog.usage.updateOne({ _id: userId }, { $set: t, $unset: { holds: 1 }, $setOnInsert: { userId, period: 'total', ops: [] } }, { upsert: true });
    recounted.push(userId);
  }
  return recounted;
}
