// `npm run catalog -- reconcile` against a catalog reached through MONGO_URL, the way a
// deployment on MongoDB runs it before its front doors and workers start. The catalog here is
// the suite's embedded MongoDB-wire server standing in for MongoDB (no mongod on this machine):
// the command goes through the same mongoose/driver calls either way. Two crashes are made by
// hand between an original's bytes and its entry — a delete that removed the bytes but not the
// entry, and an upload that stored the bytes but not the entry — and afterwards no entry is
// without bytes and no original without an entry.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lostImages } from '../../src/catalog/reconcile.js';
import { jpeg } from '../fixtures/images.js';
import { upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CATALOG_CLI = path.resolve(here, '../../scripts/catalog.js');

function runCli(env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [CATALOG_CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

describe('npm run catalog -- reconcile (catalog through MONGO_URL)', function () {
  this.timeout(90_000);
  let svc: TestService;
  before(async () => {
    svc = await TestService.start({ workers: 1 });
  });
  after(async () => svc?.stop());

  it('after a crash between bytes and entry (delete and upload): no entry without bytes, no original without an entry', async () => {
    const user = await svc.createUser();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(80 + i, 60), filename: `r${i}.jpg`, path: '/cdn/upload', fields: { public_id: `r/${i}` } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      ids.push(res.body.imageId as string);
    }
    const [deleted, orphaned] = await Promise.all(ids.slice(0, 2).map((id) => svc.deps.catalog.images.findById(id).lean()));
    // Delete: the bytes went first, the crash came before the entry went.
    await svc.deps.storage.delete(deleted!.storageKey);
    // Upload: the bytes (with their metadata) were stored, the crash came before the entry was written.
    await svc.deps.catalog.images.deleteOne({ _id: orphaned!._id });

    const entriesWithoutBytes = async () => {
      const missing: string[] = [];
      for (const image of await svc.deps.catalog.images.find({ userId: user.userId }).lean()) if (!(await svc.deps.storage.stat(image.storageKey))) missing.push(image.storageKey);
      return missing;
    };
    const originalsWithoutEntry = async () => {
      const page = await svc.deps.storage.list(`${user.userId}/images/`);
      const originals = page.items.map((o) => o.key).filter((key) => !key.includes('&v='));
      const entries = new Set((await svc.deps.catalog.images.find({ userId: user.userId }).lean()).map((i) => i.storageKey));
      return originals.filter((key) => !entries.has(key));
    };
    expect(await entriesWithoutBytes()).to.deep.equal([deleted!.storageKey]);
    expect(await originalsWithoutEntry()).to.deep.equal([orphaned!.storageKey]);

    const { code, out } = await runCli(svc.env, 'reconcile');
    expect(code, out).to.equal(0);
    expect(out).to.match(/reconcile .*1 adopted.*1 dropped/);
    expect(await entriesWithoutBytes()).to.deep.equal([]);
    expect(await originalsWithoutEntry()).to.deep.equal([]);
    // The orphan is back under its own id; the deleted one is set aside, not listed.
    expect(await svc.deps.catalog.images.exists({ _id: orphaned!._id })).to.not.equal(null);
    expect((await lostImages(svc.deps.catalog).find({}).lean()).map((l) => String(l._id))).to.include(String(deleted!._id));
  });
});
