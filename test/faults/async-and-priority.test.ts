// Async mode and bulk priority: `Prefer: respond-async` (or ?async=true) answers 202 with a job id;
// GET /jobs/{id} gives its owner the very body the synchronous call returns, and anyone else 404.
// Interactive requests run ahead of a bulk import (X-Pictor-Priority: bulk → BullMQ priority):
// they finish while the import's jobs are still queued.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { writeImageFolder } from '../../scripts/lib/generated-images.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { exited, figure, stopChild, timed, waitFor } from './fault-helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const IMPORT_ENTRY = path.resolve(here, '../../scripts/import.js');
const BULK_FILES = 200;

/** Multipart upload with extra request headers (Prefer, X-Pictor-Priority). */
async function uploadWithHeaders(url: string, key: string, bytes: Buffer, fields: Record<string, string>, headers: Record<string, string>) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([new Uint8Array(bytes)]), 'photo.jpg');
  const res = await fetch(url, { method: 'POST', body: form, headers: { 'X-API-Key': key, ...headers } });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

async function finishedJob(svc: TestService, key: string, statusUrl: string) {
  return waitFor('the async job to finish', async () => {
    const res = await request(statusUrl, { key });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.state === 'completed' || res.body.state === 'failed' ? res.body : null;
  }, 20_000, 50);
}

describe('async mode and bulk priority', function () {
  this.timeout(90_000);
  let svc: TestService;
  const temp: string[] = [];

  before(async () => {
    // One worker process running one job at a time, so a bulk backlog builds up in the queue.
    svc = await TestService.start({ workers: 1, env: { WORKER_CONCURRENCY: '1', API_KEY_CACHE_MS: '5000' } });
  });
  after(async () => {
    await svc?.stop();
    for (const dir of temp) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** An upload answer without its version (each upload of the same id is a new version). */
  const withoutVersion = (body: Record<string, unknown>) => Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'version'));

  it('async upload: 202 + status URL; GET /jobs/{id} returns the body the synchronous call returns', async () => {
    const user = await svc.createUser();
    const bytes = await jpeg(400, 300);
    const accepted = await uploadWithHeaders(svc.url('/cdn/upload'), user.key, bytes, { public_id: 'async/one' }, { Prefer: 'respond-async' });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
    expect(accepted.body.job_id).to.match(/^up-/);
    expect(accepted.body.status_url).to.equal(svc.url(`/jobs/${accepted.body.job_id}`));
    expect(accepted.headers.get('location')).to.equal(accepted.body.status_url);
    const job = await finishedJob(svc, user.key, accepted.body.status_url);
    expect(job.state, JSON.stringify(job)).to.equal('completed');

    // The same upload made synchronously (same id, same bytes) answers with the same document.
    const sync = await uploadWithHeaders(svc.url('/cdn/upload'), user.key, bytes, { public_id: 'async/one' }, {});
    expect(sync.status).to.equal(200);
    expect(withoutVersion(job.result)).to.deep.equal(withoutVersion(sync.body));
    // The second upload replaced the first: a new version (docs/transformations.md, versioned URLs).
    expect(sync.body.version).to.be.a('string').and.not.equal(job.result.version);

    // ?async=true on set A's /upload too.
    const a = await upload(svc.baseUrl, { key: user.key, bytes, filename: 'seta.jpg', query: { async: 'true' } });
    expect(a.status).to.equal(202);
    const aJob = await finishedJob(svc, user.key, a.body.status_url);
    const aSync = await upload(svc.baseUrl, { key: user.key, bytes, filename: 'seta.jpg' });
    expect(withoutVersion(aJob.result)).to.deep.equal(withoutVersion(aSync.body));
  });

  it('async transform: the job result equals the synchronous answer', async () => {
    const user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(800, 600), filename: 'tr.jpg' });
    const url = svc.url(`/transform?src=${encodeURIComponent(up.body.public_url)}&w=240&f=webp`);
    const accepted = await request(url, { key: user.key, headers: { Prefer: 'respond-async' } });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
    expect(accepted.body.job_id).to.match(/^tr-/);
    const job = await finishedJob(svc, user.key, accepted.body.status_url);
    expect(job.state).to.equal('completed');
    const sync = await request(url, { key: user.key });
    expect(sync.status).to.equal(200);
    expect(job.result).to.deep.equal(sync.body);
  });

  it("another user's job id, and an unknown one, answer 404 alike", async () => {
    const owner = await svc.createUser();
    const other = await svc.createUser();
    const accepted = await upload(svc.baseUrl, { key: owner.key, bytes: await jpeg(200, 150), filename: 'mine.jpg', query: { async: 'true' } });
    expect(accepted.status).to.equal(202);
    await finishedJob(svc, owner.key, accepted.body.status_url);
    const foreign = await request(accepted.body.status_url, { key: other.key });
    expect(foreign.status).to.equal(404);
    const unknown = await request(svc.url('/jobs/up-00000000-0000-0000-0000-000000000000'), { key: other.key });
    expect(unknown.status).to.equal(404);
    expect(foreign.body).to.deep.equal(unknown.body);
    expect((await request(accepted.body.status_url)).status, 'no key').to.be.oneOf([401, 422]);
  });

  it('an interactive transform and upload finish while a bulk import is still queued', async () => {
    const user = await svc.createUser();
    const picture = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(1600, 1200), filename: 'interactive.jpg' });
    expect(picture.status).to.equal(200);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-bulk-'));
    temp.push(dir);
    await writeImageFolder(path.join(dir, 'files'), BULK_FILES);
    const report = path.join(dir, 'report.json');

    const importer = spawn(process.execPath, [IMPORT_ENTRY, path.join(dir, 'files'), '--key', user.key, '--concurrency', '32', '--base-url', svc.baseUrl, '--report', report, '--quiet'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let importOutput = '';
    importer.stdout!.on('data', (c: Buffer) => (importOutput += c.toString()));
    try {
      const queue = svc.deps.jobs.queues['upload-finalize'];
      await waitFor('a bulk backlog', async () => (await queue.getJobCounts('prioritized')).prioritized >= 16, 30_000, 20);

      const backlogAfter = async () => (await queue.getJobCounts('prioritized')).prioritized;
      const transform = timed(request(svc.url(`/transform?src=${encodeURIComponent(picture.body.public_url)}&w=800&f=webp`), { key: user.key }).then(async (r) => ({ r, backlog: await backlogAfter(), importing: importer.exitCode === null })));
      const interactiveUpload = timed(upload(svc.baseUrl, { key: user.key, bytes: await jpeg(640, 480), filename: 'urgent.jpg' }).then(async (r) => ({ r, backlog: await backlogAfter(), importing: importer.exitCode === null })));
      const [tr, up] = await Promise.all([transform, interactiveUpload]);

      expect(tr.value.r.status, JSON.stringify(tr.value.r.body)).to.equal(200);
      expect(up.value.r.status, JSON.stringify(up.value.r.body)).to.equal(200);
      // Both were done while the import's jobs were still waiting in the queue.
      expect(tr.value.importing && tr.value.backlog > 0, `transform finished with ${tr.value.backlog} bulk jobs queued`).to.equal(true);
      expect(up.value.importing && up.value.backlog > 0, `upload finished with ${up.value.backlog} bulk jobs queued`).to.equal(true);
      figure(`priority: during a ${BULK_FILES}-file import (concurrency 32, 1 worker × 1): interactive transform ${tr.ms} ms (${tr.value.backlog} bulk jobs still queued), interactive upload ${up.ms} ms (${up.value.backlog} queued)`);

      await exited(importer);
      expect(importer.exitCode, importOutput).to.equal(0);
      const summary = JSON.parse(fs.readFileSync(report, 'utf8')).summary;
      expect(summary).to.include({ total: BULK_FILES, done: BULK_FILES, failed: 0 });
    } finally {
      await stopChild(importer);
    }
  });
});
