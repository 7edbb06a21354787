import { expect } from 'chai';
import { Catalog } from '../../src/catalog/catalog.js';
import { catalogWriteConcern, MAJORITY_TIMEOUT_MS } from '../../src/catalog/write-concern.js';
import { catalogUrlFor } from '../harness/root-hooks.js';

describe('catalog write concern', function () {
  it('is majority + journaled by default, and the URL’s own choice when it names one', function () {
    expect(catalogWriteConcern('mongodb://db1:27017,db2:27017/pictor?replicaSet=rs0')).to.deep.equal({ w: 'majority', journal: true, wtimeoutMS: MAJORITY_TIMEOUT_MS });
    for (const url of ['mongodb://h/pictor?w=1', 'mongodb://h/pictor?retryWrites=true&journal=false', 'mongodb://h/pictor?wtimeoutMS=500', 'mongodb+srv://c.example.net/pictor?W=2']) {
      expect(catalogWriteConcern(url), url).to.equal(undefined);
    }
  });

  it('is set on every Catalog.connect client, and writes go through with it (here: the shared catalog)', async function () {
    const catalog = await Catalog.connect(catalogUrlFor('write_concern'));
    try {
      const { writeConcern } = catalog.connection.getClient().options;
      expect({ w: writeConcern?.w, journal: writeConcern?.journal }).to.deep.equal({ w: 'majority', journal: true });
      const res = await catalog.driver.usage.updateOne({ _id: 'wc:total' } as never, { $inc: { imageCount: 1 } } as never, { upsert: true });
      expect(res.acknowledged).to.equal(true);
      expect(res.upsertedCount).to.equal(1);
    } finally {
      await catalog.connection.dropDatabase();
      await catalog.close();
    }
  });
});
