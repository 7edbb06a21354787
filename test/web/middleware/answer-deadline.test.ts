// The answer deadline on a real Express app over real HTTP: a GET whose handler waits past the
// deadline gets 504 with Retry-After at the deadline; the handler's late answer is dropped without
// breaking the keep-alive connection; a GET answered in time and a slow POST are left alone.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { answerDeadline } from '../../../src/web/middleware/answer-deadline.js';
import { errorHandler } from '../../../src/web/middleware/error-handler.js';

const DEADLINE_MS = 300;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('answerDeadline', function () {
  this.timeout(10_000);
  let server: http.Server;
  let base: string;
  let lateHandlerFinished = false;

  before(async () => {
    const app = express();
    app.use(answerDeadline(DEADLINE_MS));
    app.get('/slow', async (_req, res) => {
      await sleep(DEADLINE_MS * 3);
      lateHandlerFinished = true;
      res.json({ late: true });
    });
    app.get('/fast', (_req, res) => void res.json({ ok: true }));
    app.post('/slow', async (_req, res) => {
      await sleep(DEADLINE_MS * 2);
      res.json({ posted: true });
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
    expect(JSON.parse(await res.text()).detail).to.include(`${DEADLINE_MS} ms`);
    expect(elapsed).to.be.at.least(DEADLINE_MS - 20).and.below(DEADLINE_MS * 3);
    await sleep(DEADLINE_MS * 3);
    expect(lateHandlerFinished, 'the handler ran to its end').to.equal(true);
    // The same keep-alive agent still works after the late answer was dropped.
    expect((await fetch(`${base}/fast`)).status).to.equal(200);
  });

  it('leaves a GET answered in time and a slow POST alone', async () => {
    expect((await fetch(`${base}/fast`)).status).to.equal(200);
    const posted = await fetch(`${base}/slow`, { method: 'POST' });
    expect(posted.status).to.equal(200);
    expect(await posted.json()).to.deep.equal({ posted: true });
  });
});
