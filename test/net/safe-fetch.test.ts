// Tests for src/net/safe-fetch.ts. Every server here listens on 127.0.0.1; addresses such as
// 10.0.0.5 or 169.254.169.254 only ever appear as answers of a fake resolver or as URL literals
// and are refused before any connection is attempted.
import { spawn, type ChildProcess } from 'node:child_process';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { SafeFetchError, isPublicAddress, safeFetch, type SafeFetchOptions } from '../../src/net/safe-fetch.js';

interface TestServer {
  base: string;
  port: number;
  hits: string[];
  hosts: string[];
  close: () => Promise<void>;
}

const openServers: TestServer[] = [];

async function startServer(handler: http.RequestListener = (_req, res) => res.end('ok')): Promise<TestServer> {
  const hits: string[] = [];
  const hosts: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    hosts.push(req.headers.host ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const s: TestServer = {
    base: `http://127.0.0.1:${port}`,
    port,
    hits,
    hosts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  openServers.push(s);
  return s;
}

/** Allows only the loopback address our own test servers listen on. */
const allowLocal = (address: string): boolean => address === '127.0.0.1';

/** A fake resolver answering from a fixed table and counting calls. */
function fakeLookup(table: Record<string, string[]>): {
  lookup: NonNullable<SafeFetchOptions['lookup']>;
  calls: string[];
} {
  const calls: string[] = [];
  return {
    calls,
    lookup: (hostname) => {
      calls.push(hostname);
      const addrs = table[hostname];
      if (!addrs) return Promise.reject(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
      return Promise.resolve(addrs.map((address): LookupAddress => ({ address, family: net.isIP(address) })));
    },
  };
}

async function expectFailure(promise: Promise<unknown>, status: number, code?: string): Promise<SafeFetchError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(SafeFetchError);
    const e = err as SafeFetchError;
    expect(e.status, e.message).to.equal(status);
    if (code) expect(e.code, e.message).to.equal(code);
    return e;
  }
  expect.fail(`expected a SafeFetchError with status ${status}`);
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

describe('net/safeFetch', () => {
  afterEach(async () => {
    await Promise.all(openServers.splice(0).map((s) => s.close()));
  });

  describe('refused targets (never connected to)', () => {
    it('refuses http://127.0.0.1:<port> and the server is not hit', async () => {
      const server = await startServer();
      const err = await expectFailure(safeFetch(`${server.base}/x.png`, { maxBytes: 1000 }), 400, 'BLOCKED_ADDRESS');
      expect(err.message).to.contain('refused: resolves to a private address');
      expect(err.address).to.equal('127.0.0.1');
      expect(server.hits).to.deep.equal([]);
    });

    it('refuses http://localhost (system resolver) and the server is not hit', async () => {
      const server = await startServer();
      await expectFailure(safeFetch(`http://localhost:${server.port}/`, { maxBytes: 1000 }), 400, 'BLOCKED_ADDRESS');
      expect(server.hits).to.deep.equal([]);
    });

    it('refuses http://[::1]', async () => {
      const err = await expectFailure(safeFetch('http://[::1]:8080/', { maxBytes: 1000 }), 400, 'BLOCKED_ADDRESS');
      expect(err.address).to.equal('::1');
    });

    it('refuses the cloud metadata address http://169.254.169.254/ without resolving', async () => {
      const { lookup, calls } = fakeLookup({});
      await expectFailure(
        safeFetch('http://169.254.169.254/latest/meta-data/', { maxBytes: 1000, lookup }),
        400,
        'BLOCKED_ADDRESS',
      );
      expect(calls).to.deep.equal([]);
    });

    it('refuses a hostname that resolves to 10.0.0.5', async () => {
      const { lookup, calls } = fakeLookup({ 'internal.example': ['10.0.0.5'] });
      const err = await expectFailure(
        safeFetch('http://internal.example/a.png', { maxBytes: 1000, lookup }),
        400,
        'BLOCKED_ADDRESS',
      );
      expect(err.address).to.equal('10.0.0.5');
      expect(calls).to.deep.equal(['internal.example']);
    });

    it('refuses when ANY resolved address is private, even if another one is public', async () => {
      const { lookup } = fakeLookup({ 'mixed.example': ['93.184.215.14', '192.168.1.10'] });
      const err = await expectFailure(safeFetch('http://mixed.example/', { maxBytes: 1000, lookup }), 400);
      expect(err.address).to.equal('192.168.1.10');
    });

    it('refuses IPv4-mapped IPv6 and other encodings of private IPv4', async () => {
      await expectFailure(safeFetch('http://[::ffff:10.0.0.1]/', { maxBytes: 10 }), 400, 'BLOCKED_ADDRESS');
      await expectFailure(safeFetch('http://[::ffff:7f00:1]/', { maxBytes: 10 }), 400, 'BLOCKED_ADDRESS');
      await expectFailure(safeFetch('http://2130706433/', { maxBytes: 10 }), 400, 'BLOCKED_ADDRESS'); // 127.0.0.1
      await expectFailure(safeFetch('http://0x7f.1/', { maxBytes: 10 }), 400, 'BLOCKED_ADDRESS');
      await expectFailure(safeFetch('http://0.0.0.0/', { maxBytes: 10 }), 400, 'BLOCKED_ADDRESS');
    });

    it('refuses ftp:// and file:// and other schemes', async () => {
      await expectFailure(safeFetch('ftp://example.com/a.png', { maxBytes: 10 }), 400, 'UNSUPPORTED_SCHEME');
      await expectFailure(safeFetch('file:///etc/passwd', { maxBytes: 10 }), 400, 'UNSUPPORTED_SCHEME');
      await expectFailure(safeFetch('gopher://example.com/', { maxBytes: 10 }), 400, 'UNSUPPORTED_SCHEME');
      await expectFailure(safeFetch('data:image/png;base64,AAAA', { maxBytes: 10 }), 400, 'UNSUPPORTED_SCHEME');
    });

    it('refuses malformed URLs and URLs with credentials', async () => {
      await expectFailure(safeFetch('not a url', { maxBytes: 10 }), 400, 'INVALID_URL');
      await expectFailure(safeFetch('http://user:pw@example.com/', { maxBytes: 10 }), 400, 'CREDENTIALS_IN_URL');
    });

    it('reports DNS failures as 502', async () => {
      const { lookup } = fakeLookup({});
      await expectFailure(safeFetch('http://nowhere.example/', { maxBytes: 10, lookup }), 502, 'DNS_FAILURE');
    });
  });

  describe('isPublicAddress', () => {
    const blocked = [
      '127.0.0.1', '127.255.255.254', '10.0.0.5', '172.16.0.1', '172.31.255.255', '192.168.0.1',
      '169.254.169.254', '100.64.0.1', '100.127.255.255', '0.0.0.0', '0.1.2.3', '224.0.0.1', '239.255.255.250',
      '240.0.0.1', '255.255.255.255', '192.0.0.8', '192.0.2.1', '198.18.0.1', '198.51.100.7', '203.0.113.9',
      '::', '::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%eth0', 'fec0::1', 'ff02::1',
      '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::127.0.0.1', '64:ff9b::a00:1',
      '2002:a00:1::', '2001::1', '2001:db8::1', '100::1', 'not-an-ip', '', '127.1',
    ];
    const allowed = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8'];

    for (const address of blocked) {
      it(`blocks ${address || '(empty)'}`, () => expect(isPublicAddress(address)).to.equal(false));
    }
    for (const address of allowed) {
      it(`allows ${address}`, () => expect(isPublicAddress(address)).to.equal(true));
    }
  });

  describe('fetching from an allowed (test hook) local server', () => {
    it('returns the image body, content type and final URL', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
        res.end(PNG);
      });
      const result = await safeFetch(`${server.base}/pic.png?v=1`, {
        maxBytes: 1000,
        allowedContentTypes: ['image/'],
        allowPrivateForTests: allowLocal,
      });
      expect(result.buffer.equals(PNG)).to.equal(true);
      expect(result.contentType).to.equal('image/png');
      expect(result.finalUrl).to.equal(`${server.base}/pic.png?v=1`);
      expect(server.hits).to.deep.equal(['/pic.png?v=1']);
    });

    it('connects to the checked address, resolving only once, with the original Host header', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(PNG);
      });
      const { lookup, calls } = fakeLookup({ 'images.example': ['127.0.0.1'] });
      const result = await safeFetch(`http://images.example:${server.port}/a.png`, {
        maxBytes: 1000,
        lookup,
        allowPrivateForTests: allowLocal,
      });
      expect(result.buffer.equals(PNG)).to.equal(true);
      expect(calls).to.deep.equal(['images.example']); // no second resolution at connect time
      expect(server.hosts).to.deep.equal([`images.example:${server.port}`]);
    });

    it('accepts a body of exactly maxBytes', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.alloc(1000, 1));
      });
      const result = await safeFetch(server.base, { maxBytes: 1000, allowPrivateForTests: allowLocal });
      expect(result.buffer.length).to.equal(1000);
    });

    it('maps a non-2xx upstream answer to 502 with upstreamStatus', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('nope');
      });
      const err = await expectFailure(
        safeFetch(server.base, { maxBytes: 1000, allowPrivateForTests: allowLocal }),
        502,
        'UPSTREAM_STATUS',
      );
      expect(err.upstreamStatus).to.equal(404);
    });

    it('maps a refused connection to 502', async () => {
      const server = await startServer();
      const port = server.port;
      await server.close();
      await expectFailure(
        safeFetch(`http://127.0.0.1:${port}/`, { maxBytes: 1000, allowPrivateForTests: allowLocal }),
        502,
        'UPSTREAM_UNREACHABLE',
      );
    });
  });

  describe('size cap', () => {
    it('refuses early when Content-Length exceeds maxBytes', async () => {
      let bodyFinished = false;
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': 5_000_000 });
        res.write(Buffer.alloc(1000));
        // The rest would follow later; the client must not wait for it.
        setTimeout(() => {
          bodyFinished = true;
          if (!res.destroyed) res.end(Buffer.alloc(5_000_000 - 1000));
        }, 3000).unref();
      });
      const started = Date.now();
      const err = await expectFailure(
        safeFetch(server.base, { maxBytes: 1000, allowPrivateForTests: allowLocal }),
        413,
        'TOO_LARGE',
      );
      expect(err.message).to.contain('Content-Length');
      expect(Date.now() - started).to.be.below(2000);
      expect(bodyFinished).to.equal(false);
    });

    it('aborts a chunked stream without Content-Length once it passes maxBytes', async () => {
      let chunksWritten = 0;
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' }); // no length: chunked
        const timer = setInterval(() => {
          if (res.destroyed || chunksWritten >= 100) {
            clearInterval(timer);
            if (!res.destroyed) res.end();
            return;
          }
          chunksWritten++;
          res.write(Buffer.alloc(500, 7));
        }, 10);
        res.on('close', () => clearInterval(timer));
      });
      const err = await expectFailure(
        safeFetch(server.base, { maxBytes: 1200, allowPrivateForTests: allowLocal }),
        413,
        'TOO_LARGE',
      );
      expect(err.message).to.not.contain('Content-Length');
      expect(chunksWritten).to.be.below(100); // aborted, not read to the end
    });
  });

  describe('timeouts', () => {
    it('gives up with 504 on a server that trickles the body', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' });
        const timer = setInterval(() => res.write('x'), 100);
        res.on('close', () => clearInterval(timer));
      });
      const started = Date.now();
      await expectFailure(
        safeFetch(server.base, { maxBytes: 1_000_000, totalTimeoutMs: 600, allowPrivateForTests: allowLocal }),
        504,
        'TIMEOUT',
      );
      const elapsed = Date.now() - started;
      expect(elapsed).to.be.at.least(550);
      expect(elapsed).to.be.below(2500);
    });

    it('gives up with 504 when the server never sends headers', async () => {
      const server = await startServer(() => {
        /* never answers */
      });
      await expectFailure(
        safeFetch(server.base, { maxBytes: 1000, totalTimeoutMs: 400, allowPrivateForTests: allowLocal }),
        504,
        'TIMEOUT',
      );
    });

    describe('connect timeout', () => {
      let child: ChildProcess | undefined;
      const fillers: net.Socket[] = [];
      afterEach(() => {
        for (const s of fillers.splice(0)) s.destroy();
        child?.kill('SIGKILL');
        child = undefined;
      });

      it('gives up with 504 when the TCP connection cannot be established', async function () {
        // A listener whose process never accepts (its event loop is blocked) and whose backlog is
        // full: further SYNs are dropped, so connect() hangs, all on 127.0.0.1.
        const script =
          "const s=require('net').createServer();" +
          "s.listen({port:0,host:'127.0.0.1',backlog:1},()=>{process.stdout.write(s.address().port+'\\n');" +
          'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0)})';
        const proc = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
        child = proc;
        const port = await new Promise<number>((resolve, reject) => {
          proc.stdout?.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
          proc.once('error', reject);
        });
        let saturated = false;
        for (let i = 0; i < 20 && !saturated; i++) {
          const s = net.connect(port, '127.0.0.1');
          s.on('error', () => {});
          fillers.push(s);
          saturated = !(await new Promise<boolean>((resolve) => {
            s.once('connect', () => resolve(true));
            setTimeout(() => resolve(false), 300);
          }));
        }
        if (!saturated) this.skip(); // this kernel does not drop SYNs on a full backlog
        const started = Date.now();
        await expectFailure(
          safeFetch(`http://127.0.0.1:${port}/`, {
            maxBytes: 1000,
            connectTimeoutMs: 300,
            allowPrivateForTests: allowLocal,
          }),
          504,
          'CONNECT_TIMEOUT',
        );
        expect(Date.now() - started).to.be.below(2000);
      });
    });
  });

  describe('redirects', () => {
    it('follows a relative redirect and reports the final URL', async () => {
      const server = await startServer((req, res) => {
        if (req.url === '/start') {
          res.writeHead(302, { location: '/final.png' });
          res.end();
        } else {
          res.writeHead(200, { 'content-type': 'image/png' });
          res.end(PNG);
        }
      });
      const result = await safeFetch(`${server.base}/start`, { maxBytes: 1000, allowPrivateForTests: allowLocal });
      expect(result.finalUrl).to.equal(`${server.base}/final.png`);
      expect(result.buffer.equals(PNG)).to.equal(true);
      expect(server.hits).to.deep.equal(['/start', '/final.png']);
    });

    it('refuses a redirect to a private address literal', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
      });
      const err = await expectFailure(
        safeFetch(server.base, { maxBytes: 1000, allowPrivateForTests: allowLocal }),
        400,
        'BLOCKED_ADDRESS',
      );
      expect(err.address).to.equal('169.254.169.254');
    });

    it('refuses a redirect to a hostname that resolves to a private address', async () => {
      const { lookup, calls } = fakeLookup({ 'start.example': ['127.0.0.1'], 'db.internal': ['10.0.0.5'] });
      const server = await startServer((_req, res) => {
        res.writeHead(307, { location: 'http://db.internal/dump' });
        res.end();
      });
      await expectFailure(
        safeFetch(`http://start.example:${server.port}/`, { maxBytes: 1000, lookup, allowPrivateForTests: allowLocal }),
        400,
        'BLOCKED_ADDRESS',
      );
      expect(calls).to.deep.equal(['start.example', 'db.internal']);
    });

    it('refuses a redirect to a non-http scheme', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(301, { location: 'file:///etc/passwd' });
        res.end();
      });
      await expectFailure(
        safeFetch(server.base, { maxBytes: 1000, allowPrivateForTests: allowLocal }),
        400,
        'UNSUPPORTED_SCHEME',
      );
    });

    it('follows exactly maxRedirects (3) redirects, refuses a longer chain', async () => {
      const server = await startServer((req, res) => {
        const m = /^\/r\/(\d+)\?last=(\d+)$/.exec(req.url ?? '');
        const hop = m ? Number(m[1]) : NaN;
        const stop = m ? Number(m[2]) : NaN;
        if (Number.isFinite(hop) && hop < stop) {
          res.writeHead(302, { location: `/r/${hop + 1}?last=${stop}` });
          res.end();
        } else {
          res.writeHead(200, { 'content-type': 'image/png' });
          res.end(PNG);
        }
      });
      // 3 redirects: /r/0 -> /r/1 -> /r/2 -> /r/3 (200)
      const ok = await safeFetch(`${server.base}/r/0?last=3`, { maxBytes: 1000, allowPrivateForTests: allowLocal });
      expect(ok.finalUrl).to.equal(`${server.base}/r/3?last=3`);
      server.hits.length = 0;

      // 4 redirects needed: refused after following 3, the 5th URL is never requested
      await expectFailure(
        safeFetch(`${server.base}/r/0?last=4`, { maxBytes: 1000, allowPrivateForTests: allowLocal }),
        502,
        'TOO_MANY_REDIRECTS',
      );
      expect(server.hits).to.deep.equal(['/r/0?last=4', '/r/1?last=4', '/r/2?last=4', '/r/3?last=4']);
    });

    it('honours a custom maxRedirects of 0', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(302, { location: '/elsewhere' });
        res.end();
      });
      await expectFailure(
        safeFetch(server.base, { maxBytes: 1000, maxRedirects: 0, allowPrivateForTests: allowLocal }),
        502,
        'TOO_MANY_REDIRECTS',
      );
      expect(server.hits).to.deep.equal(['/']);
    });
  });

  describe('content type', () => {
    function serveAs(contentType: string | undefined): http.RequestListener {
      return (_req, res) => {
        if (contentType !== undefined) res.setHeader('content-type', contentType);
        res.end(PNG);
      };
    }

    it('refuses a content type outside allowedContentTypes with 415', async () => {
      const server = await startServer(serveAs('text/html; charset=utf-8'));
      const err = await expectFailure(
        safeFetch(server.base, { maxBytes: 1000, allowedContentTypes: ['image/'], allowPrivateForTests: allowLocal }),
        415,
        'UNSUPPORTED_CONTENT_TYPE',
      );
      expect(err.message).to.contain('text/html');
    });

    it('refuses a missing content type when a list is given', async () => {
      const server = await startServer(serveAs(undefined));
      await expectFailure(
        safeFetch(server.base, { maxBytes: 1000, allowedContentTypes: ['image/'], allowPrivateForTests: allowLocal }),
        415,
      );
    });

    it('matches prefixes case-insensitively', async () => {
      const server = await startServer(serveAs('IMAGE/JPEG'));
      const result = await safeFetch(server.base, {
        maxBytes: 1000,
        allowedContentTypes: ['image/png', 'image/jpeg'],
        allowPrivateForTests: allowLocal,
      });
      expect(result.contentType).to.equal('IMAGE/JPEG');
    });

    it('accepts anything when no list is given', async () => {
      const server = await startServer(serveAs('application/octet-stream'));
      const result = await safeFetch(server.base, { maxBytes: 1000, allowPrivateForTests: allowLocal });
      expect(result.contentType).to.equal('application/octet-stream');
    });
  });
});
