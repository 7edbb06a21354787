// Crash tests drive the service exactly as a user runs it: `node dist/scripts/start.js` (what
// `npm start` runs after its build) on embedded defaults with a temporary DATA_DIR, started in its
// own process group so one SIGKILL reaches the whole tree at once (start process, front door,
// workers, the private redis-server and the embedded catalog inside the start process), as a
// power cut, an OOM kill or `kill -9` of the group would. Then the same DATA_DIR starts again.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import sharp from 'sharp';
import { freePort } from '../../scripts/lib/redis-server.js';
import { request, upload } from '../harness/http.js';
import { sleep, waitFor } from './fault-helpers.js';

export { sleep };

const here = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(here, '../..');
const START = path.join(DIST, 'scripts/start.js');
const KEYS = path.join(DIST, 'scripts/keys.js');

/** Variables that would point `npm start` at external services instead of its embedded ones. */
const EXTERNAL = ['REDIS_URL', 'MONGO_URL', 'STORAGE_DRIVER', 'GCS_BUCKET', 'GCS_API_ENDPOINT', 'BASE_URL', 'CDN_URL', 'HOST', 'WORKER_QUEUES', 'LOCAL_STORAGE_DIR', 'API_KEYS_SEED'];

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** One `npm start` process tree on a DATA_DIR that outlives it. */
export class PictorTree {
  private constructor(
    readonly child: ChildProcess,
    readonly baseUrl: string,
    readonly key: string,
    private readonly out: { text: string },
  ) {}

  static async start(dataDir: string, port: number, env: Record<string, string> = {}): Promise<PictorTree> {
    const childEnv: NodeJS.ProcessEnv = { ...process.env };
    for (const name of EXTERNAL) delete childEnv[name];
    Object.assign(childEnv, { DATA_DIR: dataDir, PORT: String(port), WORKERS: '1', LOG_LEVEL: 'warn', API_KEY_CACHE_MS: '0', ...env });
    // detached: its own process group (pgid = its pid), which every child inherits.
    const child = spawn(process.execPath, [START], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out = { text: '' };
    child.stdout!.on('data', (d: Buffer) => (out.text += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out.text += d.toString()));
    const key = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "Pictor is up" within 60 s:\n${out.text}`)), 60_000);
      const onData = () => {
        const match = /^api key\s+(\S+)/m.exec(out.text);
        if (!out.text.includes('Pictor is up') || !match) return;
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(match[1]);
      };
      child.stdout!.on('data', onData);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`start exited (${code ?? signal}) before coming up:\n${out.text}`));
      });
    });
    return new PictorTree(child, `http://localhost:${port}`, key, out);
  }

  output(): string {
    return this.out.text;
  }

  /** SIGKILL to the whole process group; resolves once no process of the group is left. */
  async kill(): Promise<void> {
    const pgid = this.child.pid!;
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    for (;;) {
      try {
        process.kill(-pgid, 0);
      } catch {
        return; // ESRCH: the group is empty
      }
      await sleep(20);
    }
  }

  url(p: string): string {
    return this.baseUrl + p;
  }
}


/** A temporary DATA_DIR and a port kept across restarts (public URLs name the port), and the tree running on them. */
export class CrashSite {
  tree: PictorTree | null = null;
  private constructor(
    readonly dataDir: string,
    readonly port: number,
  ) {}

  static async create(): Promise<CrashSite> {
    return new CrashSite(fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-crash-')), await freePort());
  }

  /** Starts a tree (after killing the running one, if any). */
  async start(env: Record<string, string> = {}): Promise<PictorTree> {
    await this.kill();
    this.tree = await PictorTree.start(this.dataDir, this.port, env);
    return this.tree;
  }

  async kill(): Promise<void> {
    await this.tree?.kill();
    this.tree = null;
  }

  async remove(): Promise<void> {
    await this.kill();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * Waits until the uploads whose jobs survived a kill have run: each job deletes its staged file
 * last (finished or refused), and the start-up reconcile clears staged files without a job. A
 * fixed pause was not enough on a slow machine: a replacement still running between a listing and
 * the download of the listed URL moved the image under the test.
 */
export async function stagedUploadsFinished(dataDir: string, timeoutMs = 60_000): Promise<void> {
  const staging = path.join(dataDir, 'storage', '_staging');
  const staged = () => (fs.existsSync(staging) ? fs.readdirSync(staging, { recursive: true }).filter((f) => fs.statSync(path.join(staging, String(f))).isFile()) : []);
  await waitFor('the jobs of the staged uploads to finish', async () => staged().length === 0, timeoutMs);
}

/** Mocha hooks for a suite on one CrashSite: made (and a tree started, unless told not to) before, removed after. */
export function useCrashSite(options: { startTree?: boolean } = {}): () => CrashSite {
  let site: CrashSite | null = null;
  before(async () => {
    site = await CrashSite.create();
    if (options.startTree !== false) await site.start();
  });
  after(async () => site?.remove());
  return () => site!;
}

/** `npm run keys -- create --user <id> --json` against the running tree (finds it through DATA_DIR/runtime.json). */
export async function createKeyWithCli(dataDir: string, userId: string, extraEnv: Record<string, string> = {}): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, ...extraEnv };
  for (const name of EXTERNAL) delete env[name];
  const child = spawn(process.execPath, [KEYS, 'create', '--user', userId, '--plan', 'pro', '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, out).to.equal(0);
  return (JSON.parse(out.trim().split('\n').pop()!) as { key: string }).key;
}

/** What the service acknowledged, as the caller saw it. */
export interface Acknowledged {
  /** imageId → original's URL and the SHA-256 of the bytes answered for it. */
  images: Map<string, { url: string; sha256: string; publicId: string }>;
  /** imageIds whose delete was answered 200, with their URL. */
  deleted: Map<string, string>;
  /** API keys (from the keys CLI) that must still authenticate. */
  keys: string[];
  /** Project slugs created with 200/201 that must still be listed. */
  projects: string[];
}

export function nothingYet(): Acknowledged {
  return { images: new Map(), deleted: new Map(), keys: [], projects: [] };
}

/** A distinct small JPEG per index (different size and colour). */
export async function distinctJpeg(i: number): Promise<Buffer> {
  return sharp({ create: { width: 40 + (i % 50), height: 30 + (i % 17), channels: 3, background: { r: (i * 37) % 256, g: (i * 91) % 256, b: (i * 53) % 256 } } })
    .jpeg({ quality: 80 })
    .toBuffer();
}

/** POST /cdn/upload; records the image when answered 200. */
export async function uploadAcknowledged(tree: PictorTree, ack: Acknowledged, bytes: Buffer, publicId: string, extra: { project?: string } = {}) {
  const fields: Record<string, string> = { public_id: publicId, ...(extra.project ? { project: extra.project } : {}) };
  const res = await upload(tree.baseUrl, { key: tree.key, bytes, filename: `${publicId}.jpg`, path: '/cdn/upload', fields, mime: 'image/jpeg' });
  if (res.status === 200) {
    for (const [id, image] of ack.images) if (image.publicId === publicId) ack.images.delete(id); // a replacement keeps the id
    ack.images.set(res.body.imageId as string, { url: res.body.public_url as string, sha256: sha256(bytes), publicId });
  }
  return res;
}

async function listAll(tree: PictorTree, key: string): Promise<{ imageId: string; size: number; public_url: string }[]> {
  const all: { imageId: string; size: number; public_url: string }[] = [];
  let cursor = '';
  for (;;) {
    const page = await request(tree.url(`/cdn/images?limit=100${cursor ? `&cursor=${cursor}` : ''}`), { key });
    expect(page.status, JSON.stringify(page.body)).to.equal(200);
    all.push(...(page.body.images as typeof all));
    if (!page.body.has_more) return all;
    cursor = page.body.next_cursor as string;
  }
}

/**
 * Two streams uploading into `tree` (public ids `compact/<n>`, n from `nextId`) until `stop()`;
 * `compacted` resolves to true once a snapshot newer than those at the call appeared in
 * DATA_DIR/catalog (false after 60 s without). `stop` returns the new snapshots' names.
 */
export function uploadWhileCompacting(tree: PictorTree, ack: Acknowledged, dataDir: string, nextId: () => number) {
  const catalogDir = path.join(dataDir, 'catalog');
  // (The folder may be replaced meanwhile by a simulated power cut: nothing to list then.)
  const snapshots = () => (fs.existsSync(catalogDir) ? fs.readdirSync(catalogDir).filter((f) => f.startsWith('snapshot-')) : []);
  const before = new Set(snapshots());
  let stopped = false;
  const streams = [0, 1].map(async () => {
    while (!stopped) {
      // Taken before the await: two streams uploading different bytes under one public_id would
      // race (the later finalize wins, not the later answer).
      const id = nextId();
      await uploadAcknowledged(tree, ack, await distinctJpeg(id), `compact/${id}`).catch(() => undefined);
    }
  });
  const compacted = (async () => {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(50)) if (snapshots().some((f) => !before.has(f))) return true;
    return false;
  })();
  return {
    compacted,
    stop: async () => {
      stopped = true;
      await Promise.all(streams);
      return snapshots().filter((f) => !before.has(f));
    },
    hadSnapshot: before.size > 0,
  };
}

/** Runs `fn` over `items`, `limit` at a time. */
export async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

/**
 * What must hold after a restart: every acknowledged image is listed, downloads with its bytes and
 * transforms (decoded: format and width); acknowledged deletes stay gone; the listing agrees with
 * /cdn/usage (count and bytes); keys made by the CLI authenticate; projects are listed.
 */
export async function assertNothingLost(tree: PictorTree, ack: Acknowledged): Promise<{ listed: number }> {
  // Uploads in flight at the kill are finished by their jobs after the restart; while one runs,
  // its quota hold is in storage_bytes and its image not yet listed. Listing and usage are read
  // until they agree (or 30 s pass, and the checks below say how they differ).
  let listed = await listAll(tree, tree.key);
  let usage = await request(tree.url('/cdn/usage'), { key: tree.key });
  const originalsOf = (images: typeof listed) => images.reduce((sum, i) => sum + i.size, 0);
  const agree = () => usage.status === 200 && usage.body.image_count === listed.length && usage.body.storage_bytes - usage.body.derivative_bytes === originalsOf(listed);
  for (const settleBy = Date.now() + 30_000; !agree() && Date.now() < settleBy; ) {
    await sleep(200);
    listed = await listAll(tree, tree.key);
    usage = await request(tree.url('/cdn/usage'), { key: tree.key });
  }
  const listedIds = new Set(listed.map((i) => i.imageId));
  expect(usage.status).to.equal(200);
  expect(usage.body.image_count, 'image_count = listing').to.equal(listed.length);
  // Derivatives made by an earlier check count toward storage too (once the ledger recorded them
  // before that round's kill): the originals' part is storage_bytes less derivative_bytes.
  expect(usage.body.storage_bytes - usage.body.derivative_bytes, `storage_bytes - derivative_bytes = sum of listed sizes (usage ${JSON.stringify(usage.body)})`).to.equal(originalsOf(listed));

  // Whatever is listed (acknowledged or not) is whole: it downloads.
  await eachLimited(listed, 4, async (image) => {
    expect((await request(image.public_url)).status, `listed ${image.public_url} downloads`).to.equal(200);
  });
  const missing = [...ack.images.keys()].filter((id) => !listedIds.has(id));
  expect(missing, `acknowledged images not listed (${missing.length} of ${ack.images.size})`).to.deep.equal([]);
  await eachLimited([...ack.images.values()], 4, async (image) => {
    const original = await request(image.url);
    expect(original.status, `${image.url} downloads`).to.equal(200);
    expect(sha256(original.bytes), `${image.url} has the acknowledged bytes`).to.equal(image.sha256);
    const derivative = await request(tree.url(`/transform?src=${encodeURIComponent(image.url)}&w=24&f=webp`), { key: tree.key });
    expect(derivative.status, `${image.url} transforms: ${JSON.stringify(derivative.body)}`).to.equal(200);
    const rendered = await request(derivative.body.public_url as string);
    expect(rendered.status, `derivative ${derivative.body.public_url} of ${image.url} (x-cache ${derivative.headers.get("x-cache")}) downloads`).to.equal(200);
    const meta = await sharp(rendered.bytes).metadata();
    expect(meta.format).to.equal('webp');
    expect(meta.width).to.equal(24);
  });
  for (const [imageId, url] of ack.deleted) {
    expect(listedIds.has(imageId), `deleted ${imageId} is not listed`).to.equal(false);
    expect((await request(url)).status, `deleted ${url} is gone`).to.equal(404);
  }
  for (const key of ack.keys) {
    const res = await request(tree.url('/cdn/usage'), { key });
    expect(res.status, `key ${key.slice(0, 8)}… made by the keys CLI still authenticates`).to.equal(200);
  }
  if (ack.projects.length > 0) {
    const projects = await request(tree.url('/cdn/projects'), { key: tree.key });
    const slugs = (projects.body.projects as { slug: string }[]).map((p) => p.slug);
    expect(slugs).to.include.members(ack.projects);
  }
  return { listed: listed.length };
}
