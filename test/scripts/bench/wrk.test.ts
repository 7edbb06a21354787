// The bench's wrk engine counts what the bench's rows need: successes, answers ≥ 400 as failures,
// latencies in ms; an answer wrk would count as a success without being a 2xx fails the run.
// wrk is installed by `npm run setup`.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runWrk, suitsWrk, wrkVersion } from '../../../scripts/bench/lib/wrk.js';

describe('bench wrk engine', () => {
  let server: http.Server;
  let origin: string;
  const seen = new Set<string>();

  before(async function () {
    if (!wrkVersion()) throw new Error('wrk is not installed: run `npm run setup`');
    server = http.createServer((req, res) => {
      seen.add(String(req.headers['x-probe']));
      if (req.url === '/ok') res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      else if (req.url === '/moved') res.writeHead(302, { location: '/ok' }).end();
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server?.close());

  it('takes fixed GETs only', () => {
    expect(suitsWrk({ origin: 'x', connections: 1, paths: ['/a'] })).to.equal(true);
    expect(suitsWrk({ origin: 'x', connections: 1, paths: ['/a', '/b'] })).to.equal(false);
    expect(suitsWrk({ origin: 'x', connections: 1, pathTemplate: '/a/{n}' })).to.equal(false);
    expect(suitsWrk({ origin: 'x', connections: 1, method: 'POST', paths: ['/a'] })).to.equal(false);
    expect(suitsWrk({ origin: 'x', connections: 1, amount: 10, paths: ['/a'] })).to.equal(false);
  });

  it('counts 2xx answers and their latency, and sends the headers', async () => {
    const r = await runWrk({ origin, connections: 2, durationSec: 1, paths: ['/ok'], headers: { 'X-Probe': 'yes' } });
    expect(r.ok).to.be.greaterThan(100);
    expect(r.non2xx).to.equal(0);
    expect(r.rps).to.be.closeTo(r.ok / r.durationSec, 1e-6);
    expect(r.durationSec).to.be.within(0.9, 2);
    expect(r.p50).to.be.greaterThan(0).and.at.most(r.p99);
    expect(seen.has('yes')).to.equal(true);
  });

  it('counts 4xx answers as failures', async () => {
    const r = await runWrk({ origin, connections: 2, durationSec: 1, paths: ['/missing'] });
    expect(r.ok).to.equal(0);
    expect(r.non2xx).to.equal(r.requests).and.be.greaterThan(100);
  });

  it('refuses a target answering 3xx (wrk would count it as a success)', async () => {
    let error: unknown;
    await runWrk({ origin, connections: 1, durationSec: 1, paths: ['/moved'] }).catch((err: unknown) => (error = err));
    expect(String(error)).to.match(/302/);
  });
});
