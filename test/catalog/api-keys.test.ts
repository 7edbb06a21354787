// API_KEYS_SEED: `user:key:secret[:plan]` entries, parsed strictly and seeded idempotently.
import { expect } from 'chai';
import { authenticateKey, parseKeySeed, seedCredential } from '../../src/catalog/api-keys.js';
import { Catalog } from '../../src/catalog/catalog.js';
import { catalogUrlFor } from '../harness/root-hooks.js';

describe('API_KEYS_SEED', () => {
  it('parses entries with and without a plan', () => {
    expect(parseKeySeed('ann:annkey123:annsecret1, bob:bobkey123:bobsecret1:business')).to.deep.equal([
      { userId: 'ann', key: 'annkey123', secret: 'annsecret1' },
      { userId: 'bob', key: 'bobkey123', secret: 'bobsecret1', plan: 'business' },
    ]);
  });

  it('refuses an unknown plan, naming the plans there are', () => {
    expect(() => parseKeySeed('bob:bobkey123:bobsecret1:gold')).to.throw(/unknown plan "gold" \(free, pro, business\)/);
    expect(() => parseKeySeed('bob:bobkey123:bobsecret1:pro:extra')).to.throw(/user:key:secret\[:plan\]/);
  });

  describe('seeding', () => {
    let catalog: Catalog;
    before(async () => {
      catalog = await Catalog.connect(catalogUrlFor(`keys-${Date.now()}`));
    });
    after(async () => catalog?.close());

    it('puts a seeded user on the given plan; without one a new user is free and a known one keeps its plan', async () => {
      await seedCredential(catalog, 'carol', 'carolkey123', 'carolsecret1', 'business');
      expect(await authenticateKey(catalog, 'carolkey123')).to.include({ userId: 'carol', plan: 'business' });
      await seedCredential(catalog, 'carol', 'carolkey123', 'carolsecret1');
      expect(await authenticateKey(catalog, 'carolkey123')).to.include({ plan: 'business' });
      await seedCredential(catalog, 'dave', 'davekey123', 'davesecret1');
      expect(await authenticateKey(catalog, 'davekey123')).to.include({ userId: 'dave', plan: 'free' });
    });
  });
});
