// Conditional GET and byte ranges on served images, through real HTTP: 304 from If-None-Match or
// If-Modified-Since, 206 for one range, 416 outside the object, and If-Range deciding between the
// range and the whole (current) image. (Node's fetch adds "Cache-Control: no-cache" to every request
// carrying a validator, so these requests also show that it does not prevent a 304.)
import { expect } from 'chai';
import sharp from 'sharp';
import { request } from '../../harness/http.js';
import { TestService } from '../../harness/test-service.js';
import { cdnUpload, tinyJpeg } from '../set-b-helpers.js';
import type { Credential } from '../../../src/catalog/api-keys.js';

describe('image responder: conditional GET and Range', function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: Credential;
  let url: string;
  let whole: Buffer;
  let etag: string;
  let lastModified: string;

  before(async () => {
    svc = await TestService.start();
    user = await svc.createUser();
    const pic = await cdnUpload(svc, user.key, await tinyJpeg(7, 120, 80), { filename: 'cond.jpg' });
    url = svc.url(`/cdn/${pic.imageId}?w=100&f=png`);
    const first = await request(url);
    expect(first.status).to.equal(200);
    whole = first.bytes;
    expect((await sharp(whole).metadata()).width).to.equal(100);
    etag = first.headers.get('etag')!;
    lastModified = first.headers.get('last-modified')!;
    expect(etag).to.match(/^"[^"]+"$/);
    expect(Number.isNaN(Date.parse(lastModified))).to.equal(false);
  });
  after(async () => svc?.stop());

  const get = (headers: Record<string, string>) => request(url, { headers });
  const dayAfter = () => new Date(Date.parse(lastModified) + 86_400_000).toUTCString();
  const dayBefore = () => new Date(Date.parse(lastModified) - 86_400_000).toUTCString();

  it('If-None-Match with the current tag (also weak, or in a list) → 304 without a body; another tag → 200', async () => {
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const res = await get({ 'If-None-Match': tag });
      expect(res.status, tag).to.equal(304);
      expect(res.bytes.length).to.equal(0);
      expect(res.headers.get('etag')).to.equal(etag);
    }
    const other = await get({ 'If-None-Match': '"not-this-one"' });
    expect(other.status).to.equal(200);
    expect(other.bytes.equals(whole)).to.equal(true);
  });

  it('If-Modified-Since at or after Last-Modified → 304; before it → 200; If-None-Match wins over it', async () => {
    expect((await get({ 'If-Modified-Since': lastModified })).status).to.equal(304);
    expect((await get({ 'If-Modified-Since': dayAfter() })).status).to.equal(304);
    const older = await get({ 'If-Modified-Since': dayBefore() });
    expect(older.status).to.equal(200);
    expect(older.bytes.equals(whole)).to.equal(true);
    const mismatch = await get({ 'If-None-Match': '"not-this-one"', 'If-Modified-Since': dayAfter() });
    expect(mismatch.status, 'a tag that does not match is not fresh whatever the date').to.equal(200);
  });

  it('Range → 206 with the bytes asked for (suffix and open-ended too); outside the object → 416', async () => {
    const cases: [string, number, number][] = [
      ['bytes=0-9', 0, 9],
      ['bytes=-16', whole.length - 16, whole.length - 1],
      [`bytes=${whole.length - 5}-`, whole.length - 5, whole.length - 1],
      [`bytes=20-${whole.length + 100}`, 20, whole.length - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await get({ Range: range });
      expect(res.status, range).to.equal(206);
      expect(res.headers.get('content-range')).to.equal(`bytes ${start}-${end}/${whole.length}`);
      expect(res.bytes.equals(whole.subarray(start, end + 1)), range).to.equal(true);
    }
    const outside = await get({ Range: `bytes=${whole.length}-` });
    expect(outside.status).to.equal(416);
    expect(outside.headers.get('content-range')).to.equal(`bytes */${whole.length}`);
    expect(outside.bytes.length).to.equal(0);
  });

  it('a malformed header, another unit or several ranges → the whole image (200)', async () => {
    for (const range of ['bytes=abc', 'items=0-5', 'bytes=0-1,10-12']) {
      const res = await get({ Range: range });
      expect(res.status, range).to.equal(200);
      expect(res.bytes.equals(whole), range).to.equal(true);
    }
  });

  it('If-Range with the current tag or a date not before Last-Modified → 206; a stale one → the whole image', async () => {
    for (const ifRange of [etag, lastModified, dayAfter()]) {
      const res = await get({ Range: 'bytes=0-9', 'If-Range': ifRange });
      expect(res.status, ifRange).to.equal(206);
      expect(res.bytes.equals(whole.subarray(0, 10))).to.equal(true);
    }
    for (const ifRange of ['"stale-tag"', `W/${etag}`, dayBefore()]) {
      const res = await get({ Range: 'bytes=0-9', 'If-Range': ifRange });
      expect(res.status, ifRange).to.equal(200);
      expect(res.bytes.equals(whole), ifRange).to.equal(true);
    }
  });
});
