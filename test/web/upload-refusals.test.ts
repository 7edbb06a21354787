// Every refusal of a multipart upload, on every multipart route, at about 1 kB, 100 kB, 5 MB and
// just over the limit: answered within a second with the route's status and
// body, staging empty afterwards, nothing catalogued or counted. Real HTTP (a raw client, to send
// what fetch will not: no boundary, truncated bodies, no Content-Length, an abort mid-upload).
import { expect } from 'chai';
import { Seeded } from '../corpus/malformed-corpus.js';
import { gif, jpeg } from '../fixtures/images.js';
import { multipartBody, sendRaw, type Part, type RawAnswer } from '../harness/multipart.js';
import { TestService } from '../harness/test-service.js';
import { readUsage } from '../../src/catalog/usage.js';
import type { Credential } from '../../src/catalog/api-keys.js';

const LIMIT = 5 * 1024 * 1024 + 512 * 1024; // 5.5 MB: 5 MB fits, "just over" is LIMIT + 1
const SIZES: [string, number][] = [
  ['1 kB', 1024],
  ['100 kB', 100 * 1024],
  ['5 MB', 5 * 1024 * 1024],
  ['just over the limit', LIMIT + 1],
];
const DEMO_TOKEN = 'demo-token-refusals-0123456789';
/** The answer must come this fast: a refusal is decided while the body streams, and answered then. */
const ANSWER_MS = 1000;

interface Route {
  name: string;
  path: string;
  set: 'A' | 'B';
  headers: () => Record<string, string>;
}

/** `bytes` of `head` followed by filler: the type sniff sees `head`, the size is exact. */
function sized(head: Buffer, bytes: number, fill = 0x20): Buffer {
  if (head.length >= bytes) return head.subarray(0, bytes);
  return Buffer.concat([head, Buffer.alloc(bytes - head.length, fill)]);
}

const pseudoRandom = (bytes: number, seed: number) => new Seeded(seed).bytes(bytes);

describe('upload refusals on every multipart route (multer receiver)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let user: Credential;
  let validJpeg: Buffer;
  let gifBytes: Buffer;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  const routes: Route[] = [
    { name: 'POST /upload', path: '/upload', set: 'A', headers: () => ({ 'X-API-Key': user.key }) },
    { name: 'POST /cdn/upload', path: '/cdn/upload', set: 'B', headers: () => ({ 'X-API-Key': user.key }) },
    { name: 'POST /passport-photo/demo/process', path: '/passport-photo/demo/process', set: 'B', headers: () => ({ 'X-Demo-Token': DEMO_TOKEN }) },
  ];

  before(async () => {
    svc = await TestService.start({ env: { MAX_UPLOAD_BYTES: String(LIMIT), DEMO_TOKEN, DEMO_RATE_LIMIT_PER_MIN: '100000' } });
    user = await svc.createUser();
    validJpeg = await jpeg(64, 48);
    gifBytes = await gif();
    process.on('unhandledRejection', onUnhandled);
  });
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    await svc?.stop();
  });

  async function stagingEmpty(): Promise<void> {
    expect((await svc.deps.storage.list('_staging/')).items.map((o) => o.key)).to.deep.equal([]);
  }

  async function expectNothingKept(): Promise<void> {
    await stagingEmpty();
    expect(await svc.deps.catalog.images.countDocuments({ userId: user.userId })).to.equal(0);
    const usage = await readUsage(svc.deps.catalog, user.userId);
    expect(usage.imageCount).to.equal(0);
    expect(usage.storageBytes).to.equal(0);
    expect(unhandled).to.deep.equal([]);
  }

  /** The route's shape: set A {type,msg,status_code}; set B {detail} (422: detail[] at body.file). */
  function expectRefusal(route: Route, res: RawAnswer, status: number, message: RegExp): void {
    const label = `${route.name}: ${JSON.stringify(res.body)} in ${res.ms} ms`;
    expect(res.status, label).to.equal(status);
    expect(res.ms, label).to.be.below(ANSWER_MS);
    if (route.set === 'A') {
      expect(res.body, label).to.deep.equal({ type: status === 401 ? 'unauthorized_error' : 'request_error', msg: res.body.msg, status_code: status });
      expect(res.body.msg, label).to.match(message);
    } else if (status === 422) {
      expect(res.body, label).to.deep.equal({ detail: [{ loc: ['body', 'file'], msg: 'Field required', type: 'missing' }] });
    } else {
      expect(Object.keys(res.body), label).to.deep.equal(['detail']);
      expect(res.body.detail, label).to.match(message);
    }
    expect(JSON.stringify(res.body), label).not.to.include('undefined');
  }

  const send = (route: Route, parts: Part[], extra: { chunked?: boolean; close?: boolean; contentType?: string } = {}) =>
    sendRaw({ url: svc.url(route.path), headers: route.headers(), body: multipartBody(parts, { close: extra.close }), chunked: extra.chunked, contentType: extra.contentType });

  const filePart = (body: Buffer, filename = 'photo.jpg', type = 'image/jpeg'): Part => ({ name: 'file', filename, type, body });

  for (const route of routes) {
    describe(route.name, () => {
      afterEach(expectNothingKept);

      for (const [label, bytes] of SIZES) {
        it(`${label}: unsupported type (GIF), damaged header, random bytes named .jpg → 415`, async () => {
          const damaged = Buffer.from(sized(validJpeg, bytes));
          pseudoRandom(200, bytes).copy(damaged, 0);
          for (const [body, name, type] of [
            [sized(gifBytes, bytes), 'anim.gif', 'image/gif'],
            [damaged, 'damaged.jpg', 'image/jpeg'],
            [pseudoRandom(bytes, 7), 'noise.jpg', 'image/jpeg'],
          ] as const) {
            expectRefusal(route, await send(route, [filePart(body, name, type)]), 415, /unsupported file type/i);
          }
        });

        // The first refusal decided wins: past the limit, the file is refused before the field is read.
        const overLimit = bytes > LIMIT;
        it(`${label}: a form field too long after the file → ${overLimit ? 413 : 400}`, async () => {
          const res = await send(route, [filePart(sized(validJpeg, bytes)), { name: 'project', body: 'p'.repeat(5000) }]);
          if (overLimit) expectRefusal(route, res, 413, /too large/i);
          else expectRefusal(route, res, 400, /field "project" is too long/i);
        });

        it(`${label}: two files → 400`, async () => {
          const file = filePart(sized(validJpeg, Math.min(bytes, LIMIT)));
          expectRefusal(route, await send(route, [file, filePart(validJpeg, 'second.jpg')]), 400, /only one file/i);
        });

        it(`${label}: the file in a field not named "file" → ${route.set === 'A' ? 400 : 422}`, async () => {
          const res = await send(route, [{ name: 'image', filename: 'photo.jpg', type: 'image/jpeg', body: sized(validJpeg, bytes) }]);
          expectRefusal(route, res, route.set === 'A' ? 400 : 422, /no file provided.*named "file"/i);
        });

        it(`${label}: no boundary in Content-Type → 400`, async () => {
          const res = await send(route, [filePart(sized(validJpeg, bytes))], { contentType: 'multipart/form-data' });
          expectRefusal(route, res, 400, /malformed multipart/i);
        });

        it(`${label}: a body cut off before its closing boundary → 400`, async () => {
          const body = multipartBody([filePart(sized(validJpeg, bytes))], { close: false });
          const res = await sendRaw({ url: svc.url(route.path), headers: route.headers(), body: body.subarray(0, body.length - 10) });
          expectRefusal(route, res, 400, /malformed multipart/i);
        });

        it(`${label}: a client that disconnects mid-upload leaves nothing staged`, async () => {
          const body = multipartBody([filePart(sized(validJpeg, bytes))]);
          await sendRaw({ url: svc.url(route.path), headers: route.headers(), body, abortAfter: Math.floor(body.length * 0.8) });
          // The front door notices the close; give it a moment, then check it still answers.
          const deadline = Date.now() + 5000;
          while ((await svc.deps.storage.list('_staging/')).items.length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
          const after = await send(route, [filePart(Buffer.alloc(0))]);
          expect(after.status).to.equal(400);
        });
      }

      it('an empty file → 400', async () => {
        expectRefusal(route, await send(route, [filePart(Buffer.alloc(0))]), 400, /"file" field is empty/i);
      });

      it(`no file part at all → ${route.set === 'A' ? 400 : 422}`, async () => {
        expectRefusal(route, await send(route, [{ name: 'project', body: 'x' }]), route.set === 'A' ? 400 : 422, /no file provided/i);
      });

      it('not multipart at all → ' + (route.set === 'A' ? 400 : 422), async () => {
        const res = await sendRaw({ url: svc.url(route.path), headers: route.headers(), body: Buffer.from('{}'), contentType: 'application/json' });
        expectRefusal(route, res, route.set === 'A' ? 400 : 422, /no file provided/i);
      });

      it('a valid JPEG just over the limit → 413, with and without Content-Length, and a declared length far over it', async () => {
        const big = sized(validJpeg, LIMIT + 1, 0);
        expectRefusal(route, await send(route, [filePart(big)]), 413, /too large.*maximum upload size is 5\.5 MB/i);
        expectRefusal(route, await send(route, [filePart(big)], { chunked: true }), 413, /too large/i);
        const twice = sized(validJpeg, 2 * LIMIT, 0);
        expectRefusal(route, await send(route, [filePart(twice)]), 413, /too large/i);
        expectRefusal(route, await send(route, [filePart(twice)], { chunked: true }), 413, /too large/i);
      });
    });
  }
});
