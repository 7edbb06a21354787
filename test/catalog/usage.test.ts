// The upload's catalog steps (holdStorage → recordUpload → settle) against the real catalog
// server: the common path is few round trips, and every re-run or mismatch still counts an upload
// exactly once and leaves no hold behind.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Catalog } from '../../src/catalog/catalog.js';
import { recordUpload, type RecordUploadInput } from '../../src/catalog/images.js';
import { addMonthlyUsage, addUsageInOrder, currentPeriod, holdStorage, readUsage, releaseStorageHold } from '../../src/catalog/usage.js';
import { catalogUrlFor } from '../harness/root-hooks.js';

const QUOTA = 1_000_000;

describe('upload usage accounting (holdStorage, recordUpload, settleUpload)', () => {
  let catalog: Catalog;
  before(async () => {
    catalog = await Catalog.connect(catalogUrlFor(`usage-${Date.now()}`));
  });
  after(async () => catalog?.close());

  function input(userId: string, publicId: string, bytes: number): RecordUploadInput {
    return {
      uploadId: randomUUID(),
      userId,
      publicId,
      projectId: null,
      format: 'jpeg',
      contentType: 'image/jpeg',
      width: 10,
      height: 10,
      bytes,
      checksum: 'x',
      storageKey: `${userId}/images/${publicId}.jpg`,
    };
  }

  async function usage(userId: string) {
    const doc = await catalog.usage.findById(userId).lean();
    return { storageBytes: doc?.storageBytes, imageCount: doc?.imageCount, holds: Object.keys(doc?.holds ?? {}) };
  }

  /** The worker's sequence: read, hold the growth, record (and settle). */
  async function finalize(up: RecordUploadInput) {
    const existing = await catalog.images.findOne({ userId: up.userId, publicId: up.publicId }).lean();
    const growth = up.bytes - (existing?.bytes ?? 0);
    expect(await holdStorage(catalog, up.userId, up.uploadId, growth, QUOTA)).to.equal(true);
    const out = await recordUpload(catalog, up, { existing, heldBytes: Math.max(growth, 0) });
    if (!out.settled) await releaseStorageHold(catalog, up.userId, up.uploadId);
    return out;
  }

  it("a user's first upload and a replacement settle in one update each: counted once, no hold left", async () => {
    const user = `u-${randomUUID()}`;
    const first = await finalize(input(user, 'a', 300));
    expect(first.settled).to.equal(true);
    const stored = await catalog.images.findById(first.image._id).lean();
    expect(stored?.pendingUsage ?? null).to.equal(null);
    // Written through the driver: it must still be a valid document of the mongoose schema.
    expect(new catalog.images(stored).validateSync()).to.equal(undefined);
    expect(stored!.createdAt).to.be.instanceOf(Date);
    expect(stored!.updatedAt).to.be.instanceOf(Date);
    expect(await usage(user)).to.deep.equal({ storageBytes: 300, imageCount: 1, holds: [] });
    const bigger = await finalize(input(user, 'a', 500));
    expect(bigger.settled).to.equal(true);
    expect(bigger.previous?.bytes).to.equal(300);
    const smaller = await finalize(input(user, 'a', 200)); // no hold (it shrinks)
    expect(smaller.settled).to.equal(true);
    await finalize(input(user, 'b', 100));
    expect(await usage(user)).to.deep.equal({ storageBytes: 300, imageCount: 2, holds: [] });
    const all = await catalog.images.find({ userId: user }).lean();
    expect(all.map((i) => i.pendingUsage ?? null)).to.deep.equal([null, null]);
  });

  it('a re-run of a finished upload (crash after the catalog write) changes nothing', async () => {
    const user = `u-${randomUUID()}`;
    const up = input(user, 'a', 400);
    await finalize(up);
    const again = await finalize(up);
    expect(again.settled).to.equal(false);
    expect(await usage(user)).to.deep.equal({ storageBytes: 400, imageCount: 1, holds: [] });
  });

  it('a re-run after a crash between hold and record (hold still there) counts once and releases it', async () => {
    const user = `u-${randomUUID()}`;
    const up = input(user, 'a', 400);
    expect(await holdStorage(catalog, user, up.uploadId, 400, QUOTA)).to.equal(true);
    expect(await usage(user)).to.deep.equal({ storageBytes: 400, imageCount: 0, holds: [up.uploadId] });
    await finalize(up); // holdStorage finds its own hold; settle releases it
    expect(await usage(user)).to.deep.equal({ storageBytes: 400, imageCount: 1, holds: [] });
  });

  it('when the hold is not what the caller says (a concurrent change), the step-by-step path still counts once', async () => {
    const user = `u-${randomUUID()}`;
    const up = input(user, 'a', 400);
    expect(await holdStorage(catalog, user, up.uploadId, 400, QUOTA)).to.equal(true);
    const out = await recordUpload(catalog, up, { existing: null, heldBytes: 350 });
    expect(out.settled).to.equal(false);
    expect(await usage(user)).to.deep.equal({ storageBytes: 800, imageCount: 1, holds: [up.uploadId] });
    await releaseStorageHold(catalog, user, up.uploadId);
    expect(await usage(user)).to.deep.equal({ storageBytes: 400, imageCount: 1, holds: [] });
  });

  it('a stale "existing" (replaced meanwhile) costs a re-read, not a lost or double count', async () => {
    const user = `u-${randomUUID()}`;
    await finalize(input(user, 'a', 300));
    const stale = await catalog.images.findOne({ userId: user, publicId: 'a' }).lean();
    await finalize(input(user, 'a', 500)); // replaced after `stale` was read
    const late = input(user, 'a', 700);
    expect(await holdStorage(catalog, user, late.uploadId, 700 - 300, QUOTA)).to.equal(true);
    const out = await recordUpload(catalog, late, { existing: stale, heldBytes: 400 });
    if (!out.settled) await releaseStorageHold(catalog, user, late.uploadId);
    expect(out.previous?.bytes).to.equal(500);
    expect(await usage(user)).to.deep.equal({ storageBytes: 700, imageCount: 1, holds: [] });
  });

  it('an image that keeps changing under the upload: a bounded number of re-reads, then a retryable error, nothing counted', async () => {
    const user = `u-${randomUUID()}`;
    await finalize(input(user, 'a', 300));
    const stale = await catalog.images.findOne({ userId: user, publicId: 'a' }).lean();
    await finalize(input(user, 'a', 500));
    // Every re-read answers the stale document, as if another upload replaced the image each time
    // between the read and the conditional write (a race that cannot be produced on demand).
    const images = catalog.driver.images;
    const findOne = images.findOne;
    let reads = 0;
    images.findOne = (async () => {
      reads++;
      return stale;
    }) as unknown as typeof findOne;
    const late = input(user, 'a', 700);
    try {
      const err = await recordUpload(catalog, late, { existing: stale }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(Error);
      expect((err as Error).message).to.match(/kept changing under upload .* \(10 attempts\)/);
      expect(reads).to.equal(9);
    } finally {
      images.findOne = findOne;
    }
    expect(await usage(user)).to.deep.equal({ storageBytes: 500, imageCount: 1, holds: [] });
  });

  it('documents written through the driver carry what the schema would give them (defaults, timestamps, validation)', async () => {
    const user = `u-${randomUUID()}`;
    await finalize(input(user, 'a', 300));
    const first = await catalog.driver.images.findOne({ userId: user, publicId: 'a' });
    expect(new catalog.images(first).validateSync(), 'the inserted image is valid for the schema').to.equal(undefined);
    expect(first).to.include({ projectId: null });
    expect(first!.createdAt).to.be.instanceOf(Date);
    expect(first!.updatedAt.getTime()).to.equal(first!.createdAt.getTime());
    await finalize(input(user, 'a', 500));
    const replaced = await catalog.driver.images.findOne({ userId: user, publicId: 'a' });
    expect(new catalog.images(replaced).validateSync(), 'the replaced image is valid for the schema').to.equal(undefined);
    expect(replaced!.createdAt.getTime()).to.equal(first!.createdAt.getTime());
    expect(replaced!.updatedAt.getTime(), 'updatedAt moves with a replacement').to.be.at.least(first!.updatedAt.getTime());
    expect(replaced!.version).to.not.equal(first!.version);
    // The counters document the driver created (first hold) has every field the schema defaults.
    const counters = await catalog.driver.usage.findOne({ _id: user });
    const defaults = new catalog.usage({ _id: user, userId: user, period: 'total' }).toObject() as unknown as Record<string, unknown>;
    for (const field of Object.keys(defaults)) expect(counters, `counters field ${field}`).to.have.property(field);
    expect(new catalog.usage(counters).validateSync()).to.equal(undefined);
  });

  it('increments without an op id (bandwidth, the derivative ledger) create the document mongoose would, and add up in one write', async () => {
    const viaDriver = `u-${randomUUID()}`;
    const viaMongoose = `u-${randomUUID()}`;
    const period = currentPeriod();
    await addMonthlyUsage(catalog, viaDriver, { bandwidthBytes: 7 });
    // The reference: the same upsert through the mongoose model, which adds the schema's defaults.
    await catalog.usage.updateOne({ _id: `${viaMongoose}:${period}` }, { $inc: { bandwidthBytes: 7 }, $setOnInsert: { userId: viaMongoose, period } }, { upsert: true });
    const fields = (doc: Record<string, unknown> | null) => Object.fromEntries(Object.entries(doc ?? {}).filter(([k]) => k !== '_id' && k !== 'userId'));
    expect(fields(await catalog.driver.usage.findOne({ _id: `${viaDriver}:${period}` }))).to.deep.equal(fields(await catalog.driver.usage.findOne({ _id: `${viaMongoose}:${period}` })));
    await addUsageInOrder(catalog, [
      { userId: viaDriver, counters: 'month', delta: { transformations: 2 } },
      { userId: viaDriver, counters: 'total', delta: { derivativeCount: 1, derivativeBytes: 10, storageBytes: 10 } },
      { userId: viaDriver, counters: 'month', delta: { transformations: 1, bandwidthBytes: 0 } },
      { userId: viaDriver, counters: 'total', delta: { derivativeCount: 0 } },
    ]);
    expect(await readUsage(catalog, viaDriver)).to.deep.equal({ storageBytes: 10, imageCount: 0, derivativeCount: 1, derivativeBytes: 10, bandwidthBytes: 7, transformations: 3, period });
    expect(new catalog.usage(await catalog.driver.usage.findOne({ _id: viaDriver })).validateSync()).to.equal(undefined);
  });

  it('holds refuse what would pass the quota, also for a user without counters yet', async () => {
    const user = `u-${randomUUID()}`;
    expect(await holdStorage(catalog, user, randomUUID(), QUOTA + 1, QUOTA)).to.equal(false);
    expect(await holdStorage(catalog, user, randomUUID(), QUOTA, QUOTA)).to.equal(true);
    expect(await holdStorage(catalog, user, randomUUID(), 1, QUOTA)).to.equal(false);
    expect((await usage(user)).storageBytes).to.equal(QUOTA);
  });
});
