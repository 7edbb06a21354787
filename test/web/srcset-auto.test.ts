// GET /generate/srcset?w=auto on the six corpus photos (WebP q=80): every candidate is fetched as
// a browser would (its signed URL, no key) and weighed. Where max_images does not bind,
// consecutive candidates differ by 0.5-1.6× bytes_step (the last, ending at max_w, may be
// shorter); where it binds, there are exactly max_images candidates whose byte steps are even
// (each above bytes_step). Every URL then loads in headless Chromium at its width. Explicit widths
// answer as before; bad values get set A's 400 shape.
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { QUEUE_NAMES } from '../../src/jobs/job-contract.js';
import { CORPUS } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { launchChromium, requireChromium } from '../harness/chromium.js';
import { TestService } from '../harness/test-service.js';

const PHOTOS = ['Chelsea', 'Clock', 'Coffee', 'Moon', 'Retina', 'Rocket'];
const STEP = 20_000;

interface Candidate {
  url: string;
  w: number;
  bytes: number;
}

describe('srcset w=auto', function () {
  this.timeout(600_000);
  let svc: TestService;
  let key: string;
  const src: Record<string, string> = {};
  const width: Record<string, number> = {};
  const loaded: Candidate[] = [];

  before(async () => {
    // A byte curve of a 2560 px photo is ~15 renders: on a loaded machine more than the default 20 s.
    svc = await TestService.start({ env: { JOB_TIMEOUT_MS: '180000' } });
    key = (await svc.createUser()).key;
    for (const name of PHOTOS) {
      const bytes = fs.readFileSync(`${CORPUS}photos/${name}.jpg`);
      const up = await upload(svc.baseUrl, { key, bytes, query: { public_id: `auto/${name}` } });
      expect(up.status, JSON.stringify(up.body)).to.equal(200);
      src[name] = up.body.public_url;
      width[name] = (await sharp(bytes).metadata()).width!;
    }
  });
  after(async () => svc?.stop());

  async function srcset(name: string, query: string) {
    return request(svc.url(`/generate/srcset?src=${encodeURIComponent(src[name])}&${query}`), { key });
  }

  /** The answer's candidates, each fetched keyless through its signed URL and weighed. */
  async function candidates(name: string, query: string): Promise<Candidate[]> {
    const res = await srcset(name, query);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const entries = (res.body.srcset as string).split(', ').map((entry) => {
      const [url, descriptor] = entry.split(' ');
      return { url, w: Number(descriptor.replace(/w$/, '')) };
    });
    const out: Candidate[] = [];
    for (const { url, w } of entries) {
      expect(Number(new URL(url).searchParams.get('w'))).to.equal(w);
      const got = await request(url);
      expect(got.status, url).to.equal(200);
      expect((await sharp(got.bytes).metadata()).width).to.equal(w);
      out.push({ url, w, bytes: got.bytes.length });
    }
    loaded.push(...out);
    return out;
  }

  const steps = (c: Candidate[]) => c.slice(1).map((x, i) => x.bytes - c[i].bytes);
  const unbound: Record<string, Candidate[]> = {};

  it('where max_images does not bind: steps of 0.5-1.6× bytes_step from min_w to the original width', async () => {
    for (const name of PHOTOS) {
      const c = await candidates(name, `w=auto&f=webp&q=80&max_images=20`);
      unbound[name] = c;
      const ratios = steps(c).map((s) => s / STEP);
      console.log(`      ${name}: ${c.map((x) => x.w).join(',')}  steps/bytes_step ${ratios.map((r) => r.toFixed(2)).join(' ')}`);
      expect(c.length, name).to.be.below(20);
      expect(c[0].w, name).to.equal(200);
      expect(c.at(-1)!.w, name).to.equal(width[name]);
      for (const r of ratios.slice(0, -1)) expect(r, name).to.be.within(0.5, 1.6);
      expect(ratios.at(-1)!, `${name}: last step`).to.be.above(0).and.at.most(1.6);
    }
  });

  it('where it binds (the default max_images=8): exactly 8 widths, byte steps even and above bytes_step', async () => {
    // Photos whose unbound list is longer than 8 bind at the default step; the others at a step of
    // a twelfth of their bytes from min_w to max_w (about 12 widths unbound).
    for (const name of PHOTOS) {
      const u = unbound[name];
      const step = u.length > 8 ? STEP : Math.max(1000, Math.floor((u.at(-1)!.bytes - u[0].bytes) / 12));
      const c = await candidates(name, `w=auto&f=webp&q=80${step === STEP ? '' : `&bytes_step=${step}`}`);
      const s = steps(c);
      const mean = s.reduce((a, b) => a + b, 0) / s.length;
      console.log(`      ${name} (bytes_step ${step}): ${c.map((x) => x.w).join(',')}  steps/mean ${s.map((x) => (x / mean).toFixed(2)).join(' ')}`);
      expect(c, name).to.have.length(8);
      expect([c[0].w, c.at(-1)!.w], name).to.deep.equal([200, width[name]]);
      expect(mean, name).to.be.above(step);
      for (const x of s) expect(x / mean, name).to.be.within(0.8, 1.2);
    }
  });

  it('computes the byte curve once per version, format and quality: other steps and counts run no job', async () => {
    const jobs = async () => (await svc.deps.jobs.jobCounts(QUEUE_NAMES.analyze, 'completed', 'failed', 'active', 'waiting')) as Record<string, number>;
    const before = await jobs();
    const res = await srcset('Chelsea', 'w=auto&f=webp&q=80&bytes_step=30000&max_images=5&min_w=300&max_w=2000');
    expect(res.status).to.equal(200);
    const ws = (res.body.srcset as string).split(', ').map((e) => Number(e.split(' ')[1].replace('w', '')));
    expect([ws[0], ws.at(-1)]).to.deep.equal([300, 2000]);
    expect(ws.length).to.be.at.most(5);
    expect(await jobs()).to.deep.equal(before);
  });

  it('every URL loads, signed, in headless Chromium at its width', async () => {
    requireChromium();
    expect(loaded.length).to.be.above(50);
    const html = `<!doctype html><body>${loaded.map((c, i) => `<img id="i${i}" src="${c.url.replace(/&/g, '&amp;')}">`).join('')}</body>`;
    const page = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(html));
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const browser = await launchChromium();
    try {
      await browser.page.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`, { waitUntil: 'load' });
      const widths = await browser.page.evaluate(() => Array.from(document.images, (img) => (img.complete ? img.naturalWidth : -1)));
      expect(widths).to.deep.equal(loaded.map((c) => c.w));
    } finally {
      await browser.close();
      page.close();
    }
  });

  it('explicit widths answer as before', async () => {
    const res = await srcset('Moon', 'w=400,800&f=webp&q=80');
    expect(res.status).to.equal(200);
    expect((res.body.srcset as string).split(', ').map((e) => e.split(' ')[1])).to.deep.equal(['400w', '800w']);
    expect(res.body.sizes).to.equal('(max-width: 800px) 100vw, 800px');
  });

  it('bad values: 400 in set A\'s shape, naming the parameter', async () => {
    const cases: [string, RegExp][] = [
      ['min_w=0', /min_w/],
      ['min_w=abc', /min_w/],
      ['max_w=4097', /max_w/],
      ['bytes_step=999', /bytes_step/],
      ['bytes_step=1.5', /bytes_step/],
      ['max_images=0', /max_images/],
      ['max_images=21', /max_images/],
      ['min_w=900&max_w=800', /min_w.*max_w/],
      ['q=bogus', /"q"/],
    ];
    for (const [query, message] of cases) {
      const res = await srcset('Moon', `w=auto&${query}`);
      expect(res.status, query).to.equal(400);
      expect(Object.keys(res.body).sort(), query).to.deep.equal(['msg', 'status_code', 'type']);
      expect(res.body).to.include({ type: 'request_error', status_code: 400 });
      expect(res.body.msg, query).to.match(message);
    }
    const list = await srcset('Moon', 'w=auto,400');
    expect(list.status).to.equal(400);
    expect(list.body.msg).to.match(/"w" must be auto or/);
  });
});
