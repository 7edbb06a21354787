// Fault 3: the catalog (MongoDB) unavailable. This test runs its own embedded catalog server so it
// can stop and restart it on the same port without disturbing the shared one. Writes are refused
// with 503 at once, reads within server selection (3 s), /health names the catalog, and once the server is
// back the front door and the workers reconnect by themselves. The embedded server keeps data in
// memory only, so the restarted one is empty: the test re-creates its indexes and the user, as a
// real MongoDB would have kept them.
import { expect } from 'chai';
import { startEmbeddedCatalogServer, type EmbeddedCatalogServer } from '../../src/catalog/embedded-catalog-server.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { assertConsistent, figure, SHORT_LOCKS, timed, waitFor } from './fault-helpers.js';

/** /health shows error texts and worker detail only to the admin credential. */
const ADMIN_TOKEN = 'health-admin-token';

/** serverSelectionTimeoutMS (3 s) plus a margin for a loaded machine. */
const FAST_MS = 4500;
/** Well under server selection: the refusal did not wait for the catalog. */
const AT_ONCE_MS = 1000;

describe('fault 3: the catalog unavailable', function () {
  this.timeout(60_000);
  let catalogServer: EmbeddedCatalogServer;
  let svc: TestService;

  before(async () => {
    catalogServer = await startEmbeddedCatalogServer({ dbName: 'fault3' });
    svc = await TestService.start({ workers: 1, env: { ...SHORT_LOCKS, MONGO_URL: catalogServer.url, ADMIN_TOKEN } });
  });
  after(async () => {
    await svc?.stop();
    await catalogServer?.stop();
  });

  it('answers 503 fast while the catalog is away and recovers without a restart', async () => {
    const user = await svc.createUser();
    const image = await jpeg(320, 240);
    const first = await upload(svc.baseUrl, { key: user.key, bytes: image, filename: 'before.jpg' });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);

    await catalogServer.stop();

    // /health's ping is the first command to meet the stopped server: from then on the driver
    // knows it is away.
    const health = await timed(request(svc.url('/health'), { headers: { 'X-Admin-Token': ADMIN_TOKEN } }));
    expect(health.value.status).to.equal(503);
    expect(health.value.body.failing).to.deep.equal(['catalog']);
    expect(health.value.body.checks.catalog.error).to.be.a('string').and.not.equal('');
    expect(health.ms).to.be.below(FAST_MS);

    // A write is refused at once, without waiting out server selection.
    const up = await timed(upload(svc.baseUrl, { key: user.key, bytes: image, filename: 'during.jpg' }));
    expect(up.value.status, JSON.stringify(up.value.body)).to.equal(503);
    expect(up.value.body.msg).to.match(/catalog is unreachable/);
    expect(up.value.headers.get('retry-after')).to.match(/^\d+$/);
    expect(up.ms).to.be.below(AT_ONCE_MS);

    // A read goes to the catalog (a cache might have answered it) and meets server selection.
    const list = await timed(request(svc.url('/cdn/images'), { key: user.key }));
    expect(list.value.status).to.equal(503);
    expect(list.ms).to.be.below(FAST_MS);

    figure(`fault 3: with the catalog down: upload 503 in ${up.ms} ms, list 503 in ${list.ms} ms, /health 503 in ${health.ms} ms (catalog: "${health.value.body.checks.catalog.error}")`);

    // Back on the same port, empty (memory only): indexes and the user are made again.
    catalogServer = await startEmbeddedCatalogServer({ port: catalogServer.port, dbName: 'fault3' });
    const backAt = Date.now();
    await waitFor('/health to report ok', async () => (await request(svc.url('/health'), { headers: { 'X-Admin-Token': ADMIN_TOKEN } })).status === 200, 30_000, 100);
    const healthMs = Date.now() - backAt;
    await svc.deps.catalog.ensureIndexes();
    const again = await svc.createUser(user.userId);
    const after = await waitFor('an upload to succeed', async () => {
      const res = await upload(svc.baseUrl, { key: again.key, bytes: image, filename: 'after.jpg' });
      return res.status === 200 ? res : null;
    }, 30_000, 200);
    const uploadMs = Date.now() - backAt;
    expect(after.body.public_url).to.match(/after\.jpg$/);
    const tr = await request(svc.url(`/transform?src=${encodeURIComponent(after.body.public_url)}&w=120&f=webp`), { key: again.key });
    expect(tr.status, JSON.stringify(tr.body)).to.equal(200);
    figure(`fault 3: catalog restarted → /health ok after ${healthMs} ms, first upload through a worker after ${uploadMs} ms`);

    // The refused upload left nothing. (The original stored before the outage has no row in the
    // new, empty catalog: that is the memory-only server, not the service; reconcile removes it.)
    const rows = await svc.deps.catalog.images.find({ userId: user.userId }).lean();
    expect(rows.map((r) => r.publicId)).to.deep.equal(['after']);
    await svc.deps.storage.delete(first.body.public_url.split('/files/')[1]);
    await assertConsistent(svc.deps.catalog, svc.deps.storage, user.userId);
  });
});
