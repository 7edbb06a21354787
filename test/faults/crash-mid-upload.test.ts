// Crashes while uploads are in flight, and after 202s whose jobs had not run yet. SIGKILL reaches
// the whole `npm start` tree (see crash-helpers.ts); the same DATA_DIR starts again.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { gradientJpeg } from '../../scripts/lib/generated-images.js';
import { request, upload } from '../harness/http.js';
import { assertNothingLost, nothingYet, sha256, sleep, stagedUploadsFinished, uploadAcknowledged, useCrashSite } from './crash-helpers.js';

describe('crash: SIGKILL of the whole npm start while uploads are in flight', function () {
  this.timeout(300_000);
  const site = useCrashSite({ startTree: false });
  const ack = nothingYet();

  it('mid-upload: answered uploads survive, unanswered ones are whole or absent, counts agree', async () => {
    const running = await site().start();
    // Large enough (~1-2 MB, a few hundred ms of inspection each on 2 cores) that many are in flight at the kill.
    const files = await Promise.all(Array.from({ length: 16 }, (_, i) => gradientJpeg(1600 + i * 8, 1200, 92)));
    let answered = 0;
    const uploads = files.map((bytes, i) =>
      uploadAcknowledged(running, ack, bytes, `mid/${i}`)
        .then((res) => {
          if (res.status === 200) answered++;
          return res.status;
        })
        .catch(() => 'no answer'),
    );
    while (answered < 3) await sleep(5);
    await site().kill();
    const outcomes = await Promise.all(uploads);
    console.log(`      at the kill: ${answered} of 16 answered 200; outcomes ${outcomes.join(' ')}`);
    expect(outcomes.filter((o) => o !== 200).length, 'some uploads were still in flight').to.be.greaterThan(0);

    const tree = await site().start();
    console.log(`      ${/reconcile .*/.exec(tree.output())?.[0]}`);
    // Unanswered uploads whose job survived in Redis finish after the restart.
    await stagedUploadsFinished(site().dataDir);
    await assertNothingLost(tree, ack);
  });

  /** Five async uploads answered 202 by a tree without workers (so none has run), then SIGKILL. */
  async function queueAndKill(prefix: string): Promise<{ jobId: string; bytes: Buffer; publicId: string }[]> {
    const tree = await site().start({ WORKERS: '0' });
    const jobs: { jobId: string; bytes: Buffer; publicId: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const bytes = await gradientJpeg(300 + i, 200 + prefix.length, 80);
      const res = await upload(tree.baseUrl, { key: tree.key, bytes, filename: `a${i}.jpg`, path: '/cdn/upload', query: { async: 'true' }, fields: { public_id: `${prefix}/${i}` }, mime: 'image/jpeg' });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      jobs.push({ jobId: res.body.job_id as string, bytes, publicId: `${prefix}/${i}` });
    }
    await site().kill();
    return jobs;
  }

  async function completeAndList(jobs: { jobId: string; bytes: Buffer; publicId: string }[]) {
    for (const job of jobs) {
      let status: { state: string; result?: { imageId: string; public_url: string } } = { state: 'queued' };
      const deadline = Date.now() + 60_000;
      while (status.state !== 'completed' && Date.now() < deadline) {
        const res = await request(site().tree!.url(`/jobs/${job.jobId}`), { key: site().tree!.key });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        status = res.body as typeof status;
        expect(status.state).to.not.equal('failed');
        if (status.state !== 'completed') await sleep(100);
      }
      expect(status.state, `job ${job.jobId}`).to.equal('completed');
      ack.images.set(status.result!.imageId, { url: status.result!.public_url, sha256: sha256(job.bytes), publicId: job.publicId });
    }
    await assertNothingLost(site().tree!, ack);
    // Each job's durable record holds its outcome once it has run (GET /jobs/{id} answers from it if Redis lost the job).
    await sleep(500);
    const records = path.join(site().dataDir, 'storage', '_jobs');
    const files = fs.readdirSync(records, { recursive: true }).filter((f) => String(f).endsWith('.json'));
    const outcomes = files.map((f) => (JSON.parse(fs.readFileSync(path.join(records, String(f)), 'utf8')) as { outcome?: { ok: boolean } }).outcome?.ok);
    expect(outcomes.filter((ok) => ok === true).length).to.be.at.least(jobs.length);
  }

  it('async: uploads answered 202 before any worker ran them complete after kill and restart, and are listed', async () => {
    const jobs = await queueAndKill('async');
    const tree = await site().start();
    expect(tree.output()).to.match(/5 staged uploads kept for their jobs/);
    await completeAndList(jobs);
  });

  it('async, Redis lost its queue too (as a power cut within its fsync second): the jobs are added again from their records', async () => {
    const jobs = await queueAndKill('lost');
    // appendfsync everysec: a power cut may lose Redis' last second. Here it loses everything.
    fs.rmSync(path.join(site().dataDir, 'redis'), { recursive: true, force: true });
    const tree = await site().start();
    expect(tree.output()).to.match(/5 job\(s\) answered 202 added again from their records/);
    expect(tree.output()).to.match(/5 staged uploads kept for their jobs/);
    await completeAndList(jobs);
  });
});
