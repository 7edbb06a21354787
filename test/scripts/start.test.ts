import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Catalog } from '../../src/catalog/catalog.js';
import { freePort } from '../../scripts/lib/redis-server.js';
import { WORKER_NODE_FLAGS } from '../../scripts/lib/worker-env.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const START = path.resolve(here, '../../scripts/start.js');
const KEY = 'bobkey1234';

/** Command lines (argv) of a process's direct children (Linux /proc). */
function childCommands(pid: number): string[][] {
  const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return children.map((c) => fs.readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0').filter(Boolean));
}

/** Variables that would point `npm start` at external services instead of its embedded ones. */
const EXTERNAL = ['REDIS_URL', 'MONGO_URL', 'STORAGE_DRIVER', 'GCS_BUCKET', 'GCS_API_ENDPOINT', 'BASE_URL', 'CDN_URL', 'HOST', 'WORKER_QUEUES', 'WORKERS'];

interface Running {
  child: ChildProcess;
  output: () => string;
  startupMs: number;
}

describe('npm start (embedded defaults)', () => {
  let root: string;
  let dataDir: string;
  let storageDir: string;
  let port: number;
  let baseUrl: string;
  let current: Running | null = null;

  async function start(): Promise<Running> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of EXTERNAL) delete env[name];
    Object.assign(env, {
      DATA_DIR: dataDir,
      PORT: String(port),
      LOCAL_STORAGE_DIR: storageDir,
      API_KEYS_SEED: `bob:${KEY}:bobsecret1234`,
      LOG_LEVEL: 'warn',
      API_KEY_CACHE_MS: '0',
    });
    const started = performance.now();
    const child = spawn(process.execPath, [START], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    current = { child, output: () => out, startupMs: 0 };
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "Pictor is up" within 60 s:\n${out}`)), 60_000);
      const onData = () => {
        if (!out.includes('Pictor is up')) return;
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve();
      };
      child.stdout!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`start exited with ${code} before coming up:\n${out}`));
      });
    });
    current.startupMs = Math.round(performance.now() - started);
    return current;
  }

  async function stop(running: Running): Promise<number | null> {
    const { child } = running;
    const code = new Promise<number | null>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
      child.once('exit', (c) => resolve(c));
    });
    child.kill('SIGTERM');
    const result = await code;
    current = null;
    return result;
  }

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-start-'));
    dataDir = path.join(root, 'data');
    storageDir = path.join(root, 'elsewhere', 'storage');
    port = await freePort();
    baseUrl = `http://localhost:${port}`;
  });
  // A failed test must not leave its instance holding the port.
  afterEach(async function () {
    this.timeout(30_000);
    if (current) await stop(current);
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  let kept: { url: string; bytes: Buffer };
  let doomed: { url: string; key: string };

  it('comes up on PORT with all four health checks ok, GET / and the seeded key', async function () {
    this.timeout(90_000);
    const running = await start();
    const out = running.output();
    expect(out).to.include(`Pictor is up: ${baseUrl}`);
    expect(out).to.include(`api key   ${KEY}`);
    expect(out).to.match(/redis\s+private redis-server/);
    expect(out).to.match(/catalog\s+embedded/);
    // The worker runs with the worker node flags (scripts/lib/worker-env.ts says why).
    const workers = childCommands(running.child.pid!).filter((argv) => argv.some((a) => a.endsWith('workers/main.js')));
    expect(workers).to.have.length(1);
    expect(workers[0]).to.include.members([...WORKER_NODE_FLAGS]);

    const health = await request(`${baseUrl}/health`);
    expect(health.status, JSON.stringify(health.body)).to.equal(200);
    expect(Object.keys(health.body.checks)).to.have.members(['redis', 'catalog', 'storage', 'worker']);
    for (const check of Object.values(health.body.checks as Record<string, { ok: boolean }>)) expect(check.ok).to.equal(true);
    const root = await request(`${baseUrl}/`);
    expect(root.body.version).to.equal('0.0.1');

    const bytes = await jpeg(300, 200);
    const a = await upload(baseUrl, { key: KEY, bytes, filename: 'keeper.jpg' });
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    expect(a.body.public_url).to.equal(`${baseUrl}/files/bob/images/keeper.jpg`);
    kept = { url: a.body.public_url, bytes };
    const b = await upload(baseUrl, { key: KEY, bytes: await jpeg(200, 100), filename: 'doomed.jpg' });
    expect(b.status, JSON.stringify(b.body)).to.equal(200);
    doomed = { url: b.body.public_url, key: 'bob/images/doomed.jpg' };
    // Storage lives where LOCAL_STORAGE_DIR says.
    expect(fs.existsSync(path.join(storageDir, 'bob/images/keeper.jpg'))).to.equal(true);
    console.log(`      up in ${running.startupMs} ms`);

    expect(await stop(running)).to.equal(0);
    // the embedded catalog's journal (docs/durability.md), not a periodic snapshot
    expect(fs.readdirSync(path.join(dataDir, 'catalog')).some((name) => /^journal-\d+\.log$/.test(name))).to.equal(true);
    expect(fs.existsSync(path.join(dataDir, 'catalog-snapshot.json'))).to.equal(false);
  });

  it('restores the catalog on the next start: URLs still resolve and the key still works', async function () {
    this.timeout(90_000);
    const running = await start();
    expect(running.output()).to.match(/loaded \d+ documents from the snapshot and [1-9]\d* journal records/);
    const stored = await request(kept.url);
    expect(stored.status).to.equal(200);
    expect(stored.bytes.equals(kept.bytes)).to.equal(true);
    const tr = await request(`${baseUrl}/transform?src=${encodeURIComponent(kept.url)}&w=100&f=webp`, { key: KEY });
    expect(tr.status, JSON.stringify(tr.body)).to.equal(200);
    expect((await request(`${baseUrl}/health`)).status).to.equal(200);
    console.log(`      restarted in ${running.startupMs} ms`);
    expect(await stop(running)).to.equal(0);
  });

  it('reconciles after files go missing or appear behind its back', async function () {
    this.timeout(90_000);
    fs.rmSync(path.join(storageDir, doomed.key));
    fs.writeFileSync(path.join(storageDir, 'bob/images/stray.jpg'), await jpeg(50, 50));
    const running = await start();
    // The entry without its file is set aside; the file nothing explains (no rebuild metadata) is
    // moved to the quarantine, never deleted.
    expect(running.output()).to.match(/0 adopted, 1 quarantined, 1 dropped/);
    expect(running.output()).to.include('quarantined bob/images/stray.jpg -> _quarantine/bob/images/stray.jpg: no rebuild metadata');
    expect(running.output()).to.include('dropped     bob/images/doomed.jpg');
    expect((await request(doomed.url)).status).to.equal(404);
    expect((await request(`${baseUrl}/files/bob/images/stray.jpg`)).status).to.equal(404);
    expect((await request(`${baseUrl}/files/_quarantine/bob/images/stray.jpg`)).status).to.equal(404);
    expect(fs.existsSync(path.join(storageDir, 'bob/images/stray.jpg'))).to.equal(false);
    expect(fs.existsSync(path.join(storageDir, '_quarantine/bob/images/stray.jpg'))).to.equal(true);
    expect((await request(kept.url)).status).to.equal(200);

    const runtime = JSON.parse(fs.readFileSync(path.join(dataDir, 'runtime.json'), 'utf8')) as { mongoUrl: string };
    const catalog = await Catalog.connect(runtime.mongoUrl);
    try {
      const images = await catalog.images.find({ userId: 'bob' }).lean();
      expect(images.map((i) => i.publicId)).to.deep.equal(['keeper']);
    } finally {
      await catalog.close();
    }
    expect(await stop(running)).to.equal(0);
  });

  it('a start with an empty DATA_DIR against the existing storage adopts every original (none deleted)', async function () {
    this.timeout(90_000);
    const stored = fs.readdirSync(path.join(storageDir, 'bob/images')).sort();
    dataDir = path.join(root, 'fresh-data'); // catalog, Redis and credential all gone
    const running = await start();
    expect(running.output()).to.match(/reconcile 0 catalog entries .*: 1 adopted, 0 quarantined, 0 dropped/);
    expect(running.output()).to.include('adopted     bob/images/keeper.jpg');
    expect(fs.readdirSync(path.join(storageDir, 'bob/images')).sort()).to.deep.equal(stored);
    const listed = await request(`${baseUrl}/cdn/images`, { key: KEY });
    expect((listed.body.images as { public_id: string }[]).map((i) => i.public_id)).to.deep.equal(['keeper']);
    const original = await request(kept.url);
    expect(original.bytes.equals(kept.bytes)).to.equal(true);
    const usage = await request(`${baseUrl}/cdn/usage`, { key: KEY });
    // Derivatives found in storage are recorded again and count toward storage, as when made.
    expect([usage.body.image_count, usage.body.storage_bytes - usage.body.derivative_bytes]).to.deep.equal([1, kept.bytes.length]);
    expect(usage.body.derivative_bytes > 0).to.equal(usage.body.derivative_count > 0);
    expect(await stop(running)).to.equal(0);
  });
});
