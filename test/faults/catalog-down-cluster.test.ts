// The catalog lost behind two front-door processes (`npm start` with FRONT_DOOR_PROCESSES=2): only
// the process whose command meets the stopped catalog learns it from its driver; the other still
// holds pooled sockets to it and, told nothing, would send its next write down one and wait out
// server selection (3 s). Every upload right after the first refused write must be refused at once
// with the catalog's message, whichever process answers it. The catalog runs in this process
// (journaled to a temporary directory) so the test can stop it and start it again on its port with
// its data; each request goes on a connection of its own, so the cluster's primary hands them to
// the two processes in turn, and the request id names the process that answered.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../scripts/lib/redis-server.js';
import { startEmbeddedCatalogServer, type EmbeddedCatalogServer } from '../../src/catalog/embedded-catalog-server.js';
import { jpeg } from '../fixtures/images.js';
import { multipartBody, sendRaw, type RawAnswer } from '../harness/multipart.js';
import { PictorTree } from './crash-helpers.js';
import { figure, waitFor } from './fault-helpers.js';

/** Well under server selection (3 s): the refusal did not wait for the catalog. */
const AT_ONCE_MS = 1000;
const UPLOADS = 4;

/** The front-door process that answered (request ids are `<prefix per process>-<counter>`). */
const processOf = (answer: RawAnswer) => String(answer.headers['x-request-id']).split('-')[0];

describe('fault 3 with two front-door processes: the catalog lost', function () {
  this.timeout(120_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-catalog-cluster-'));
  let catalogServer: EmbeddedCatalogServer;
  let tree: PictorTree;
  let image: Buffer;

  const startCatalog = (port?: number) => startEmbeddedCatalogServer({ dataDir: path.join(dir, 'catalog'), dbName: 'fault3cluster', port, log: { info: () => undefined, warn: () => undefined, error: () => undefined } });
  const uploadOnce = (name: string) =>
    sendRaw({ url: tree.url('/cdn/upload'), headers: { 'X-API-Key': tree.key }, body: multipartBody([{ name: 'file', filename: `${name}.jpg`, type: 'image/jpeg', body: image }]) });

  before(async () => {
    image = await jpeg(160, 120);
    catalogServer = await startCatalog();
    // The key is cached, so a write's first catalog command is the write itself.
    tree = await PictorTree.start(path.join(dir, 'data'), await freePort(), { MONGO_URL: catalogServer.url, FRONT_DOOR_PROCESSES: '2', API_KEY_CACHE_MS: '600000' });
  });
  after(async () => {
    await tree?.kill();
    await catalogServer?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('after one write meets the stopped catalog, every process refuses uploads at once, and all accept again once it is back', async () => {
    const warm = [];
    for (let i = 0; i < UPLOADS; i++) warm.push(await uploadOnce(`before-${i}`));
    for (const answer of warm) expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(new Set(warm.map(processOf)).size, 'processes that answered').to.equal(2);

    await catalogServer.stop();
    const write = await sendRaw({ url: tree.url('/cdn/projects'), headers: { 'X-API-Key': tree.key }, contentType: 'application/json', body: Buffer.from(JSON.stringify({ name: 'during' })) });
    expect(write.status, JSON.stringify(write.body)).to.equal(503);

    const refused: RawAnswer[] = [];
    for (let i = 0; i < UPLOADS; i++) refused.push(await uploadOnce(`during-${i}`));
    for (const answer of refused) {
      const seen = `answered by ${processOf(answer)} (the write by ${processOf(write)}) in ${answer.ms} ms: ${answer.status} ${JSON.stringify(answer.body)}`;
      expect(answer.ms, seen).to.be.below(AT_ONCE_MS);
      expect(answer.status, seen).to.equal(503);
      expect(answer.body.detail, seen).to.equal('The catalog is unreachable from this server; nothing was stored; retry shortly');
      expect(answer.headers['retry-after']).to.match(/^\d+$/);
    }
    expect(refused.map(processOf), 'an upload answered by the process that had not met the loss').to.include.members(warm.map(processOf).filter((p) => p !== processOf(write)).slice(0, 1));

    catalogServer = await startCatalog(catalogServer.port);
    const backAt = Date.now();
    await waitFor('both processes to accept uploads', async () => {
      const answers = [await uploadOnce('after-a'), await uploadOnce('after-b')];
      return answers.every((a) => a.status === 200) && new Set(answers.map(processOf)).size === 2;
    }, 30_000, 100);
    figure(`fault 3, two front-door processes: the write that met the loss 503 in ${write.ms} ms; then uploads 503 in ${refused.map((a) => a.ms).join(', ')} ms; both accept again ${Date.now() - backAt} ms after the catalog is back`);
  });
});
