import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Catalog } from '../../src/catalog/catalog.js';
import { jpeg } from '../fixtures/images.js';
import { upload } from '../harness/http.js';
import { catalogUrlFor } from '../harness/root-hooks.js';
import { TestService } from '../harness/test-service.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const KEYS_CLI = path.resolve(here, '../../scripts/keys.js');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('keys CLI (npm run keys)', () => {
  let mongoUrl: string;
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-keys-'));
  let catalog: Catalog;
  let svc: TestService | undefined;
  let created: { user_id: string; key: string; secret: string; plan: string };

  function keys(...args: string[]): Promise<CliResult> {
    const env: NodeJS.ProcessEnv = { ...process.env, MONGO_URL: mongoUrl, LOG_LEVEL: 'silent' };
    delete env.DATA_DIR;
    const child = spawn(process.execPath, [KEYS_CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  before(async () => {
    // A database of its own on the shared catalog server (known once the root hooks ran).
    mongoUrl = catalogUrlFor(`keys_${randomBytes(5).toString('hex')}`);
    catalog = await Catalog.connect(mongoUrl);
  });
  after(async function () {
    this.timeout(60_000);
    await svc?.stop();
    await catalog?.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('create --user alice --json prints a key and a secret once', async function () {
    this.timeout(20_000);
    const res = await keys('create', '--user', 'alice', '--json');
    expect(res.code, res.stderr).to.equal(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).to.have.length(1);
    created = JSON.parse(lines[0]);
    expect(created.user_id).to.equal('alice');
    expect(created.key).to.be.a('string').with.length.greaterThan(20);
    expect(created.secret).to.be.a('string').with.length.greaterThan(20);
    expect(created.secret).not.to.equal(created.key);
  });

  it('the catalog holds only the SHA-256 of the key, never the key itself', async () => {
    const docs = await catalog.apiKeys.find({ userId: 'alice' }).lean();
    expect(docs).to.have.length(1);
    expect(docs[0].keyHash).to.equal(createHash('sha256').update(created.key).digest('hex'));
    expect(docs[0].revokedAt).to.equal(null);
    // No field of any document in any collection carries the key.
    const db = catalog.connection.db!;
    for (const { name } of await db.listCollections().toArray()) {
      for (const doc of await db.collection(name).find({}).toArray()) {
        expect(JSON.stringify(doc), `${name} document`).not.to.include(created.key);
      }
    }
    expect(await catalog.users.findById('alice').lean()).to.not.equal(null);
  });

  it('list --json shows the key by prefix, active', async function () {
    this.timeout(20_000);
    const res = await keys('list', '--json');
    expect(res.code, res.stderr).to.equal(0);
    const rows = JSON.parse(res.stdout) as { id: string; userId: string; keyPrefix: string; revokedAt: string | null }[];
    expect(rows).to.have.length(1);
    expect(rows[0].userId).to.equal('alice');
    expect(created.key.startsWith(rows[0].keyPrefix)).to.equal(true);
    expect(rows[0].keyPrefix.length).to.be.below(created.key.length);
    expect(rows[0].revokedAt).to.equal(null);
    expect(res.stdout).not.to.include(created.key);
    expect(res.stdout).not.to.include(created.secret);
  });

  it('the key authenticates against the running service; revoke makes it fail', async function () {
    this.timeout(90_000);
    svc = await TestService.start({ workers: 1, env: { MONGO_URL: mongoUrl, API_KEY_CACHE_MS: '0' } });
    const bytes = await jpeg(120, 90);
    const before = await upload(svc.baseUrl, { key: created.key, bytes, filename: 'alice.jpg' });
    expect(before.status, JSON.stringify(before.body)).to.equal(200);
    expect(before.body.public_url).to.include('/alice/images/alice.');

    const revoked = await keys('revoke', created.key);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(revoked.stdout).to.match(/revoked 1 key/);

    const afterRevoke = await upload(svc.baseUrl, { key: created.key, bytes, filename: 'alice.jpg' });
    expect(afterRevoke.status).to.equal(401);
    expect(afterRevoke.body.msg).to.match(/Invalid API key/);

    const rows = JSON.parse((await keys('list', '--json', '--user', 'alice')).stdout) as { revokedAt: string | null }[];
    expect(rows[0].revokedAt).to.be.a('string');
    // Revoking again changes nothing and says so with a non-zero exit.
    const again = await keys('revoke', created.key);
    expect(again.code).to.equal(1);
    expect(again.stdout).to.match(/revoked 0 key/);
  });

  it('refuses bad commands with a message and a non-zero exit', async function () {
    this.timeout(20_000);
    const noUser = await keys('create');
    expect(noUser.code).to.not.equal(0);
    expect(noUser.stderr).to.include('--user');
    const badPlan = await keys('create', '--user', 'bob', '--plan', 'platinum');
    expect(badPlan.code).to.not.equal(0);
    expect(badPlan.stderr).to.include('platinum');
    const unknown = await keys('frobnicate');
    expect(unknown.code).to.not.equal(0);
    expect(unknown.stderr).to.include('usage');
    expect(await catalog.apiKeys.countDocuments({ userId: 'bob' })).to.equal(0);
  });
});
