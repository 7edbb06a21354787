// GET /generate/srcset (set A, spec 2.3, 4.1, 7) and the signed transform URLs it hands out:
// entry shape and order, sizes and default rules, errors, and keyless (browser) fetches of the
// entries with signature checks, validators, caching headers and bandwidth accounting.
import { expect } from 'chai';
import sharp from 'sharp';
import { readUsage } from '../../src/catalog/usage.js';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

type Credential = Awaited<ReturnType<TestService['createUser']>>;

interface Entry {
  url: string;
  width: number;
}

/** Splits a srcset value into its entries (`<url> <width>w`, comma separated). */
function parseSrcset(srcset: string): Entry[] {
  return srcset.split(/,\s+/).map((part) => {
    const m = /^(\S+) (\d+)w$/.exec(part.trim());
    expect(m, `srcset entry ${JSON.stringify(part)}`).to.not.equal(null);
    return { url: m![1], width: Number(m![2]) };
  });
}

describe('GET /generate/srcset', function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: Credential;
  let src: string;
  let otherSrc: string;

  before(async () => {
    svc = await TestService.start();
    user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(1600, 1000), query: { public_id: 'gallery/hero' } });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    src = up.body.public_url;
    const up2 = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(300, 200), query: { public_id: 'other' } });
    expect(up2.status, JSON.stringify(up2.body)).to.equal(200);
    otherSrc = up2.body.public_url;
  });
  after(async () => svc?.stop());

  function srcset(query: string, key: string | null = user.key) {
    return request(svc.url(`/generate/srcset?${query}`), { key: key ?? undefined });
  }

  async function okSrcset(query: string) {
    const res = await srcset(query);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    // The spec's three fields plus the image's version and placeholders.
    expect(Object.keys(res.body).sort()).to.deep.equal(['default', 'dominant_color', 'faces', 'lqip', 'sizes', 'srcset', 'thumbhash', 'version']);
    for (const k of ['srcset', 'sizes', 'default']) expect(res.body[k], k).to.be.a('string');
    return { body: res.body as { srcset: string; sizes: string; default: string }, entries: parseSrcset(res.body.srcset) };
  }

  function expectError(res: Awaited<ReturnType<typeof request>>, status: number, type: string) {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body).to.deep.include({ type, status_code: status });
    expect(res.body.msg).to.be.a('string').and.not.equal('');
  }

  /** The spec's entry shape, followed only by the original's version (versioned URLs) and the signature parameters. */
  function expectEntryShape(url: string, w: number, f: string, q: number) {
    const prefix = `${svc.baseUrl}/transform?src=${encodeURIComponent(src)}&w=${w}&f=${f}&q=${q}`;
    expect(url.startsWith(prefix), `${url} starts with ${prefix}`).to.equal(true);
    const rest = new URLSearchParams(url.slice(prefix.length));
    expect([...rest.keys()]).to.deep.equal(['v', 'kid', 'sig']);
    expect(url.length).to.be.within(1, 2083);
  }

  describe('spec rules', () => {
    it('defaults: widths 400,800,1200, f=auto, q=80, sizes from the largest width, default = middle', async () => {
      const { body, entries } = await okSrcset(`src=${encodeURIComponent(src)}`);
      expect(entries.map((e) => e.width)).to.deep.equal([400, 800, 1200]);
      for (const e of entries) expectEntryShape(e.url, e.width, 'auto', 80);
      expect(body.sizes).to.equal('(max-width: 1200px) 100vw, 1200px');
      expect(body.default).to.equal(entries[1].url);
    });

    it('one entry per width in the order given; sizes uses the largest, not the last; default is the middle of three', async () => {
      const { body, entries } = await okSrcset(`src=${encodeURIComponent(src)}&w=300,1000,500&f=webp&q=55`);
      expect(entries.map((e) => e.width)).to.deep.equal([300, 1000, 500]);
      for (const e of entries) expectEntryShape(e.url, e.width, 'webp', 55);
      expect(body.sizes).to.equal('(max-width: 1000px) 100vw, 1000px');
      expect(body.default).to.equal(entries[1].url);
    });

    it('a supplied sizes is echoed as given', async () => {
      const sizes = '(max-width: 600px) 480px, 800px';
      const { body } = await okSrcset(`src=${encodeURIComponent(src)}&sizes=${encodeURIComponent(sizes)}`);
      expect(body.sizes).to.equal(sizes);
    });

    for (const f of ['auto', 'webp', 'avif', 'jpeg', 'jpg', 'png']) {
      it(`f=${f} is carried into every entry`, async () => {
        const { entries } = await okSrcset(`src=${encodeURIComponent(src)}&w=200,400&f=${f}&q=70`);
        for (const e of entries) expectEntryShape(e.url, e.width, f, 70);
      });
    }

    for (const widths of [[640], [320, 960], [100, 200, 300, 400], [100, 200, 300, 400, 500], Array.from({ length: 20 }, (_, i) => (i + 1) * 100)]) {
      const index = Math.floor((widths.length - 1) / 2);
      it(`${widths.length} width(s): default is the entry at index floor((n-1)/2) = ${index}`, async () => {
        const { body, entries } = await okSrcset(`src=${encodeURIComponent(src)}&w=${widths.join(',')}`);
        expect(entries.map((e) => e.width)).to.deep.equal(widths);
        expect(body.default).to.equal(entries[index].url);
        const largest = Math.max(...widths);
        expect(body.sizes).to.equal(`(max-width: ${largest}px) 100vw, ${largest}px`);
      });
    }

    it('accepts the width edges 1 and 4200 and spaces after commas', async () => {
      const { entries } = await okSrcset(`src=${encodeURIComponent(src)}&w=${encodeURIComponent('1, 4200')}`);
      expect(entries.map((e) => e.width)).to.deep.equal([1, 4200]);
    });
  });

  describe('errors', () => {
    it('missing src → 400 request_error', async () => {
      expectError(await srcset('w=400,800'), 400, 'request_error');
      expectError(await srcset('src=&w=400,800'), 400, 'request_error');
    });

    for (const w of ['0', '4201', 'abc', '400,abc', '400,,800', ',', '1.5', '-400', Array.from({ length: 21 }, (_, i) => (i + 1) * 10).join(','), '']) {
      it(`w=${JSON.stringify(w.length > 30 ? '21 widths' : w)} → 400 request_error`, async () => {
        const res = await srcset(`src=${encodeURIComponent(src)}&w=${encodeURIComponent(w)}`);
        expectError(res, 400, 'request_error');
        expect(res.body.msg).to.match(/\bw\b/);
      });
    }

    it('q out of range or f not allowed → 400 request_error', async () => {
      expectError(await srcset(`src=${encodeURIComponent(src)}&q=101`), 400, 'request_error');
      expectError(await srcset(`src=${encodeURIComponent(src)}&q=0`), 400, 'request_error');
      expectError(await srcset(`src=${encodeURIComponent(src)}&f=gif`), 400, 'request_error');
    });

    it('src not an image URL under CDN_URL → 422 image_processing_error', async () => {
      const path = new URL(src).pathname;
      for (const bad of [
        `https://elsewhere.example${path}`,
        'not a url',
        `${svc.config.cdnUrl}/${user.userId}/notimages/hero.jpg`,
        `${svc.config.cdnUrl}/${user.userId}/images/hero.gif`,
        `${svc.config.baseUrl}/transform?src=${encodeURIComponent(src)}`,
      ]) {
        const res = await srcset(`src=${encodeURIComponent(bad)}`);
        expectError(res, 422, 'image_processing_error');
        expect(res.body.msg, bad).to.match(/src/);
      }
    });

    it('missing or invalid key → 401 unauthorized_error', async () => {
      expectError(await srcset(`src=${encodeURIComponent(src)}`, null), 401, 'unauthorized_error');
      expectError(await srcset(`src=${encodeURIComponent(src)}`, 'pk_invalid'), 401, 'unauthorized_error');
    });
  });

  describe('signed entry URLs (what a browser fetches, without X-API-Key)', () => {
    let entries: Entry[];
    before(async () => {
      entries = (await okSrcset(`src=${encodeURIComponent(src)}&w=240,480,720&f=auto&q=70`)).entries;
    });

    function tamper(url: string, name: string, value: string): string {
      const u = new URL(url);
      u.searchParams.set(name, value);
      return u.toString();
    }

    it('each entry returns image bytes of its width without a key', async () => {
      for (const e of entries) {
        const res = await request(e.url);
        expect(res.status, e.url).to.equal(200);
        const type = res.headers.get('content-type') ?? '';
        expect(type).to.match(/^image\//);
        const meta = await sharp(res.bytes).metadata();
        expect(meta.width).to.equal(e.width);
        expect(meta.height).to.equal(Math.round((e.width * 1000) / 1600));
        const expected = { 'image/jpeg': 'jpeg', 'image/webp': 'webp', 'image/avif': 'heif', 'image/png': 'png' }[type];
        expect(meta.format, 'Content-Type agrees with the bytes').to.equal(expected);
        expect(Number(res.headers.get('content-length'))).to.equal(res.bytes.length);
      }
    });

    it('f=auto negotiates from the browser Accept header and varies on it', async () => {
      const avif = await request(entries[0].url, { headers: { Accept: 'image/avif,image/webp,*/*' } });
      expect(avif.status).to.equal(200);
      expect(avif.headers.get('content-type')).to.equal('image/avif');
      expect((await sharp(avif.bytes).metadata()).format).to.equal('heif');
      expect(avif.headers.get('vary') ?? '').to.match(/accept/i);
      const webp = await request(entries[0].url, { headers: { Accept: 'image/webp,*/*' } });
      expect(webp.headers.get('content-type')).to.equal('image/webp');
      expect((await sharp(webp.bytes).metadata()).format).to.equal('webp');
      const plain = await request(entries[0].url, { headers: { Accept: '*/*' } });
      expect(plain.headers.get('content-type'), 'source format when neither is accepted').to.equal('image/jpeg');
      expect((await sharp(plain.bytes).metadata()).format).to.equal('jpeg');
    });

    it('carries a long-lived immutable Cache-Control and an ETag; If-None-Match answers 304', async () => {
      const first = await request(entries[1].url);
      expect(first.status).to.equal(200);
      const cacheControl = first.headers.get('cache-control') ?? '';
      expect(cacheControl).to.match(/immutable/);
      expect(Number(/max-age=(\d+)/.exec(cacheControl)?.[1] ?? 0)).to.be.at.least(86400 * 30);
      const etag = first.headers.get('etag');
      expect(etag).to.be.a('string').and.not.equal('');
      const again = await request(entries[1].url, { headers: { 'If-None-Match': etag! } });
      expect(again.status).to.equal(304);
      expect(again.bytes.length).to.equal(0);
      const other = await request(entries[1].url, { headers: { 'If-None-Match': '"something-else"' } });
      expect(other.status).to.equal(200);
      expect(other.bytes.equals(first.bytes)).to.equal(true);
    });

    it("counts the bytes served toward the owner's monthly bandwidth (a 304 counts nothing)", async () => {
      await svc.deps.bandwidth.flush(user.userId);
      const before = (await readUsage(svc.deps.catalog, user.userId)).bandwidthBytes;
      const res = await request(entries[2].url);
      expect(res.status).to.equal(200);
      // Bytes are written to the catalog in batches (every 250 ms, and before usage is read).
      await svc.deps.bandwidth.flush(user.userId);
      const after = (await readUsage(svc.deps.catalog, user.userId)).bandwidthBytes;
      expect(after - before).to.equal(res.bytes.length);
      const period = new Date().toISOString().slice(0, 7);
      const doc = await svc.deps.catalog.usage.findById(`${user.userId}:${period}`).lean();
      expect(doc?.bandwidthBytes).to.equal(after);
      await request(entries[2].url, { headers: { 'If-None-Match': res.headers.get('etag')! } });
      await svc.deps.bandwidth.flush(user.userId);
      expect((await readUsage(svc.deps.catalog, user.userId)).bandwidthBytes).to.equal(after);
    });

    it('tampered w, q, f or src → 401', async () => {
      const url = entries[0].url;
      for (const [name, value] of [
        ['w', '241'],
        ['q', '71'],
        ['f', 'png'],
        ['src', otherSrc],
      ]) {
        const res = await request(tamper(url, name, value));
        expect(res.status, `${name}=${value}`).to.equal(401);
        expect(res.body).to.deep.include({ type: 'unauthorized_error', status_code: 401 });
      }
      // an added parameter is tampering too
      expect((await request(`${url}&blur=5`)).status).to.equal(401);
      // another credential's kid with our signature fails
      const other = await svc.createUser();
      const theirUpload = await upload(svc.baseUrl, { key: other.key, bytes: await jpeg(64, 40), query: { public_id: 'theirs' } });
      const theirs = await srcset(`src=${encodeURIComponent(theirUpload.body.public_url)}`, other.key);
      expect(theirs.status).to.equal(200);
      const theirKid = new URL(parseSrcset(theirs.body.srcset)[0].url).searchParams.get('kid')!;
      expect(theirKid).to.not.equal(new URL(url).searchParams.get('kid'));
      expect((await request(tamper(url, 'kid', theirKid))).status).to.equal(401);
    });

    it('an unsigned request without a key → 401; a forged signature → 401', async () => {
      const u = new URL(entries[0].url);
      u.searchParams.delete('sig');
      u.searchParams.delete('kid');
      const unsigned = await request(u.toString());
      expect(unsigned.status).to.equal(401);
      expect(unsigned.body).to.deep.include({ type: 'unauthorized_error', status_code: 401 });
      const noKid = new URL(entries[0].url);
      noKid.searchParams.delete('kid');
      expect((await request(noKid.toString())).status).to.equal(401);
      const forged = await request(tamper(entries[0].url, 'sig', 'A'.repeat(43)));
      expect(forged.status).to.equal(401);
    });

    it('a signed URL with an X-API-Key keeps the JSON response of the spec', async () => {
      const res = await request(entries[0].url, { key: user.key });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ success: true, error: '' });
      const img = await request(res.body.public_url);
      expect((await sharp(img.bytes).metadata()).width).to.equal(240);
    });
  });
});
