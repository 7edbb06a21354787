// A full disk: `npm start` with DATA_DIR on a small tmpfs this test mounts (as root), uploads of
// ~0.8 MB until the disk refuses them, then space freed without any restart. Twice: first the
// storage write meets ENOSPC (an upload's bytes), then the catalog journal does (the disk filled
// by hand to a few KB, then a catalog write), after which the catalog process exits and
// `npm start` brings it back from its journal once it can write again. Nothing acknowledged may
// be lost or damaged, refusals carry a message and Retry-After, /health fails its storage check
// while the disk is full, and usage equals the listing at the end.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { freePort } from '../../scripts/lib/redis-server.js';
import { request } from '../harness/http.js';
import { assertNothingLost, nothingYet, PictorTree, sleep, uploadAcknowledged } from './crash-helpers.js';
import { waitFor } from './fault-helpers.js';

const noisyJpeg = (seed: number) => sharp(randomBytes(640 * 480 * 3), { raw: { width: 640, height: 480, channels: 3 } }).jpeg({ quality: 90 + (seed % 5) }).toBuffer();

/**
 * Fills the file system up to `leaveBytes`: written until ENOSPC (the service may be writing at the
 * same time, so the free space read beforehand is no exact target), then cut back by `leaveBytes`.
 */
function fillDisk(file: string, leaveBytes: number): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (const chunk of [1024 * 1024, 64 * 1024, 4 * 1024]) {
      const block = Buffer.alloc(chunk);
      try {
        for (;;) fs.writeSync(fd, block);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
    fs.ftruncateSync(fd, Math.max(0, fs.fstatSync(fd).size - leaveBytes));
  } finally {
    fs.closeSync(fd);
  }
}

describe('full disk: npm start on a small file system', function () {
  this.timeout(300_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-full-'));
  const ack = nothingYet();
  let tree: PictorTree;
  let n = 0;

  before(async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=40m', 'tmpfs', dataDir]);
    tree = await PictorTree.start(dataDir, await freePort(), { MAX_UPLOAD_BYTES: String(2 * 1024 * 1024) });
  });
  after(async () => {
    await tree?.kill();
    execFileSync('umount', ['-l', dataDir]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Uploads until three in a row are refused; every refusal checked. Returns how many were refused. */
  async function uploadUntilFull(): Promise<number> {
    let refusedInARow = 0;
    let refused = 0;
    while (refusedInARow < 3) {
      const started = performance.now();
      const res = await uploadAcknowledged(tree, ack, await noisyJpeg(++n), `full/${n}`);
      const ms = performance.now() - started;
      if (res.status === 200) {
        refusedInARow = 0;
        continue;
      }
      refused++;
      refusedInARow++;
      expect(res.status, JSON.stringify(res.body)).to.be.oneOf([503, 507]);
      expect(res.body.detail, 'a refusal says why').to.match(/full|space|unavailable/i);
      expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      console.log(`      refused ${res.status} in ${Math.round(ms)} ms: ${res.body.detail}`);
      expect(ms, 'refused at once').to.be.below(1000);
    }
    return refused;
  }

  async function expectHealthStorageFailing(): Promise<void> {
    await sleep(2100); // /health reuses its storage probe for HEALTH_CACHE_MS
    const health = await request(tree.url('/health'));
    expect(health.status, JSON.stringify(health.body)).to.equal(503);
    expect(health.body.failing).to.include('storage');
  }

  /** Retries an upload every second; returns the seconds until one was accepted (30 at most). */
  async function secondsUntilUploadsWork(): Promise<number> {
    const started = Date.now();
    for (;;) {
      const res = await uploadAcknowledged(tree, ack, await noisyJpeg(++n), `after/${n}`).catch(() => null);
      if (res?.status === 200) return (Date.now() - started) / 1000;
      expect(Date.now() - started, `uploads still refused: ${JSON.stringify(res?.body)}`).to.be.below(30_000);
      await sleep(1000);
    }
  }

  it('storage meets ENOSPC first: refusals at once, /health fails, uploads work again within 30 s of space freed', async () => {
    const refused = await uploadUntilFull();
    expect(refused).to.be.at.least(3);
    await expectHealthStorageFailing();
    execFileSync('mount', ['-o', 'remount,size=80m', dataDir]);
    const seconds = await secondsUntilUploadsWork();
    console.log(`      ${ack.images.size} uploads acknowledged; accepted again ${seconds.toFixed(1)} s after space was freed`);
    await assertNothingLost(tree, ack);
  });

  it('the catalog journal meets ENOSPC first: the catalog restarts from its journal and uploads work again once space is freed', async () => {
    const filler = path.join(dataDir, 'filler');
    fillDisk(filler, 8 * 1024);
    // Catalog writes (projects) until one fails: the journal met the full disk.
    let failedAt = -1;
    for (let i = 0; i < 200 && failedAt < 0; i++) {
      const started = performance.now();
      const res = await request(tree.url('/cdn/projects'), { method: 'POST', key: tree.key, json: { name: `p-${i}-${'x'.repeat(80)}` } });
      const ms = performance.now() - started;
      if (res.status === 200) ack.projects.push(res.body.slug as string);
      else {
        failedAt = i;
        console.log(`      catalog write refused in ${Math.round(ms)} ms: ${res.status} ${JSON.stringify(res.body)}`);
        expect(res.status, JSON.stringify(res.body)).to.be.oneOf([503, 507]);
        expect(res.headers.get('retry-after')).to.match(/^\d+$/);
        expect(ms, 'refused at once').to.be.below(1000);
      }
    }
    // Once the catalog process has stopped (its journal refuses more writes), and while it comes
    // back from its journal, an upload is refused at once too, whichever front-door process takes it.
    await waitFor('the catalog process to stop', async () => /catalog process stopped/.test(tree.output()), 5000, 5);
    const started = performance.now();
    const res = await uploadAcknowledged(tree, ack, await noisyJpeg(++n), `full/${n}`);
    const ms = performance.now() - started;
    console.log(`      upload on the full disk: ${res.status} in ${Math.round(ms)} ms`);
    expect(res.status, JSON.stringify(res.body)).to.be.oneOf([503, 507]);
    expect(ms, 'refused at once').to.be.below(1000);
    expect(failedAt, 'a catalog write was refused').to.be.at.least(0);
    await expectHealthStorageFailing();
    fs.rmSync(filler);
    const seconds = await secondsUntilUploadsWork();
    console.log(`      catalog write refused after ${failedAt} projects; uploads accepted again ${seconds.toFixed(1)} s after space was freed`);
    expect(tree.output()).to.match(/catalog process stopped/);
    await assertNothingLost(tree, ack);
  });
});
