// The API key cache against a real (embedded) catalog, counting the catalog's key lookups: good keys
// stay cached however many bad keys arrive, bad keys are remembered apart, and a cache of 0 ms asks
// the catalog every time.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createCredential, type Credential } from '../../../src/catalog/api-keys.js';
import { Catalog } from '../../../src/catalog/catalog.js';
import { KeyCache } from '../../../src/web/middleware/auth.js';
import { catalogUrlFor } from '../../harness/root-hooks.js';

describe('KeyCache', function () {
  this.timeout(60_000);
  let catalog: Catalog;
  let good: Credential;
  let lookups = 0;

  before(async () => {
    catalog = await Catalog.connect(catalogUrlFor(`key-cache-${Date.now()}`));
    good = await createCredential(catalog, 'keycache-user');
    // Count every key document the cache asks the catalog for (the real query still runs).
    const findOne = catalog.apiKeys.findOne.bind(catalog.apiKeys);
    catalog.apiKeys.findOne = ((...args: Parameters<typeof findOne>) => {
      lookups++;
      return findOne(...args);
    }) as typeof findOne;
  });
  after(async () => catalog?.close());
  beforeEach(() => {
    lookups = 0;
  });

  it('random bad keys do not evict a good key', async () => {
    const keys = new KeyCache(catalog, 600_000);
    expect(await keys.lookup(good.key)).to.include({ userId: 'keycache-user' });
    expect(lookups).to.equal(1);
    // More bad keys than both caches hold together (10,000 known + 1,000 unknown).
    const bad = 12_000;
    for (let i = 0; i < bad; i++) expect(await keys.lookup(randomBytes(16).toString('hex'))).to.equal(null);
    expect(lookups).to.equal(1 + bad);
    expect(await keys.lookup(good.key)).to.include({ userId: 'keycache-user' });
    expect(lookups, 'the good key is answered from the cache').to.equal(1 + bad);
  });

  it('a repeated bad key costs one lookup per window', async () => {
    const keys = new KeyCache(catalog, 600_000);
    const bad = randomBytes(16).toString('hex');
    for (let i = 0; i < 5; i++) expect(await keys.lookup(bad)).to.equal(null);
    expect(lookups).to.equal(1);
  });

  it('API_KEY_CACHE_MS=0 asks the catalog on every request', async () => {
    const keys = new KeyCache(catalog, 0);
    for (let i = 0; i < 3; i++) expect(await keys.lookup(good.key)).to.include({ userId: 'keycache-user' });
    expect(lookups).to.equal(3);
  });
});
