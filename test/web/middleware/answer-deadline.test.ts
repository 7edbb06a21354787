// The answer deadline on a real Express app over real HTTP: a GET or POST whose handler waits past
// JOB_TIMEOUT_MS (+ the grace) gets 504 with Retry-After then; the handler's late answer is dropped
// without breaking the keep-alive connection; a POST's clock starts once its body is read.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { ANSWER_GRACE_MS, answerDeadline } from '../../../src/web/middleware/answer-deadline.js';
import { errorHandler } from '../../../src/web/middleware/error-handler.js';

const JOB_TIMEOUT_MS = 300;
const DEADLINE_MS = JOB_TIMEOUT_MS + ANSWER_GRACE_MS;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('answerDeadline', function () {
  this.timeout(10_000);
  let server: http.Server;
  let base: string;
  let lateHandlerFinished = false;

  before(async () => {
    const app = express();
    app.use(answerDeadline(JOB_TIMEOUT_MS));
    app.get('/slow', async (_req, res) => {
      await sleep(DEADLINE_MS * 3);
      lateHandlerFinished = true;
      res.json({ late: true });
    });
    app.get('/fast', (_req, res) => void res.json({ ok: true }));
    app.post('/slow', async (req, res) => {
      for await (const chunk of req) void chunk; // reads the body, then waits past the deadline
      await sleep(DEADLINE_MS * 3);
      res.json({ posted: true });
    });
    app.post('/read-slowly', async (req, res) => {
      let bytes = 0;
      for await (const chunk of req) bytes += (chunk as Buffer).length;
      res.json({ bytes });
    });
    app.use(errorHandler);
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('answers a GET still waiting at the deadline with 504 and Retry-After, and drops the late answer', async () => {
    const started = Date.now();
    const res = await fetch(`${base}/slow`);
    const elapsed = Date.now() - started;
    expect(res.status).to.equal(504);
    expect(res.headers.get('retry-after')).to.match(/^\d+$/);
    expect(JSON.parse(await res.text()).detail).to.include(`${JOB_TIMEOUT_MS} ms`);
    expect(elapsed).to.be.at.least(DEADLINE_MS - 20).and.below(DEADLINE_MS * 3);
    await sleep(DEADLINE_MS * 3);
    expect(lateHandlerFinished, 'the handler ran to its end').to.equal(true);
    // The same keep-alive agent still works after the late answer was dropped.
    expect((await fetch(`${base}/fast`)).status).to.equal(200);
  });

  it('answers a POST whose body was read and whose handler waits past the deadline with 504', async () => {
    const started = Date.now();
    const res = await fetch(`${base}/slow`, { method: 'POST', body: 'x'.repeat(1000) });
    expect(res.status).to.equal(504);
    expect(res.headers.get('retry-after')).to.match(/^\d+$/);
    expect(Date.now() - started).to.be.below(DEADLINE_MS * 3);
  });

  it('starts the clock of a POST when its body is complete: a body sent slowly over longer than the deadline is answered', async () => {
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (let i = 0; i < 4; i++) {
          controller.enqueue(new Uint8Array(100));
          await sleep(DEADLINE_MS / 2);
        }
        controller.close();
      },
    });
    const res = await fetch(`${base}/read-slowly`, { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ bytes: 400 });
    expect((await fetch(`${base}/fast`)).status).to.equal(200);
  });
});
