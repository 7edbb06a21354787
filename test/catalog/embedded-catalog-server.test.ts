// The embedded catalog server (patched CongoDB) must behave like MongoDB for everything the
// catalog relies on: unique indexes answered with E11000, atomic single-document updates,
// idempotent counters, _id paging, and snapshot/restore across a restart.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import mongoose, { Schema, type Connection, type Model, Types } from 'mongoose';
import {
  exportCatalogSnapshot,
  importCatalogSnapshot,
  startEmbeddedCatalogServer,
  type EmbeddedCatalogServer,
} from '../../src/catalog/embedded-catalog-server.js';

interface ImageRow {
  _id: Types.ObjectId;
  userId: string;
  publicId: string;
  title?: string;
  slug?: string;
  status?: string;
  handle?: string;
  bytes?: number;
  data?: Buffer;
  takenAt?: Date;
  ownerRef?: Types.ObjectId;
}

interface CounterRow {
  _id: string;
  n: number;
  bytes: number;
  ops: string[];
  userId?: string;
  createdAt?: Date;
  note?: string;
}

const imageSchema = new Schema<ImageRow>(
  {
    userId: { type: String, required: true },
    publicId: { type: String, required: true },
    title: String,
    slug: String,
    status: String,
    handle: String,
    bytes: Number,
    data: Buffer,
    takenAt: Date,
    ownerRef: Schema.Types.ObjectId,
  },
  { versionKey: false },
);
imageSchema.index({ userId: 1, publicId: 1 }, { unique: true });
imageSchema.index({ slug: 1 }, { unique: true, partialFilterExpression: { status: 'active' } });
imageSchema.index({ handle: 1 }, { unique: true, sparse: true });

const counterSchema = new Schema<CounterRow>(
  {
    _id: { type: String, required: true },
    n: { type: Number, default: 0 },
    bytes: { type: Number, default: 0 },
    ops: { type: [String], default: undefined },
    userId: String,
    createdAt: Date,
    note: String,
  },
  { versionKey: false },
);

function codeOf(err: unknown): number | undefined {
  return (err as { code?: number })?.code;
}

async function expectDuplicate(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    expect(codeOf(err), String(err)).to.equal(11000);
    expect((err as Error).message).to.match(/E11000 duplicate key error/);
    return err as Error;
  }
  expect.fail('expected an E11000 duplicate key error');
}

describe('embedded catalog server (patched CongoDB)', function () {
  let server: EmbeddedCatalogServer;
  let conn: Connection;
  let Image: Model<ImageRow>;
  let Counter: Model<CounterRow>;
  let tmpDir: string;

  before(async function () {
    tmpDir = await mkdtemp(path.join(os.tmpdir(), 'pictor-catalog-'));
    server = await startEmbeddedCatalogServer({ port: 0 });
    conn = await mongoose.createConnection(server.url).asPromise();
    Image = conn.model<ImageRow>('Image', imageSchema, 'images');
    Counter = conn.model<CounterRow>('Counter', counterSchema, 'counters');
    await Image.init();
    await Counter.init();
  });

  after(async function () {
    await conn?.close();
    await server?.stop();
    if (tmpDir) await rm(tmpDir, { recursive: true, force: true });
  });

  beforeEach(async function () {
    await Image.deleteMany({});
    await Counter.deleteMany({});
  });

  it('starts on a free port with a URL that selects polling monitoring', function () {
    expect(server.port).to.be.greaterThan(0);
    expect(server.url).to.equal(`mongodb://127.0.0.1:${server.port}/pictor?directConnection=true&serverMonitoringMode=poll`);
  });

  it('answers hello without topologyVersion (no streaming monitor)', async function () {
    const hello = await conn.db!.admin().command({ hello: 1 });
    expect(hello.isWritablePrimary).to.equal(true);
    expect(hello).to.not.have.property('topologyVersion');
  });

  describe('unique indexes', function () {
    it('lists the unique, partial and sparse indexes mongoose created, so syncIndexes is stable', async function () {
      const indexes = await Image.listIndexes();
      const byName = Object.fromEntries(indexes.map((i) => [i.name, i]));
      expect(byName['userId_1_publicId_1']).to.include({ unique: true });
      expect(byName['slug_1'].partialFilterExpression).to.deep.equal({ status: 'active' });
      expect(byName['handle_1']).to.include({ unique: true, sparse: true });
      expect(await Image.syncIndexes()).to.deep.equal([]);
      expect(await Image.syncIndexes()).to.deep.equal([]);
    });

    it('rejects a compound duplicate on create/insertMany with code 11000', async function () {
      await Image.create({ userId: 'u1', publicId: 'p1' });
      await Image.create({ userId: 'u2', publicId: 'p1' });
      await Image.create({ userId: 'u1', publicId: 'p2' });
      const err = await expectDuplicate(Image.create({ userId: 'u1', publicId: 'p1' }));
      expect(err.name).to.equal('MongoServerError');
      expect((err as unknown as { keyValue: unknown }).keyValue).to.deep.equal({ userId: 'u1', publicId: 'p1' });
      await expectDuplicate(Image.insertMany([{ userId: 'u3', publicId: 'x' }, { userId: 'u3', publicId: 'x' }]));
      expect(await Image.countDocuments({ userId: 'u3' })).to.equal(1); // ordered: stops at the duplicate
      expect(await Image.countDocuments()).to.equal(4);
    });

    it('rejects a single-field duplicate (and a duplicate _id)', async function () {
      await Image.create({ userId: 'u1', publicId: 'a', handle: 'h1' });
      await expectDuplicate(Image.create({ userId: 'u1', publicId: 'b', handle: 'h1' }));
      const id = new Types.ObjectId();
      await Image.create({ _id: id, userId: 'u9', publicId: 'a' });
      await expectDuplicate(Image.create({ _id: id, userId: 'u9', publicId: 'b' }));
    });

    it('treats sparse and partial unique indexes like MongoDB', async function () {
      // sparse: documents without the field do not collide
      await Image.create([{ userId: 'u1', publicId: 'a' }, { userId: 'u1', publicId: 'b' }]);
      // partial: only documents matching the filter are unique
      await Image.create({ userId: 'u1', publicId: 'c', slug: 's', status: 'deleted' });
      await Image.create({ userId: 'u1', publicId: 'd', slug: 's', status: 'deleted' });
      await Image.create({ userId: 'u1', publicId: 'e', slug: 's', status: 'active' });
      await expectDuplicate(Image.create({ userId: 'u1', publicId: 'f', slug: 's', status: 'active' }));
      // leaving the partial filter frees the key
      await Image.updateOne({ publicId: 'e' }, { $set: { status: 'deleted' } });
      await Image.create({ userId: 'u1', publicId: 'f', slug: 's', status: 'active' });
    });

    it('rejects duplicates created by updateOne, upserts and bulkWrite', async function () {
      await Image.create({ userId: 'u1', publicId: 'p1' });
      const other = await Image.create({ userId: 'u1', publicId: 'p2' });
      await expectDuplicate(Image.updateOne({ _id: other._id }, { $set: { publicId: 'p1' } }).exec());
      expect((await Image.findById(other._id).lean())?.publicId).to.equal('p2'); // unchanged
      // upsert whose filter does not match inserts a document that collides
      await expectDuplicate(Image.updateOne({ userId: 'u1', publicId: 'p1', title: 'none' }, { $set: { bytes: 1 } }, { upsert: true }).exec());
      // a non-colliding upsert works
      const res = await Image.updateOne({ userId: 'u1', publicId: 'p3' }, { $set: { bytes: 3 } }, { upsert: true });
      expect(res.upsertedCount).to.equal(1);
      await expectDuplicate(
        Image.bulkWrite([
          { insertOne: { document: { userId: 'u5', publicId: 'q' } } },
          { updateOne: { filter: { publicId: 'p3' }, update: { $set: { publicId: 'p1' } } } },
        ]),
      );
      expect(await Image.countDocuments({ userId: 'u5' })).to.equal(1);
    });

    it('rejects duplicates created by findOneAndUpdate (update and upsert)', async function () {
      await Image.create({ userId: 'u1', publicId: 'p1' });
      await Image.create({ userId: 'u1', publicId: 'p2' });
      await expectDuplicate(Image.findOneAndUpdate({ publicId: 'p2' }, { $set: { publicId: 'p1' } }, { new: true }).exec());
      await expectDuplicate(
        Image.findOneAndUpdate({ userId: 'u1', publicId: 'p1', title: 'x' }, { $set: { bytes: 1 } }, { upsert: true, new: true }).exec(),
      );
      expect(await Image.countDocuments()).to.equal(2);
    });

    it('refuses to create a unique index over existing duplicates', async function () {
      await Image.create([{ userId: 'u1', publicId: 'a', title: 't' }, { userId: 'u1', publicId: 'b', title: 't' }]);
      await expectDuplicate(Image.collection.createIndex({ title: 1 }, { unique: true }));
      const names = (await Image.listIndexes()).map((i) => i.name);
      expect(names).to.not.include('title_1');
    });
  });

  describe('atomic counters', function () {
    it('sums 200 concurrent $inc upserts exactly', async function () {
      await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          Counter.updateOne({ _id: i % 2 ? 'odd' : 'even' }, { $inc: { n: 1, bytes: i }, $setOnInsert: { createdAt: new Date() } }, { upsert: true }),
        ),
      );
      const rows = await Counter.find().sort({ _id: 1 }).lean();
      expect(rows.map((r) => [r._id, r.n])).to.deep.equal([['even', 100], ['odd', 100]]);
      expect(rows[0].bytes + rows[1].bytes).to.equal((199 * 200) / 2);
      expect(rows[0].createdAt).to.be.instanceOf(Date);
    });

    // The usage ledger's form: check-and-increment in one upsert. Replaying an applied
    // opId makes the upsert try to insert the existing _id, which MongoDB answers with E11000.
    async function applyLedger(id: string, opId: string, bytes: number): Promise<'applied' | 'duplicate'> {
      try {
        await Counter.updateOne(
          { _id: id, ops: { $ne: opId } },
          { $inc: { n: 1, bytes }, $push: { ops: { $each: [opId], $slice: -500 } } },
          { upsert: true },
        );
        return 'applied';
      } catch (err) {
        if (codeOf(err) === 11000) return 'duplicate';
        throw err;
      }
    }

    it('applies an idempotent ledger update once per opId', async function () {
      expect(await applyLedger('u1:total', 'op-1', 10)).to.equal('applied');
      expect(await applyLedger('u1:total', 'op-1', 10)).to.equal('duplicate');
      expect(await applyLedger('u1:total', 'op-2', 5)).to.equal('applied');
      const row = await Counter.findById('u1:total').lean();
      expect(row).to.include({ n: 2, bytes: 15 });
      expect(row?.ops).to.deep.equal(['op-1', 'op-2']);
    });

    it('keeps idempotency under concurrent replays and trims ops with $slice', async function () {
      const ops = Array.from({ length: 60 }, (_, i) => `op-${i}`);
      const results = await Promise.all([...ops, ...ops, ...ops].map((op) => applyLedger('u2:total', op, 1)));
      expect(results.filter((r) => r === 'applied')).to.have.length(60);
      expect(await Counter.findById('u2:total').lean()).to.include({ n: 60, bytes: 60 });
      for (let i = 60; i < 520; i++) await applyLedger('u2:total', `op-${i}`, 1);
      const row = await Counter.findById('u2:total').lean();
      expect(row?.n).to.equal(520);
      expect(row?.ops).to.have.length(500);
      expect(row?.ops[0]).to.equal('op-20');
      expect(row?.ops[499]).to.equal('op-519');
    });

    it('supports the ensure-then-conditional-update ledger form (modifiedCount)', async function () {
      const apply = async (opId: string) => {
        await Counter.updateOne({ _id: 'u3:2025-01' }, { $setOnInsert: { userId: 'u3', ops: [] } }, { upsert: true });
        const res = await Counter.updateOne({ _id: 'u3:2025-01', ops: { $ne: opId } }, { $inc: { n: 1 }, $push: { ops: { $each: [opId], $slice: -500 } } });
        return res.modifiedCount === 1;
      };
      expect(await apply('a')).to.equal(true);
      expect(await apply('a')).to.equal(false);
      expect(await apply('b')).to.equal(true);
      expect(await Counter.findById('u3:2025-01').lean()).to.include({ n: 2, userId: 'u3' });
    });

    it('findOneAndUpdate upsert reports whether it inserted; $setOnInsert and $unset work', async function () {
      const first = await Counter.findOneAndUpdate(
        { _id: 'k' },
        { $inc: { n: 1 }, $set: { note: 'x' }, $setOnInsert: { userId: 'u1', createdAt: new Date(1000) } },
        { upsert: true, new: true, includeResultMetadata: true },
      );
      expect(first.lastErrorObject?.updatedExisting).to.equal(false);
      expect(first.lastErrorObject?.upserted).to.equal('k');
      expect(first.value).to.include({ _id: 'k', n: 1, userId: 'u1' });
      const second = await Counter.findOneAndUpdate(
        { _id: 'k' },
        { $inc: { n: 1 }, $unset: { note: 1 }, $setOnInsert: { userId: 'u2', createdAt: new Date(2000) } },
        { upsert: true, new: true, includeResultMetadata: true },
      );
      expect(second.lastErrorObject?.updatedExisting).to.equal(true);
      expect(second.value?.n).to.equal(2);
      expect(second.value?.userId).to.equal('u1');
      expect(second.value?.createdAt?.getTime()).to.equal(1000);
      expect(await Counter.collection.findOne({ _id: 'k' as never })).to.not.have.property('note');
      const none = await Counter.findOneAndUpdate({ _id: 'missing' }, { $inc: { n: 1 } }, { includeResultMetadata: true });
      expect(none.value).to.equal(null);
      expect(none.lastErrorObject?.updatedExisting).to.equal(false);
    });
  });

  describe('queries', function () {
    it('pages by _id descending with an _id $lt cursor; counts, deletes by $in and aggregates', async function () {
      const docs = await Image.insertMany(Array.from({ length: 25 }, (_, i) => ({ userId: i % 3 ? 'a' : 'b', publicId: `p${i}`, bytes: i })));
      const seen: string[] = [];
      let cursor: Types.ObjectId | undefined;
      const pageSizes: number[] = [];
      for (;;) {
        const page = await Image.find(cursor ? { _id: { $lt: cursor } } : {})
          .sort({ _id: -1 })
          .limit(10)
          .lean();
        if (page.length === 0) break;
        pageSizes.push(page.length);
        seen.push(...page.map((d) => d._id.toHexString()));
        cursor = page[page.length - 1]._id;
      }
      expect(pageSizes).to.deep.equal([10, 10, 5]);
      const expected = docs.map((d) => d._id.toHexString()).sort().reverse();
      expect(seen).to.deep.equal(expected);

      expect(await Image.countDocuments({ userId: 'b' })).to.equal(9);
      const totals = await Image.aggregate<{ _id: string; bytes: number; n: number }>([
        { $match: { bytes: { $gte: 0 } } },
        { $group: { _id: '$userId', bytes: { $sum: '$bytes' }, n: { $sum: 1 } } },
        { $sort: { _id: 1 } },
      ]);
      expect(totals).to.deep.equal([
        { _id: 'a', bytes: 300 - 108, n: 16 },
        { _id: 'b', bytes: 108, n: 9 },
      ]);
      const del = await Image.deleteMany({ _id: { $in: docs.slice(0, 5).map((d) => d._id) } });
      expect(del.deletedCount).to.equal(5);
      expect(await Image.countDocuments()).to.equal(20);
    });

    it('sorts strings in binary order, consistent with $lt paging', async function () {
      const keys = ['b', 'B', 'a-b', 'ab', 'a_b', 'A', '_x', 'z'];
      await Counter.insertMany(keys.map((k) => ({ _id: k })));
      const sorted = (await Counter.find().sort({ _id: 1 }).lean()).map((d) => d._id);
      expect(sorted).to.deep.equal([...keys].sort());
      const after = (await Counter.find({ _id: { $gt: 'a-b' } }).sort({ _id: 1 }).lean()).map((d) => d._id);
      expect(after).to.deep.equal(sorted.slice(sorted.indexOf('a-b') + 1));
    });

    it('keeps Buffer fields intact through updates', async function () {
      const data = Buffer.from([0, 1, 2, 250, 255]);
      const doc = await Image.create({ userId: 'u1', publicId: 'bin', data });
      await Image.updateOne({ _id: doc._id }, { $set: { title: 'changed' } });
      const row = await Image.findById(doc._id);
      expect(row?.title).to.equal('changed');
      expect(Buffer.isBuffer(row?.data)).to.equal(true);
      expect(row!.data!.equals(data)).to.equal(true);
    });
  });

  it('survives a restart through snapshot export/import with types preserved', async function () {
    const owner = new Types.ObjectId();
    const takenAt = new Date('2024-05-06T07:08:09.123Z');
    const data = Buffer.from('c29tZSBieXRlcw==', 'base64');
    await Image.create([
      { userId: 'u1', publicId: 'p1', ownerRef: owner, takenAt, data, bytes: 1234, handle: 'h' },
      { userId: 'u1', publicId: 'p2', bytes: 2.5 },
    ]);
    await Counter.create({ _id: 'u1:total', n: 3, bytes: 7, ops: ['x', 'y'] });
    const before = {
      images: await Image.find().sort({ publicId: 1 }).lean(),
      counters: await Counter.find().lean(),
    };
    const file = path.join(tmpDir, 'catalog.snapshot');
    const exported = await exportCatalogSnapshot(server.url, file);
    expect(exported).to.include({ documents: 3 });

    await conn.close();
    await server.stop();
    server = await startEmbeddedCatalogServer({ port: 0 });
    expect(await importCatalogSnapshot(server.url, path.join(tmpDir, 'missing.snapshot'))).to.equal(null);
    const imported = await importCatalogSnapshot(server.url, file);
    expect(imported).to.include({ documents: 3 });

    conn = await mongoose.createConnection(server.url).asPromise();
    Image = conn.model<ImageRow>('Image', imageSchema, 'images');
    Counter = conn.model<CounterRow>('Counter', counterSchema, 'counters');
    // the unique index came back with the snapshot, before mongoose builds any index
    await expectDuplicate(Image.collection.insertOne({ userId: 'u1', publicId: 'p1' }));
    await Image.init();
    await Counter.init();

    const images = await Image.find().sort({ publicId: 1 }).lean();
    expect(images).to.deep.equal(before.images);
    expect(await Counter.find().lean()).to.deep.equal(before.counters);
    const raw = await Image.collection.findOne({ publicId: 'p1' });
    expect(raw?._id).to.be.instanceOf(mongoose.mongo.ObjectId);
    expect(raw?.ownerRef).to.be.instanceOf(mongoose.mongo.ObjectId);
    expect((raw?.ownerRef as Types.ObjectId).equals(owner)).to.equal(true);
    expect(raw?.takenAt).to.be.instanceOf(Date);
    expect((raw?.takenAt as Date).getTime()).to.equal(takenAt.getTime());
    expect(raw?.data).to.be.instanceOf(mongoose.mongo.Binary);
    expect(Buffer.from((raw?.data as InstanceType<typeof mongoose.mongo.Binary>).value()).equals(data)).to.equal(true);

    // only into an empty database; a torn file is rejected before anything is written
    let refused: unknown;
    await importCatalogSnapshot(server.url, file).catch((err: unknown) => (refused = err));
    expect(String(refused)).to.match(/not empty/);
    const torn = path.join(tmpDir, 'torn.snapshot');
    await writeFile(torn, '{"format":"pictor-catalog-snapshot","version":1}\n');
    let tornErr: unknown;
    await importCatalogSnapshot(server.url, torn).catch((err: unknown) => (tornErr = err));
    expect(String(tornErr)).to.match(/incomplete/);
  });

  // Monitor health under load: a second client with a fast heartbeat so the monitor runs many
  // times while 50 operations are in flight. Also without serverMonitoringMode=poll, which only
  // works because the patched hello has no topologyVersion (unpatched: "Server ended moreToCome
  // unexpectedly" and the server is marked Unknown).
  for (const variant of ['returned URL', 'URL without serverMonitoringMode=poll']) {
    it(`runs 50 concurrent findOne/insert operations without driver monitor errors (${variant})`, async function () {
      const url = variant === 'returned URL' ? server.url : server.url.replace('&serverMonitoringMode=poll', '');
      const client = new mongoose.mongo.MongoClient(url, { heartbeatFrequencyMS: 100, maxPoolSize: 50 });
      const problems: string[] = [];
      client.on('serverHeartbeatFailed', (e) => problems.push(`heartbeat failed: ${String(e.failure)}`));
      client.on('serverDescriptionChanged', (e) => {
        if (e.newDescription.type === 'Unknown') problems.push(`server became Unknown: ${String(e.newDescription.error)}`);
      });
      client.on('connectionClosed', (e) => {
        if (e.reason === 'error') problems.push(`connection closed by error (pool ${e.address})`);
      });
      let heartbeats = 0;
      client.on('serverHeartbeatSucceeded', () => heartbeats++);
      await client.connect();
      try {
        const coll = client.db().collection<{ _id?: Types.ObjectId; k: number }>('load');
        const deadline = Date.now() + 1200;
        let ops = 0;
        while (Date.now() < deadline) {
          await Promise.all(
            Array.from({ length: 50 }, async (_, i) => {
              if (i % 2) await coll.insertOne({ k: i });
              else await coll.findOne({ k: i - 1 });
              ops++;
            }),
          );
        }
        expect(ops).to.be.greaterThan(50);
        expect(heartbeats).to.be.greaterThan(3);
        expect(problems).to.deep.equal([]);
      } finally {
        await client.close();
      }
    });
  }
});
