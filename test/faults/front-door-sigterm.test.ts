// Fault 5: SIGTERM to the front door while uploads are in flight. The front door runs as its own
// process (`node dist/src/web/server.js`), sharing Redis, catalog, storage and workers with a test
// service. Every upload either completes (200) or fails cleanly (connection refused/reset or a
// 5xx), the process exits 0, and after the jobs settle nothing is half-stored.
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { freePort } from '../../scripts/lib/redis-server.js';
import { jpeg } from '../fixtures/images.js';
import { upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { assertConsistent, exited, figure, queuesSettled, SHORT_LOCKS, sleep, stopChild, waitFor } from './fault-helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const SERVER_ENTRY = path.resolve(here, '../../src/web/server.js');

type Outcome = { kind: 'ok'; publicId: string } | { kind: 'http-error'; status: number } | { kind: 'connection-error'; code: string };

async function startFrontDoor(env: Record<string, string>): Promise<{ child: ChildProcess; baseUrl: string }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = fork(SERVER_ENTRY, [], { env: { ...process.env, ...env, PORT: String(port), BASE_URL: baseUrl }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.on('message', (m: { type?: string }) => m?.type === 'listening' && resolve());
    child.once('exit', (code) => reject(new Error(`front door exited with code ${code}`)));
  });
  return { child, baseUrl };
}

/** A multipart upload sent by hand, so the test controls when the body's second half goes out. */
function multipart(bytes: Buffer, filename: string): { head: Buffer; tail: Buffer; contentType: string } {
  const boundary = `----pictor${Math.random().toString(16).slice(2)}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: image/jpeg\r\n\r\n`),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const half = Math.floor(body.length / 2);
  return { head: body.subarray(0, half), tail: body.subarray(half), contentType: `multipart/form-data; boundary=${boundary}` };
}

function slowUpload(baseUrl: string, key: string, bytes: Buffer, filename: string) {
  const { head, tail, contentType } = multipart(bytes, filename);
  const req = http.request(`${baseUrl}/upload`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': contentType, 'Content-Length': String(head.length + tail.length) },
  });
  const response = new Promise<Outcome>((resolve) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode === 200) resolve({ kind: 'ok', publicId: filename.replace(/\.jpg$/, '') });
        else resolve({ kind: 'http-error', status: res.statusCode ?? 0 });
      });
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ kind: 'connection-error', code: err.code ?? err.message }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ kind: 'connection-error', code: err.code ?? err.message }));
    // Destroyed by us before any response: no 'error' is emitted, only 'close'.
    req.on('close', () => resolve({ kind: 'connection-error', code: 'closed' }));
  });
  const headWritten = new Promise<void>((resolve) => req.write(head, () => resolve()));
  return { response, headWritten, finish: () => req.end(tail), abort: () => req.destroy() };
}

/** True once a new connection to the front door is refused (it has stopped listening). */
function refusesConnections(baseUrl: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(new URL(baseUrl).port), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

async function fetchUpload(baseUrl: string, key: string, bytes: Buffer, filename: string): Promise<Outcome> {
  try {
    const res = await upload(baseUrl, { key, bytes, filename });
    return res.status === 200 ? { kind: 'ok', publicId: filename.replace(/\.jpg$/, '') } : { kind: 'http-error', status: res.status };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { kind: 'connection-error', code: cause?.code ?? cause?.message ?? String(err) };
  }
}

describe('fault 5: SIGTERM to the front door during in-flight uploads', function () {
  this.timeout(60_000);
  let svc: TestService;
  let frontDoor: ChildProcess | null = null;

  /** Upload jobs of this user whose public id starts with `prefix`, in any state. */
  async function uploadJobsOf(userId: string, prefix: string): Promise<number> {
    const jobs = await svc.deps.jobs.queues['upload-finalize'].getJobs(['waiting', 'prioritized', 'active', 'completed', 'failed', 'delayed']);
    return jobs.filter((j) => j?.data.userId === userId && j.data.publicId.startsWith(prefix)).length;
  }

  before(async () => {
    svc = await TestService.start({ workers: 1, env: { ...SHORT_LOCKS } });
  });
  after(async () => {
    if (frontDoor) await stopChild(frontDoor, 'SIGKILL');
    await svc?.stop();
  });

  it('in-flight uploads complete or fail cleanly; nothing is half-stored', async () => {
    const user = await svc.createUser();
    const fd = await startFrontDoor(svc.env);
    frontDoor = fd.child;
    const images = await Promise.all(Array.from({ length: 4 }, (_, i) => jpeg(900 + i * 20, 700)));

    // 20 uploads queued at the workers, 2 whose body is half sent, 1 the client will abandon.
    const inFlight = Array.from({ length: 20 }, (_, i) => fetchUpload(fd.baseUrl, user.key, images[i % 4], `fast-${i}.jpg`));
    const slow = [0, 1].map((i) => slowUpload(fd.baseUrl, user.key, images[i], `slow-${i}.jpg`));
    const abandoned = slowUpload(fd.baseUrl, user.key, images[2], 'abandoned.jpg');
    // In flight for sure: every fast upload has its job queued (the front door took the request
    // and waits for the worker), and the slow bodies' first halves are written.
    await Promise.all([...slow, abandoned].map((s) => s.headWritten));
    await waitFor('the 20 fast uploads to be queued', async () => (await uploadJobsOf(user.userId, 'fast-')) >= inFlight.length, 30_000, 20);

    const signalledAt = Date.now();
    const exit = new Promise<number | null>((resolve) => fd.child.once('exit', (code) => resolve(code)));
    fd.child.kill('SIGTERM');
    await waitFor('the front door to refuse new connections', () => refusesConnections(fd.baseUrl), 10_000, 20);
    // After the signal: new connections are refused; started bodies are still read to the end.
    const late = Array.from({ length: 4 }, (_, i) => fetchUpload(fd.baseUrl, user.key, images[i], `late-${i}.jpg`));
    for (const s of slow) s.finish();
    abandoned.abort();

    const outcomes = await Promise.all([...inFlight, ...slow.map((s) => s.response), ...late, abandoned.response]);
    const code = await exit;
    const shutdownMs = Date.now() - signalledAt;
    frontDoor = null;
    await exited(fd.child);
    expect(code, 'front door exit code').to.equal(0);

    for (const o of outcomes) {
      if (o.kind === 'http-error') expect(o.status, 'only server-side failures').to.be.at.least(500);
    }
    const ok = outcomes.filter((o): o is Extract<Outcome, { kind: 'ok' }> => o.kind === 'ok');
    const late200 = (await Promise.all(late)).filter((o) => o.kind === 'ok');
    expect(late200, 'uploads started after SIGTERM are refused').to.have.length(0);
    // Requests in flight at the signal were finished, the slow bodies included.
    for (const s of await Promise.all(slow.map((x) => x.response))) expect(s.kind).to.equal('ok');
    expect(ok.length).to.be.at.least(22);
    figure(
      `fault 5: SIGTERM with ${inFlight.length + 3} uploads in flight: ${ok.length} × 200, ` +
        `${outcomes.filter((o) => o.kind === 'connection-error').length} connection errors, ${outcomes.filter((o) => o.kind === 'http-error').length} × 5xx; exited 0 after ${shutdownMs} ms`,
    );

    // Once the queued jobs have run: every 200 is catalogued and stored, and catalog, storage and
    // usage agree with no staged leftovers (the abandoned upload left nothing).
    await queuesSettled(svc.deps.jobs);
    const rows = await svc.deps.catalog.images.find({ userId: user.userId }, { publicId: 1 }).lean();
    const publicIds = new Set(rows.map((r) => r.publicId));
    for (const o of ok) expect(publicIds.has(o.publicId), `${o.publicId} catalogued`).to.equal(true);
    expect(publicIds.has('abandoned')).to.equal(false);
    const state = await assertConsistent(svc.deps.catalog, svc.deps.storage, user.userId);
    expect(state.images).to.equal(rows.length);
  });

  it('a request arriving after SIGTERM on a connection opened before it gets 503 + Retry-After, and the connection closes', async () => {
    const user = await svc.createUser();
    const fd = await startFrontDoor(svc.env);
    frontDoor = fd.child;
    const { head, tail, contentType } = multipart(await jpeg(400, 300), 'before-sigterm.jpg');
    const socket = net.connect(Number(new URL(fd.baseUrl).port), '127.0.0.1');
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // Request 1 is in flight (headers and half its body sent) when the signal comes.
    socket.write(`POST /upload HTTP/1.1\r\nHost: x\r\nX-API-Key: ${user.key}\r\nContent-Type: ${contentType}\r\nContent-Length: ${head.length + tail.length}\r\n\r\n`);
    socket.write(head);
    await sleep(300);
    const exit = new Promise<number | null>((resolve) => fd.child.once('exit', (code) => resolve(code)));
    fd.child.kill('SIGTERM');
    await waitFor('the front door to refuse new connections', () => refusesConnections(fd.baseUrl), 10_000, 20);
    // Its body's end and request 2 (set B) follow on the same keep-alive connection.
    socket.write(tail);
    socket.write(`GET /cdn/usage HTTP/1.1\r\nHost: x\r\nX-API-Key: ${user.key}\r\n\r\n`);
    await closed;
    expect(await exit).to.equal(0);
    frontDoor = null;
    const responses = received.split(/(?=HTTP\/1\.1 )/);
    expect(responses, received).to.have.length(2);
    expect(responses[0]).to.match(/^HTTP\/1\.1 200/);
    expect(responses[1]).to.match(/^HTTP\/1\.1 503/);
    expect(responses[1]).to.match(/\r\nRetry-After: 1\r\n/i);
    expect(responses[1]).to.match(/\r\nConnection: close\r\n/i);
    expect(JSON.parse(responses[1].slice(responses[1].indexOf('\r\n\r\n') + 4)).detail).to.match(/shutting down/);
  });
});
