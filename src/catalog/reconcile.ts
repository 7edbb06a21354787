// Brings catalog and storage back in line after a restart of the embedded catalog (or a crash):
// catalog entries whose original is missing are removed (with their usage), stored files that no
// catalog entry explains are deleted, and leftover staging uploads are cleared.
import type { Storage } from '../storage/storage.js';
import type { Catalog } from './catalog.js';
import { addStorageUsage } from './usage.js';

export interface ReconcileReport {
  imagesChecked: number;
  danglingImagesRemoved: number;
  orphanObjectsRemoved: number;
  stagingCleared: number;
}

async function* allKeys(storage: Storage, prefix: string): AsyncGenerator<string> {
  let cursor: string | undefined;
  do {
    const page = await storage.list(prefix, { limit: 1000, cursor });
    for (const item of page.items) yield item.key;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}

export async function reconcileCatalogWithStorage(catalog: Catalog, storage: Storage): Promise<ReconcileReport> {
  const report: ReconcileReport = { imagesChecked: 0, danglingImagesRemoved: 0, orphanObjectsRemoved: 0, stagingCleared: 0 };
  const known = new Map<string, string>(); // storageKey → version
  for await (const image of catalog.images.find({}).lean().cursor()) {
    report.imagesChecked++;
    if (await storage.stat(image.storageKey)) {
      known.set(image.storageKey, image.version);
      continue;
    }
    const removed = await catalog.images.findOneAndDelete({ _id: image._id, uploadId: image.uploadId }).lean();
    if (removed) {
      await addStorageUsage(catalog, image.userId, { storageBytes: -image.bytes, imageCount: -1 }, `reconcile:${image.uploadId}`);
      await catalog.derivatives.deleteMany({ imageId: image._id });
      report.danglingImagesRemoved++;
    }
  }
  const knownDerivatives = new Set((await catalog.derivatives.find({}, { _id: 1 }).lean()).map((d) => d._id));
  for await (const key of allKeys(storage, '')) {
    if (key.startsWith('_staging/')) {
      await storage.delete(key);
      report.stagingCleared++;
      continue;
    }
    if (key.startsWith('_')) continue;
    const marker = key.indexOf('&v=');
    const base = marker === -1 ? key : key.slice(0, marker);
    const version = known.get(base);
    const explained = marker === -1 ? version !== undefined : version !== undefined && key.startsWith(`${base}&v=${version}&`) && knownDerivatives.has(key);
    if (!explained) {
      await storage.delete(key);
      report.orphanObjectsRemoved++;
    }
  }
  return report;
}
