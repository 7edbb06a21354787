// The front door's caches (image documents, derivative bytes in memory, batched bandwidth) with
// two front doors on one Redis, catalog and storage, as when operators run several: a replace or
// delete through one is seen by the other at once, hot bytes equal the stored ones, and counts
// batched in memory reach the catalog when a front door shuts down.
import { expect } from 'chai';
import sharp from 'sharp';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { freePort } from '../../scripts/lib/redis-server.js';
import { FrontDoor } from '../../src/web/front-door.js';
import type { WebDeps } from '../../src/web/web-deps.js';
import { waitFor } from '../faults/fault-helpers.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload, tinyJpeg } from './set-b-helpers.js';
import type { Credential } from '../../src/catalog/api-keys.js';
import type { Request } from 'express';
import { CATALOG_LOST_CHANNEL } from '../../src/web/services/data-host-link.js';

describe('front door caches across two front doors', function () {
  this.timeout(60_000);
  let svc: TestService;
  let second: FrontDoor;
  let secondDeps: WebDeps;
  let secondUrl: string;
  let user: Credential;

  before(async () => {
    // Long TTLs: only the change announcements can make these tests pass.
    svc = await TestService.start({ env: { IMAGE_CACHE_MS: '600000', MEMORY_CACHE_MB: '8' } });
    const port = await freePort();
    secondUrl = `http://127.0.0.1:${port}`;
    // Same catalog, Redis and storage (and CDN URL) as the first; its own port.
    const config = loadConfig({ ...svc.env, PORT: String(port) });
    second = new FrontDoor(config, pino({ level: 'silent' }));
    secondDeps = (await second.start()).deps;
    user = await svc.createUser();
  });
  after(async () => {
    await second?.close();
    await svc?.stop();
  });

  const viaSecond = (p: string) => request(secondUrl + p);

  it('a replacement through one front door is served by the other at once', async () => {
    const first = await cdnUpload(svc, user.key, await tinyJpeg(1, 40, 20), { filename: 'swap.jpg' });
    const before = await viaSecond(`/cdn/${first.imageId}?w=20&f=png`);
    expect(before.status).to.equal(200);
    expect((await sharp(before.bytes).metadata()).height).to.equal(10);
    // Cached in the second front door now; replace through the first with another aspect ratio.
    const replaced = await cdnUpload(svc, user.key, await tinyJpeg(2, 20, 40), { filename: 'swap.jpg' });
    expect(replaced.imageId).to.equal(first.imageId);
    const after = await viaSecond(`/cdn/${first.imageId}?w=20&f=png`);
    expect(after.status).to.equal(200);
    expect((await sharp(after.bytes).metadata()).height, 'the new original (20×40) at w=20').to.equal(40);
  });

  it('a delete through one front door is a 404 in the other within milliseconds', async () => {
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(3, 32, 32), { filename: 'gone.jpg' });
    expect((await viaSecond(`/cdn/${pic.imageId}?w=16&f=webp`)).status).to.equal(200);
    expect((await viaSecond(`/cdn/${pic.imageId}?w=16&f=webp`)).headers.get('x-cache')).to.equal('HIT');
    const del = await request(svc.url(`/cdn/${pic.imageId}`), { method: 'DELETE', key: user.key });
    expect(del.status).to.equal(200);
    // The change reaches the other front door through Redis pub/sub: asynchronously, so a request
    // racing the message may still be answered from its cache (seen now and then in CI runs).
    await waitFor('a 404 from the other front door within 1 s of the delete', async () => (await viaSecond(`/cdn/${pic.imageId}?w=16&f=webp`)).status === 404, 1000, 5);
    expect((await request(svc.url(`/cdn/${pic.imageId}?w=16&f=webp`))).status).to.equal(404);
  });

  it('hot derivative bytes come from memory and equal the stored object; the budget holds', async () => {
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(4, 200, 120), { filename: 'hot.jpg' });
    const miss = await viaSecond(`/cdn/${pic.imageId}?w=150&f=png`);
    expect(miss.headers.get('x-cache')).to.equal('MISS');
    for (let i = 0; i < 3; i++) {
      const hit = await viaSecond(`/cdn/${pic.imageId}?w=150&f=png`);
      expect(hit.headers.get('x-cache')).to.equal('HIT');
      expect(hit.bytes.equals(miss.bytes)).to.equal(true);
      expect(Number(hit.headers.get('content-length'))).to.equal(miss.bytes.length);
    }
    await svc.derivativesSettled(user.userId);
    const key = (await svc.deps.catalog.derivatives.find({ imageId: pic.imageId }).lean()).map((d) => d._id)[0];
    expect((await svc.deps.storage.read(key)).equals(miss.bytes)).to.equal(true);
    expect(secondDeps.derivatives.memoryUse.entries).to.be.greaterThan(0);
    // A range is cut from the same bytes.
    const part = await request(secondUrl + `/cdn/${pic.imageId}?w=150&f=png`, { headers: { Range: 'bytes=10-19' } });
    expect(part.status).to.equal(206);
    expect(part.bytes.equals(miss.bytes.subarray(10, 20))).to.equal(true);
    // 8 MiB budget (objects up to 0.5 MiB): 40 distinct ~0.3 MiB derivatives cannot all stay.
    const big = await cdnUpload(svc, user.key, await sharp({ create: { width: 800, height: 600, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 60 } } }).jpeg({ quality: 95 }).toBuffer(), { filename: 'noise.jpg' });
    for (let w = 700; w < 740; w++) expect((await request(svc.url(`/image/n.jpg?src=${encodeURIComponent(big.public_url)}&w=${w}&f=jpeg&q=95`), { key: user.key })).status).to.equal(200);
    let servedBytes = 0;
    const entriesBefore = secondDeps.derivatives.memoryUse.entries;
    for (let w = 700; w < 740; w++) {
      const res = await request(secondUrl + `/cdn/${big.imageId}?w=${w}&f=jpeg&q=95`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('x-cache')).to.equal('HIT');
      expect(res.bytes.length).to.be.within(100 * 1024, 512 * 1024);
      servedBytes += res.bytes.length;
    }
    expect(servedBytes, 'the test must overflow the budget').to.be.greaterThan(8 * 1024 * 1024);
    expect(secondDeps.derivatives.memoryUse.bytes).to.be.at.most(8 * 1024 * 1024);
    expect(secondDeps.derivatives.memoryUse.entries).to.be.lessThan(entriesBefore + 40);
  });

  it('another channel on the shared subscriber connection (a catalog-loss report) leaves the image cache as it is', async () => {
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(6, 32, 32), { filename: 'kept.jpg' });
    expect((await viaSecond(`/cdn/${pic.imageId}?w=16&f=webp`)).status).to.equal(200);
    const unchanged = secondDeps.images.unchanged();
    const write = { method: 'POST', path: '/cdn/upload' } as Request;
    // The link refuses writes from the report until a catalog ping of its own answers, which a
    // healthy catalog does within a millisecond: its pings are held (a slow catalog) until the
    // test has seen the refusal, so the report's arrival is observed, not raced.
    const { catalog } = secondDeps;
    const ping = catalog.ping.bind(catalog);
    let answer = (): void => undefined;
    const held = new Promise<void>((resolve) => (answer = resolve));
    catalog.ping = async () => {
      await held;
      return ping();
    };
    try {
      await secondDeps.redis.publish(CATALOG_LOST_CHANNEL, 'another-host:1');
      await waitFor('the report to arrive', async () => secondDeps.dataHost!.refusal(write) !== null, 2000, 5);
      expect(unchanged(), 'the image cache was not cleared by the report').to.equal(true);
    } finally {
      answer();
      catalog.ping = ping;
    }
    await waitFor('its own ping to clear the report', async () => secondDeps.dataHost!.refusal(write) === null, 5000, 10);
  });

  it('bandwidth counted in memory reaches the catalog by shutdown, exactly', async () => {
    const other = await svc.createUser();
    const pic = await cdnUpload(svc, other.key, await tinyJpeg(5, 64, 64), { filename: 'count.jpg' });
    let sent = 0;
    for (let i = 0; i < 25; i++) sent += (await viaSecond(`/cdn/${pic.imageId}?w=${32 + (i % 3)}&f=webp`)).bytes.length;
    await second.close();
    const period = new Date().toISOString().slice(0, 7);
    const doc = await svc.deps.catalog.usage.findById(`${other.userId}:${period}`).lean();
    expect(doc?.bandwidthBytes).to.equal(sent);
  });
});
