// GET /transform (set A, spec 2.2, 2.4, 4.1, 7, 8): every parameter's bounds and types, the src
// and ownership errors, geometry, colour, effects (checked on decoded pixels), format negotiation,
// and the derivative cache (no job for a cached derivative, one job for N concurrent requests).
import { expect } from 'chai';
import sharp, { type Metadata } from 'sharp';
import { cmykJpeg, displayP3Jpeg, exifRotatedJpeg, jpeg, pngWithAlpha, stats } from '../fixtures/images.js';
import { waitFor } from '../faults/fault-helpers.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

type Credential = Awaited<ReturnType<TestService['createUser']>>;

describe('GET /transform', function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: Credential;
  const src: Record<string, string> = {};

  before(async () => {
    svc = await TestService.start({ env: { WORKER_CONCURRENCY: '4' } });
    user = await svc.createUser();
    const uploads: [string, Promise<Buffer>][] = [
      ['base', jpeg(400, 300)],
      ['tiny', jpeg(40, 30)],
      ['small', jpeg(300, 200)],
      ['large', jpeg(2000, 1500)],
      ['tall', jpeg(300, 900)],
      ['wide', jpeg(900, 300)],
      ['rotated', exifRotatedJpeg(400, 200)],
      ['cmyk', cmykJpeg(200, 150)],
      ['p3', displayP3Jpeg()],
      ['alpha', pngWithAlpha(200, 100)],
    ];
    for (const [id, bytes] of uploads) {
      const res = await upload(svc.baseUrl, { key: user.key, bytes: await bytes, query: { public_id: id } });
      expect(res.status, `${id}: ${JSON.stringify(res.body)}`).to.equal(200);
      src[id] = res.body.public_url;
    }
  });
  after(async () => svc?.stop());

  function transform(id: string, query: string, options: { key?: string | null; accept?: string } = {}) {
    const headers: Record<string, string> = {};
    if (options.accept !== undefined) headers.Accept = options.accept;
    const key = options.key === null ? undefined : (options.key ?? user.key);
    const qs = id ? `src=${encodeURIComponent(src[id] ?? id)}${query ? '&' + query : ''}` : query;
    return request(svc.url(`/transform?${qs}`), { key, headers });
  }

  /** Transforms, checks the 200 body against the fetched bytes, and decodes them. */
  async function derive(id: string, query: string, options: { accept?: string } = {}) {
    const res = await transform(id, query, options);
    expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.error).to.equal('');
    expect(res.body.public_url).to.be.a('string');
    expect(res.body.public_url.length).to.be.within(1, 2083);
    const img = await request(res.body.public_url);
    expect(img.status, res.body.public_url).to.equal(200);
    expect(img.headers.get('content-type')).to.equal(res.body.content_type);
    expect(res.body.size).to.equal(img.bytes.length);
    const meta = await sharp(img.bytes).metadata();
    return { res, body: res.body, bytes: img.bytes, meta };
  }

  function expectError(res: Awaited<ReturnType<typeof request>>, status: number, type: string) {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body).to.be.an('object');
    expect(res.body.type).to.equal(type);
    expect(res.body.status_code).to.equal(status);
    expect(res.body.msg).to.be.a('string').and.not.equal('');
  }

  /** Statistics of one region (sharp's stats() reads its input, so the region is cut out first). */
  async function regionStats(bytes: Buffer, left: number, top: number, width: number, height: number) {
    return sharp(await sharp(bytes).extract({ left, top, width, height }).png().toBuffer()).stats();
  }

  async function jobTotal(): Promise<number> {
    const counts = await svc.deps.jobs.queues.transform.getJobCounts('active', 'completed', 'delayed', 'failed', 'prioritized', 'waiting', 'waiting-children');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  describe('parameter bounds (spec 4.1 / 8): both edges accepted', () => {
    const cases: [string, string, (meta: Metadata) => void][] = [
      ['w=1 (with h=10)', 'w=1&h=10&f=png', (m) => expect([m.width, m.height]).to.deep.equal([1, 10])],
      ['w=4200 (with h=1)', 'w=4200&h=1&f=png', (m) => expect([m.width, m.height]).to.deep.equal([4200, 1])],
      ['h=1 (with w=10)', 'w=10&h=1&f=png', (m) => expect([m.width, m.height]).to.deep.equal([10, 1])],
      ['h=4200 (with w=1)', 'w=1&h=4200&f=png', (m) => expect([m.width, m.height]).to.deep.equal([1, 4200])],
    ];
    const large: [string, string, string, [number, number]][] = [
      ['only w=4200', 'wide', 'w=4200&f=jpeg&q=30', [4200, 1400]],
      ['only h=4200', 'tall', 'h=4200&f=jpeg&q=30', [1400, 4200]],
    ];
    for (const [name, id, query, dims] of large) {
      it(name, async () => {
        const { meta } = await derive(id, query);
        expect([meta.width, meta.height]).to.deep.equal(dims);
      });
    }
    for (const name of ['q']) {
      cases.push([`${name}=1`, `w=32&f=jpeg&${name}=1`, (m) => expect(m.format).to.equal('jpeg')]);
      cases.push([`${name}=100`, `w=32&f=jpeg&${name}=100`, (m) => expect(m.format).to.equal('jpeg')]);
    }
    for (const [name, low, high] of [
      ['blur', '0', '100'],
      ['sharp', '0', '100'],
      ['bri', '-100', '100'],
      ['con', '-100', '100'],
      ['sat', '-100', '100'],
      ['hue', '0', '360'],
      ['gamma', '1.0', '3.0'],
      ['gamma', '1', '3'],
    ]) {
      for (const v of [low, high]) cases.push([`${name}=${v}`, `w=32&f=png&${name}=${v}`, (m) => expect([m.format, m.width, m.height]).to.deep.equal(['png', 32, 24])]);
    }
    for (const f of ['auto', 'webp', 'avif', 'jpeg', 'jpg', 'png']) {
      cases.push([`f=${f}`, `w=16&f=${f}`, (m) => expect(m.width).to.equal(16)]);
    }
    for (const [name, query, check] of cases) {
      it(name, async () => {
        const { meta } = await derive('tiny', query);
        check(meta);
      });
    }
  });

  describe('parameter bounds: one past each edge, and wrong types → 422 image_processing_error naming the parameter', () => {
    const bad: [string, string][] = [
      ['w', '0'],
      ['w', '4201'],
      ['w', '-5'],
      ['h', '0'],
      ['h', '4201'],
      ['q', '0'],
      ['q', '101'],
      ['blur', '-0.5'],
      ['blur', '100.5'],
      ['sharp', '-1'],
      ['sharp', '101'],
      ['bri', '-101'],
      ['bri', '101'],
      ['con', '-101'],
      ['con', '101'],
      ['sat', '-101'],
      ['sat', '101'],
      ['hue', '-1'],
      ['hue', '361'],
      ['gamma', '0.9'],
      ['gamma', '3.1'],
      // wrong types
      ['w', 'abc'],
      ['w', '1.5'],
      ['h', '10px'],
      ['q', 'high'],
      ['bri', '1.5'],
      ['hue', '90.5'],
      ['blur', 'lots'],
      ['gamma', 'x'],
      ['f', 'gif'],
      ['f', 'tiff'],
    ];
    for (const [name, value] of bad) {
      it(`${name}=${value}`, async () => {
        const before = await jobTotal();
        const res = await transform('tiny', `${name}=${encodeURIComponent(value)}`);
        expectError(res, 422, 'image_processing_error');
        expect(res.body.msg).to.match(new RegExp(`\\b${name}\\b`));
        expect(await jobTotal(), 'no job for a refused request').to.equal(before);
      });
    }
  });

  describe('src and ownership errors', () => {
    it('missing src → 400 request_error', async () => {
      expectError(await transform('', 'w=100'), 400, 'request_error');
    });
    it('empty src → 400 request_error', async () => {
      expectError(await transform('', 'src=&w=100'), 400, 'request_error');
    });
    it('src that is not a URL → 400 request_error', async () => {
      expectError(await transform('', 'src=not%20a%20url&w=100'), 400, 'request_error');
      expectError(await transform('', `src=${encodeURIComponent(`${user.userId}/images/base.jpg`)}`), 400, 'request_error');
    });
    it('src that is not a base image URL of this service → 400 request_error', async () => {
      const path = new URL(src.base).pathname;
      for (const other of [
        `https://images.example.com${path}`,
        `${svc.config.cdnUrl}/${user.userId}/other/base.jpg`,
        `${svc.config.cdnUrl}/${user.userId}/images/base.gif`,
        `${src.base}?w=10`,
        `${svc.config.baseUrl}/transform?src=${encodeURIComponent(src.base)}`,
      ]) {
        const res = await transform('', `src=${encodeURIComponent(other)}`);
        expectError(res, 400, 'request_error');
        expect(res.body.msg, other).to.match(/src/);
      }
    });
    it("another user's image and a missing image → the same 404 request_error", async () => {
      const other = await svc.createUser();
      const theirs = await upload(svc.baseUrl, { key: other.key, bytes: await jpeg(50, 40), query: { public_id: 'private' } });
      expect(theirs.status).to.equal(200);
      const foreign = await transform(theirs.body.public_url, 'w=20');
      expectError(foreign, 404, 'request_error');
      const missing = await transform(`${svc.config.cdnUrl}/${user.userId}/images/does-not-exist.jpg`, 'w=20');
      expectError(missing, 404, 'request_error');
      expect(foreign.body.msg).to.equal(missing.body.msg);
      // the owner can transform it
      expect((await transform(theirs.body.public_url, 'w=20', { key: other.key })).status).to.equal(200);
      // right id, wrong extension: also not found
      expectError(await transform(src.base.replace(/\.jpg$/, '.png'), 'w=20'), 404, 'request_error');
    });
    it('missing key → 401 unauthorized_error; invalid key → 401 unauthorized_error', async () => {
      expectError(await transform('base', 'w=20', { key: null }), 401, 'unauthorized_error');
      expectError(await transform('base', 'w=20', { key: 'pk_wrong' }), 401, 'unauthorized_error');
    });
  });

  describe('geometry', () => {
    it('only w → that width, aspect kept', async () => {
      const { meta } = await derive('base', 'w=200&f=png');
      expect([meta.width, meta.height]).to.deep.equal([200, 150]);
      const up = await derive('base', 'w=800&f=jpeg');
      expect([up.meta.width, up.meta.height]).to.deep.equal([800, 600]);
    });
    it('only h → that height, aspect kept', async () => {
      const { meta } = await derive('base', 'h=150&f=png');
      expect([meta.width, meta.height]).to.deep.equal([200, 150]);
      const tall = await derive('tall', 'h=300&f=png');
      expect([tall.meta.width, tall.meta.height]).to.deep.equal([100, 300]);
    });
    it('both → exactly w×h, cropped to fill around the centre', async () => {
      const { bytes, meta } = await derive('base', 'w=100&h=100&f=png');
      expect([meta.width, meta.height]).to.deep.equal([100, 100]);
      // Red grows with x in the source: a centred crop of a 4:3 image loses equal strips on both sides.
      const left = await regionStats(bytes, 0, 0, 4, 100);
      const right = await regionStats(bytes, 96, 0, 4, 100);
      expect(left.channels[0].mean).to.be.within(20, 50);
      expect(right.channels[0].mean).to.be.within(205, 235);
      expect(left.channels[0].mean + right.channels[0].mean).to.be.closeTo(255, 12);
      // Green grows with y and no rows are cut.
      const top = await regionStats(bytes, 0, 0, 100, 3);
      expect(top.channels[1].mean).to.be.lessThan(10);
      const other = await derive('base', 'w=300&h=60&f=png');
      expect([other.meta.width, other.meta.height]).to.deep.equal([300, 60]);
    });
    it('neither → fits inside 1280×720 keeping aspect', async () => {
      const { meta } = await derive('large', 'f=jpeg');
      // 2000×1500 scaled by min(1280/2000, 720/1500) = 0.48
      expect([meta.width, meta.height]).to.deep.equal([960, 720]);
    });
    it('neither → a small image is never enlarged', async () => {
      const { meta } = await derive('small', 'f=png');
      expect([meta.width, meta.height]).to.deep.equal([300, 200]);
    });
  });

  describe('colour and orientation', () => {
    it('EXIF-rotated input comes out upright with the orientation applied', async () => {
      // Stored 400×200 sideways with orientation 6: the picture is 200×400.
      const { bytes, meta } = await derive('rotated', 'w=100&f=png');
      expect([meta.width, meta.height]).to.deep.equal([100, 200]);
      expect(meta.orientation ?? 1).to.equal(1);
      // Stored red grows with stored x → downwards once upright; stored green grows with stored y → leftwards.
      const region = (left: number, top: number, width: number, height: number) => regionStats(bytes, left, top, width, height);
      const top = await region(0, 0, 100, 10);
      const bottom = await region(0, 190, 100, 10);
      const left = await region(0, 0, 10, 200);
      const right = await region(90, 0, 10, 200);
      expect(top.channels[0].mean).to.be.lessThan(30);
      expect(bottom.channels[0].mean).to.be.greaterThan(225);
      expect(left.channels[1].mean).to.be.greaterThan(225);
      expect(right.channels[1].mean).to.be.lessThan(30);
    });
    it('CMYK input comes out as sRGB with 3 channels and similar colours', async () => {
      const { bytes, meta } = await derive('cmyk', 'w=100&f=jpeg&q=95');
      expect(meta.space).to.equal('srgb');
      expect(meta.channels).to.equal(3);
      expect([meta.width, meta.height]).to.deep.equal([100, 75]);
      const reference = await stats(await sharp(await jpeg(200, 150)).resize(100).png().toBuffer());
      const got = await stats(bytes);
      for (const c of [0, 1, 2]) expect(got.channels[c].mean, `channel ${c}`).to.be.closeTo(reference.channels[c].mean, 25);
    });
    it('metadata is stripped, the colour profile too (output is sRGB, which untagged means)', async () => {
      const { meta } = await derive('rotated', 'w=50&f=jpeg');
      expect(meta.exif).to.equal(undefined);
      expect(meta.icc).to.equal(undefined);
      expect(meta.space).to.equal('srgb');
    });
    it('a Display P3 source is converted to sRGB through its profile', async () => {
      const { bytes, meta } = await derive('p3', 'w=32&f=png');
      expect(meta.icc).to.equal(undefined);
      const got = (await stats(bytes)).channels.slice(0, 3).map((c) => c.mean);
      // Made from sRGB (200, 100, 50); its stored P3 values read as sRGB would be visibly off.
      const asStored = (await stats(await sharp(await displayP3Jpeg(), { ignoreIcc: true }).png().toBuffer())).channels.slice(0, 3).map((c) => c.mean);
      expect(Math.max(...asStored.map((v, i) => Math.abs(v - [200, 100, 50][i]))), 'the fixture needs converting').to.be.greaterThan(8);
      got.forEach((v, i) => expect(v, `channel ${i}`).to.be.closeTo([200, 100, 50][i], 4));
    });
    it('alpha PNG → JPEG is flattened on white', async () => {
      // 25 % opaque red over white = (255, 191, 191); over black it would be (64, 0, 0).
      const { bytes, meta } = await derive('alpha', 'w=100&f=jpeg&q=95');
      expect(meta.format).to.equal('jpeg');
      expect(meta.channels).to.equal(3);
      const s = await stats(bytes);
      expect(s.channels[0].mean).to.be.greaterThan(245);
      expect(s.channels[1].mean).to.be.closeTo(191, 8);
      expect(s.channels[2].mean).to.be.closeTo(191, 8);
    });
    it('alpha PNG → PNG keeps its transparency', async () => {
      const { bytes, meta } = await derive('alpha', 'w=100&f=png');
      expect(meta.hasAlpha).to.equal(true);
      const s = await sharp(bytes).stats();
      expect(s.channels[3].mean).to.be.closeTo(64, 3);
    });
  });

  describe('effects change pixel statistics in the expected direction (vs. the unmodified transform)', () => {
    const BASE = 'w=200&f=png';
    let plain: Awaited<ReturnType<typeof stats>>;
    before(async () => {
      plain = await stats((await derive('base', BASE)).bytes);
    });
    const effect = async (q: string) => {
      const { bytes, meta } = await derive('base', `${BASE}&${q}`);
      expect([meta.width, meta.height]).to.deep.equal([200, 150]);
      return { bytes, s: await stats(bytes) };
    };

    it('blur lowers sharpness and standard deviation, more for larger values', async () => {
      const light = (await effect('blur=4')).s;
      const heavy = (await effect('blur=40')).s;
      expect(light.sharpness).to.be.lessThan(plain.sharpness);
      expect(light.stdev).to.be.lessThan(plain.stdev);
      expect(heavy.sharpness).to.be.lessThan(light.sharpness);
      expect(heavy.stdev).to.be.lessThan(light.stdev);
    });
    it('sharp raises sharpness', async () => {
      const { s } = await effect('sharp=60');
      expect(s.sharpness).to.be.greaterThan(plain.sharpness);
    });
    it('bri up raises the mean, bri down lowers it', async () => {
      const up = (await effect('bri=40')).s;
      const down = (await effect('bri=-40')).s;
      expect(up.mean).to.be.greaterThan(plain.mean + 10);
      expect(down.mean).to.be.lessThan(plain.mean - 10);
    });
    it('con up raises the standard deviation, con down lowers it', async () => {
      const up = (await effect('con=50')).s;
      const down = (await effect('con=-50')).s;
      expect(up.stdev).to.be.greaterThan(plain.stdev * 1.2);
      expect(down.stdev).to.be.lessThan(plain.stdev * 0.8);
    });
    it('sat=-100 makes every pixel grey (channels equal); sat up spreads the channels', async () => {
      const { bytes, s } = await effect('sat=-100');
      const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      let maxDiff = 0;
      for (let i = 0; i < data.length; i += info.channels) {
        maxDiff = Math.max(maxDiff, Math.abs(data[i] - data[i + 1]), Math.abs(data[i + 1] - data[i + 2]), Math.abs(data[i] - data[i + 2]));
      }
      expect(maxDiff).to.be.at.most(3);
      expect(s.channels[0].mean).to.be.closeTo(s.channels[1].mean, 1);
      expect(s.channels[1].mean).to.be.closeTo(s.channels[2].mean, 1);
      const spread = (x: Awaited<ReturnType<typeof stats>>) => Math.abs(x.channels[0].mean - x.channels[1].mean) + Math.abs(x.channels[1].mean - x.channels[2].mean) + Math.abs(x.channels[0].mean - x.channels[2].mean);
      const vivid = (await effect('sat=80')).s;
      expect(spread(vivid)).to.be.greaterThan(spread(plain));
    });
    it('hue rotation changes the channel means', async () => {
      const { s } = await effect('hue=120');
      const moved = [0, 1, 2].map((c) => Math.abs(s.channels[c].mean - plain.channels[c].mean));
      expect(Math.max(...moved)).to.be.greaterThan(20);
      // brightness is about kept: it is a rotation of colour, not a brightness change
      expect(s.mean).to.be.closeTo(plain.mean, 15);
    });
    it('gamma 3.0 is brighter than gamma 1.0 (2.2 is neutral)', async () => {
      const g1 = (await effect('gamma=1.0')).s;
      const g3 = (await effect('gamma=3.0')).s;
      const g22 = (await effect('gamma=2.2')).s;
      expect(g3.mean).to.be.greaterThan(g1.mean + 10);
      expect(g1.mean).to.be.lessThan(plain.mean);
      expect(g3.mean).to.be.greaterThan(plain.mean);
      expect(g22.mean).to.be.closeTo(plain.mean, 2);
    });
  });

  describe('output format', () => {
    for (const [f, format, mime, ext] of [
      ['jpeg', 'jpeg', 'image/jpeg', 'jpg'],
      ['jpg', 'jpeg', 'image/jpeg', 'jpg'],
      ['png', 'png', 'image/png', 'png'],
      ['webp', 'webp', 'image/webp', 'webp'],
      ['avif', 'heif', 'image/avif', 'avif'],
    ]) {
      it(`f=${f} → ${mime}, content_type agreeing with the decoded bytes, no Vary`, async () => {
        const { res, body, meta } = await derive('base', `w=120&f=${f}`, { accept: 'image/avif,image/webp,*/*' });
        expect(body.content_type).to.equal(mime);
        expect(meta.format).to.equal(format);
        if (format === 'heif') expect(meta.compression).to.equal('av1');
        expect([meta.width, meta.height]).to.deep.equal([120, 90]);
        expect(body.public_url.endsWith(`.${ext}`)).to.equal(true);
        expect(res.headers.get('vary') ?? '').to.not.match(/accept/i);
      });
    }

    it('the derived URL is the base path, the applied parameters in canonical order, then the extension', async () => {
      const { body } = await derive('base', 'bri=10&w=120&q=70&f=png&blur=2');
      expect(body.public_url.startsWith(src.base + '&')).to.equal(true);
      const tail = body.public_url.slice(src.base.length);
      expect(tail).to.match(/\.png$/);
      const names = [...tail.matchAll(/&([a-z]+)=/g)].map((m) => m[1]).filter((n) => n !== 'v');
      expect(names).to.deep.equal(['w', 'q', 'f', 'blur', 'bri']);
      // same request, parameters in another order → same object
      const again = await derive('base', 'blur=2&f=png&q=70&w=120&bri=10');
      expect(again.body.public_url).to.equal(body.public_url);
    });

    for (const [accept, format, mime] of [
      ['image/avif,image/webp,image/apng,image/*,*/*;q=0.8', 'heif', 'image/avif'],
      ['image/avif', 'heif', 'image/avif'],
      ['image/webp,*/*', 'webp', 'image/webp'],
      ['application/json', 'webp', 'image/webp'],
      ['', 'webp', 'image/webp'],
    ]) {
      it(`f=auto with Accept ${JSON.stringify(accept)} → ${mime} and Vary: Accept`, async () => {
        const { res, body, meta } = await derive('base', 'w=80&f=auto', { accept });
        expect(body.content_type).to.equal(mime);
        expect(meta.format).to.equal(format);
        expect(res.headers.get('vary') ?? '').to.match(/accept/i);
      });
    }

    it('f omitted behaves as f=auto', async () => {
      const { res, body } = await derive('base', 'w=80', { accept: 'image/avif' });
      expect(body.content_type).to.equal('image/avif');
      expect(res.headers.get('vary') ?? '').to.match(/accept/i);
    });

    it('q changes the encoded size (lower quality → fewer bytes)', async () => {
      for (const f of ['jpeg', 'webp']) {
        const low = await derive('base', `w=300&f=${f}&q=10`);
        const high = await derive('base', `w=300&f=${f}&q=95`);
        expect(low.body.size, f).to.be.lessThan(high.body.size * 0.7);
        expect([low.meta.width, high.meta.width]).to.deep.equal([300, 300]);
      }
    });
  });

  describe('derivative cache', () => {
    it('a second identical transform is answered from storage without running a job', async () => {
      const before = await jobTotal();
      const first = await derive('base', 'w=150&f=webp&q=61');
      const afterFirst = await jobTotal();
      expect(afterFirst - before, 'first request runs one job').to.equal(1);
      expect(first.res.headers.get('x-cache')).to.equal('MISS');
      const second = await derive('base', 'w=150&f=webp&q=61');
      expect(await jobTotal(), 'second request runs no job').to.equal(afterFirst);
      expect(second.res.headers.get('x-cache')).to.equal('HIT');
      expect(second.body).to.deep.equal(first.body);
      expect(second.bytes.equals(first.bytes)).to.equal(true);
    });

    it('20 concurrent identical requests run exactly one job and all get its result', async () => {
      const before = await jobTotal();
      const completedBefore = (await svc.deps.jobs.queues.transform.getJobCounts('completed')).completed;
      const results = await Promise.all(Array.from({ length: 20 }, () => transform('large', 'w=900&f=avif&q=55&sharp=10')));
      for (const r of results) expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(await jobTotal() - before, 'jobs run').to.equal(1);
      // The worker announces a result before BullMQ moves the job to completed (workers/worker-process.ts).
      const completed = async () => (await svc.deps.jobs.queues.transform.getJobCounts('completed')).completed - completedBefore;
      await waitFor('the job to be marked completed', async () => (await completed()) >= 1, 2000, 10);
      expect(await completed(), 'jobs completed').to.equal(1);
      const urls = new Set(results.map((r) => r.body.public_url));
      expect(urls.size).to.equal(1);
      const sizes = new Set(results.map((r) => r.body.size));
      expect(sizes.size).to.equal(1);
      const img = await request(results[0].body.public_url);
      const meta = await sharp(img.bytes).metadata();
      expect([meta.format, meta.width, meta.height]).to.deep.equal(['heif', 900, 675]);
      expect(img.bytes.length).to.equal(results[0].body.size);
    });
  });
});
