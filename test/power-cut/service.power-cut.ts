// Power cuts through the whole service (`npm run test:power-cut`): `npm start` on embedded
// defaults, every Node process on the power-cut file system, cut at many points — right after
// uploads were answered, with uploads in flight, during replacements and deletes, right after
// async uploads were answered 202, right after `keys create` printed its key, and while the
// catalog compacts over and over. After each cut the service starts on what is left and
// everything acknowledged is there (assertNothingLost: listed, same bytes, transforms; deletes
// stay gone; usage equals the listing; CLI keys authenticate; projects listed).
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { BUFFERED_UPLOAD_BYTES } from '../../src/web/services/staging-engine.js';
import { gradientJpeg } from '../../scripts/lib/generated-images.js';
import { request, upload } from '../harness/http.js';
import { assertNothingLost, distinctJpeg, nothingYet, sha256, sleep, stagedUploadsFinished, uploadAcknowledged, uploadWhileCompacting, type PictorTree } from '../faults/crash-helpers.js';
import { PowerCutSite } from './power-cut-site.js';

/** Lists by public id until every expected one is there with its bytes (their jobs run after the start), or 60 s pass. */
async function expectListedByPublicId(tree: PictorTree, expected: Map<string, string>): Promise<Map<string, { imageId: string; public_url: string }>> {
  const found = new Map<string, { imageId: string; public_url: string }>();
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250)) {
    const page = await request(tree.url('/cdn/images?limit=100'), { key: tree.key });
    for (const image of page.body.images as { imageId: string; public_url: string; public_id: string }[]) if (expected.has(image.public_id)) found.set(image.public_id, image);
    if (found.size === expected.size) break;
  }
  expect([...expected.keys()].filter((id) => !found.has(id)), 'uploads answered 202 that never appeared').to.deep.equal([]);
  for (const [publicId, image] of found) expect(sha256((await request(image.public_url)).bytes), publicId).to.equal(expected.get(publicId));
  return found;
}

/** A JPEG of noise: large for its size (about 2 bytes a pixel at quality 95). */
const noisyJpeg = (width: number, height: number) => sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();

/** GET /jobs/{id} until it is no longer queued or running (30 s at most); it must never be 404. */
async function waitForJob(tree: PictorTree, jobId: string): Promise<{ state: string; result: { imageId: string } }> {
  for (const deadline = Date.now() + 30_000; ; await sleep(200)) {
    const res = await request(tree.url(`/jobs/${jobId}`), { key: tree.key });
    expect(res.status, `GET /jobs/${jobId}: ${JSON.stringify(res.body)}`).to.equal(200);
    if (!['queued', 'waiting', 'active', 'delayed', 'prioritized'].includes(res.body.state as string) || Date.now() > deadline) return res.body;
  }
}

describe('power cut: the whole npm start on a file system that drops what was not fsynced', function () {
  this.timeout(180_000);
  let site: PowerCutSite;
  const ack = nothingYet();
  let n = 0;

  before(async () => {
    site = await PowerCutSite.create();
    await site.start();
  });
  after(async () => site?.remove());

  async function cutAndRestart(extra: Record<string, string> = {}): Promise<PictorTree> {
    const report = await site.cut();
    const tree = await site.start(extra);
    console.log(`      cut ${site.cuts}: ${report.files} files kept (${report.emptied} never fsynced: empty); ${/reconcile .*/.exec(tree.output())?.[0]?.slice(0, 160) ?? ''}`);
    return tree;
  }

  it('right after uploads into a new project were answered', async () => {
    const tree = site.tree!;
    const project = await request(tree.url('/cdn/projects'), { method: 'POST', key: tree.key, json: { name: 'power' } });
    expect(project.status, JSON.stringify(project.body)).to.equal(200);
    ack.projects.push(project.body.slug as string);
    for (let i = 0; i < 5; i++) {
      const res = await uploadAcknowledged(tree, ack, await distinctJpeg(++n), `answered/${i}`, { project: project.body.slug as string });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    await assertNothingLost(await cutAndRestart(), ack);
  });

  it('with uploads in flight', async () => {
    const tree = site.tree!;
    let answered = 0;
    const pending = Array.from({ length: 6 }, async (_, i) => {
      const res = await uploadAcknowledged(tree, ack, await gradientJpeg(700 + i * 8, 500, 90), `flight/${i}`).catch(() => null);
      if (res?.status === 200) answered++;
    });
    while (answered < 2) await sleep(5);
    const cut = cutAndRestart();
    await Promise.all(pending);
    const restarted = await cut;
    await stagedUploadsFinished(site.dataDir);
    await assertNothingLost(restarted, ack);
  });

  it('during replacements and deletes', async () => {
    const tree = site.tree!;
    const targets: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await uploadAcknowledged(tree, ack, await distinctJpeg(++n), `del/${i}`);
      targets.push(res.body.imageId as string);
    }
    // Replacements of acknowledged images, answered: the new bytes must be there.
    for (let i = 0; i < 3; i++) expect((await uploadAcknowledged(tree, ack, await distinctJpeg(++n), `answered/${i}`)).status).to.equal(200);
    for (const imageId of targets) {
      const res = await request(tree.url(`/cdn/${imageId}`), { method: 'DELETE', key: tree.key });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      ack.deleted.set(imageId, ack.images.get(imageId)!.url);
      ack.images.delete(imageId);
    }
    await assertNothingLost(await cutAndRestart(), ack);
  });

  it('right after async uploads were answered 202, and again once they ran: every job answers GET /jobs/{id}', async () => {
    // No workers: none of the jobs runs before the first cut, so the staged bytes must have been durable.
    let tree = await site.start({ WORKERS: '0' });
    const expected = new Map<string, string>();
    const jobs = new Map<string, string>();
    for (let i = 0; i < 3; i++) {
      // The first above BUFFERED_UPLOAD_BYTES: staged as a stream, the others from memory.
      const bytes = i === 0 ? await noisyJpeg(1400, 1000) : await distinctJpeg(++n);
      if (i === 0) expect(bytes.length).to.be.above(BUFFERED_UPLOAD_BYTES);
      const res = await upload(tree.baseUrl, { key: tree.key, bytes, filename: `a${i}.jpg`, path: '/cdn/upload', query: { async: 'true' }, fields: { public_id: `async/${i}` }, mime: 'image/jpeg' });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expected.set(`async/${i}`, sha256(bytes));
      jobs.set(res.body.job_id as string, `async/${i}`);
    }
    // The first cut right after the answers, the second after the jobs ran (Redis loses both times).
    for (const round of [1, 2]) {
      tree = await cutAndRestart();
      const listed = await expectListedByPublicId(tree, expected);
      for (const [jobId, publicId] of jobs) {
        const status = await waitForJob(tree, jobId);
        expect(status.state, `job ${jobId} after cut ${round}: ${JSON.stringify(status)}`).to.equal('completed');
        expect(status.result.imageId).to.equal(listed.get(publicId)!.imageId);
      }
    }
    for (const [publicId, image] of await expectListedByPublicId(tree, expected)) {
      ack.images.set(image.imageId, { url: image.public_url, sha256: expected.get(publicId)!, publicId });
    }
    await assertNothingLost(tree, ack);
  });

  it('right after keys create printed a key', async () => {
    ack.keys.push(await site.createKey('power-user'));
    await assertNothingLost(await cutAndRestart(), ack);
  });

  it('while the catalog compacts again and again under uploads', async () => {
    const compacting = { EMBEDDED_CATALOG_COMPACT_BYTES: '4096' };
    const tree = await site.start(compacting);
    const uploads = uploadWhileCompacting(tree, ack, site.dataDir, () => ++n);
    expect(await uploads.compacted, 'compaction ran during the uploads').to.equal(true);
    await sleep(200);
    const cut = cutAndRestart(compacting);
    await uploads.stop().catch(() => undefined); // the streams end: their uploads fail once the power is off
    const restarted = await cut;
    await stagedUploadsFinished(site.dataDir);
    await assertNothingLost(restarted, ack);
  });
});
