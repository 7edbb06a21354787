// Signed URLs may expire: `exp` is signed with the rest, GET /generate/srcset
// takes `ttl`, an expired URL is refused, and the access log never holds a signature.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import sharp from 'sharp';
import type { Credential } from '../../src/catalog/api-keys.js';
import { signedTransformUrl } from '../../src/imaging/signing.js';
import { createApp } from '../../src/web/app.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('signed URLs: expiry and redaction', function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: Credential;
  let src: string;

  before(async () => {
    svc = await TestService.start();
    user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(800, 500), query: { public_id: 'signed' } });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    src = up.body.public_url;
  });
  after(async () => svc?.stop());

  const srcset = (query: string) => request(svc.url(`/generate/srcset?src=${encodeURIComponent(src)}&${query}`), { key: user.key });

  it('GET /generate/srcset?ttl=… hands out URLs whose signed exp is now + ttl; they load until then', async () => {
    const before = nowSeconds();
    const res = await srcset('w=200,300&ttl=600');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const urls = (res.body.srcset as string).split(/,\s+/).map((e) => e.split(' ')[0]);
    for (const url of urls) {
      const exp = Number(new URL(url).searchParams.get('exp'));
      expect(exp).to.be.within(before + 600, nowSeconds() + 600);
      const image = await request(url);
      expect(image.status).to.equal(200);
      expect((await sharp(image.bytes).metadata()).width).to.equal(Number(new URL(url).searchParams.get('w')));
      // exp is covered by the signature: moving it breaks the URL.
      const moved = new URL(url);
      moved.searchParams.set('exp', String(exp + 3600));
      const tampered = await request(moved.toString());
      expect(tampered.status).to.equal(401);
      expect(tampered.body).to.deep.include({ type: 'unauthorized_error', status_code: 401 });
    }
    // Without ttl: no exp, as before.
    const plain = await srcset('w=200');
    expect(new URL(plain.body.default).searchParams.has('exp')).to.equal(false);
    expect((await request(plain.body.default)).status).to.equal(200);
  });

  it('an expired URL is refused with 403 naming the expiry; bad ttl values are 400', async () => {
    const exp = nowSeconds() - 1;
    const url = signedTransformUrl(svc.baseUrl, { src, w: 120, f: 'jpeg', exp }, { kid: user.keyId, secret: user.secret });
    const res = await request(url);
    expect(res.status).to.equal(403);
    expect(res.body).to.deep.include({ type: 'request_error', status_code: 403 });
    expect(res.body.msg).to.include(`expired at ${new Date(exp * 1000).toISOString()}`);
    for (const ttl of ['0', '-5', 'soon', String(366 * 24 * 3600)]) {
      const bad = await srcset(`ttl=${ttl}`);
      expect(bad.status, ttl).to.equal(400);
      expect(bad.body.msg).to.match(/ttl/);
    }
  });

  it('the access log redacts sig (a logged signature would be a working URL)', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    // The real app and its dependencies, with a logger whose lines the test can read.
    const app = createApp({ ...svc.deps, log: pino({ level: 'info' }, sink) });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const url = signedTransformUrl(base, { src, w: 130, f: 'jpeg' }, { kid: user.keyId, secret: user.secret });
      const sig = new URL(url).searchParams.get('sig')!;
      expect((await request(url)).status).to.equal(200);
      expect((await request(url.replace(/sig=[^&]+/, 'sig=wrong'))).status).to.equal(401);
      await new Promise((r) => setTimeout(r, 100));
      const logged = lines.map((l) => JSON.parse(l) as { req?: { url?: string } }).filter((l) => l.req?.url?.startsWith('/transform'));
      expect(logged).to.have.length(2);
      for (const line of logged) {
        expect(line.req!.url).to.include('sig=[redacted]');
        expect(line.req!.url).to.include('kid=');
      }
      expect(lines.join('\n')).not.to.include(sig);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
