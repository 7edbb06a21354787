// Client body errors on every JSON route: wrong charsets, undecodable or
// unknown Content-Encodings, wrong content types, truncated, huge and deeply nested bodies are
// answered 4xx in set B's shape, never 500. Real HTTP through the front door.
import { expect } from 'chai';
import zlib from 'node:zlib';
import { sendRaw, type RawAnswer } from '../harness/multipart.js';
import { TestService } from '../harness/test-service.js';
import type { Credential } from '../../src/catalog/api-keys.js';

interface JsonRoute {
  method: string;
  path: string;
  /** A body the route accepts in form (it may still refuse it for what it names). */
  body: object;
}

const ROUTES: JsonRoute[] = [
  { method: 'DELETE', path: '/cdn/images', body: { imageIds: ['0123456789abcdef01234567'] } },
  { method: 'POST', path: '/cdn/projects', body: { name: 'Fuzzed' } },
  { method: 'PATCH', path: '/cdn/projects', body: { projectId: '0123456789abcdef01234567', name: 'Renamed' } },
  { method: 'DELETE', path: '/cdn/projects', body: { projectId: '0123456789abcdef01234567' } },
];

function nested(depth: number): string {
  return '{"imageIds":' + '['.repeat(depth) + ']'.repeat(depth) + ',"name":' + '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) + '}';
}

describe('JSON routes: client body errors are 4xx in set B shape, never 500', function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: Credential;

  before(async () => {
    svc = await TestService.start({ workers: 0 });
    user = await svc.createUser();
  });
  after(async () => svc?.stop());

  function expect4xx(res: RawAnswer, label: string, status?: number): void {
    const what = `${label}: ${res.status} ${JSON.stringify(res.body)}`;
    if (status !== undefined) expect(res.status, what).to.equal(status);
    expect(res.status, what).to.be.within(400, 499);
    expect(Object.keys(res.body ?? {}), what).to.deep.equal(['detail']);
    const detail = res.body.detail as unknown;
    if (typeof detail === 'string') expect(detail.length, what).to.be.greaterThan(0);
    else expect((detail as unknown[]).length, what).to.be.greaterThan(0);
    expect(JSON.stringify(res.body), what).not.to.match(/undefined|internal server error/i);
  }

  for (const route of ROUTES) {
    describe(`${route.method} ${route.path}`, () => {
      const send = (body: Buffer | string, headers: Record<string, string>, extra: { chunked?: boolean; contentType?: string } = {}) =>
        sendRaw({
          url: svc.url(route.path),
          method: route.method,
          body: Buffer.isBuffer(body) ? body : Buffer.from(body),
          headers: { 'X-API-Key': user.key, ...headers },
          contentType: extra.contentType ?? 'application/json',
          chunked: extra.chunked,
        });
      const json = JSON.stringify(route.body);

      it('unsupported charsets → 415 (latin1, a made-up one); utf-16 with UTF-8 bytes → 4xx', async () => {
        expect4xx(await send(json, {}, { contentType: 'application/json; charset=latin1' }), 'latin1', 415);
        expect4xx(await send(json, {}, { contentType: 'application/json; charset=x-klingon' }), 'x-klingon', 415);
        expect4xx(await send(json, {}, { contentType: 'application/json; charset=utf-16' }), 'utf-16');
      });

      it('Content-Encoding gzip / deflate / br over a body that is not compressed → 400; unknown encodings → 415', async () => {
        for (const encoding of ['gzip', 'deflate', 'br']) expect4xx(await send(json, { 'Content-Encoding': encoding }), encoding, 400);
        for (const encoding of ['zstd', 'x-made-up', 'gzip, gzip']) expect4xx(await send(json, { 'Content-Encoding': encoding }), encoding, 415);
        // A gzip stream cut in half.
        const gz = zlib.gzipSync(Buffer.from(json));
        expect4xx(await send(gz.subarray(0, Math.floor(gz.length / 2)), { 'Content-Encoding': 'gzip' }), 'truncated gzip', 400);
      });

      it('a real gzip body is read (the answer is about its content, not its encoding)', async () => {
        const res = await send(zlib.gzipSync(Buffer.from(json)), { 'Content-Encoding': 'gzip' });
        expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 404, 409, 422]);
      });

      it('wrong content types, non-JSON, truncated JSON, JSON that is not an object → 4xx', async () => {
        expect4xx(await send(json, {}, { contentType: 'text/plain' }), 'text/plain');
        expect4xx(await send('imageIds=a&name=b', {}, { contentType: 'application/x-www-form-urlencoded' }), 'form');
        expect4xx(await send('not json at all', {}), 'not json', 400);
        expect4xx(await send(json.slice(0, json.length - 5), {}), 'truncated', 400);
        expect4xx(await send('', {}), 'empty');
        for (const body of ['null', '[]', '"text"', '42', '[1,2,3]']) expect4xx(await send(body, {}), body);
        expect4xx(await send(Buffer.from([0xff, 0xfe, 0x00, 0x7b]), {}), 'binary', 400);
      });

      it('huge bodies → 413, with and without Content-Length', async () => {
        const huge = JSON.stringify({ ...route.body, padding: 'x'.repeat(300 * 1024) });
        expect4xx(await send(huge, {}), 'huge', 413);
        expect4xx(await send(huge, {}, { chunked: true }), 'huge chunked', 413);
        expect4xx(await send(zlib.gzipSync(Buffer.from(huge)), { 'Content-Encoding': 'gzip' }), 'huge once inflated', 413);
      });

      it('deeply nested bodies → 4xx', async () => {
        expect4xx(await send(nested(2000), {}), 'nested 2000');
        expect4xx(await send(nested(20_000), {}), 'nested 20000');
      });
    });
  }

  it('the front door is still healthy afterwards', async () => {
    const res = await fetch(svc.url('/cdn/projects'), { headers: { 'X-API-Key': user.key } });
    expect(res.status).to.equal(200);
  });
});
