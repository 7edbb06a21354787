// The srcset of GET /generate/srcset loaded by a real browser: headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core) renders `<img srcset sizes src=default>` at two
// viewport widths; the image must load and the wider viewport must fetch the wider candidate.
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { jpeg } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TEST_OUTPUT, requireChromium, launchChromium } from '../harness/chromium.js';
import { TestService } from '../harness/test-service.js';


const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

interface Visit {
  naturalWidth: number;
  currentSrc: string;
  /** Width and format of the bytes Chromium received for the transform URL it chose. */
  fetched: { url: string; status: number; contentType: string; width: number; format: string }[];
}

describe('srcset in a real browser (headless Chromium)', function () {
  this.timeout(90_000);
  let svc: TestService;
  let page: http.Server;
  let pageUrl: string;
  let markup: { srcset: string; sizes: string; default: string };

  before(async function () {
    requireChromium();
    svc = await TestService.start({ env: { WORKER_CONCURRENCY: '3' } });
    const user = await svc.createUser();
    const up = await upload(svc.baseUrl, { key: user.key, bytes: await jpeg(1600, 1000), query: { public_id: 'browser/hero' } });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    const res = await request(svc.url(`/generate/srcset?src=${encodeURIComponent(up.body.public_url)}&w=400,800,1200`), { key: user.key });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    markup = res.body;
    const html = `<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { margin: 0 } img { display: block; max-width: 100% }</style></head>
<body><img id="pic" alt="srcset test" srcset="${escapeAttr(markup.srcset)}" sizes="${escapeAttr(markup.sizes)}" src="${escapeAttr(markup.default)}"></body></html>`;
    page = http.createServer((req, res) => {
      if (req.url === '/') {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
        res.end(html);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
    fs.mkdirSync(TEST_OUTPUT, { recursive: true });
  });

  after(async () => {
    await new Promise<void>((resolve) => (page ? page.close(() => resolve()) : resolve()));
    await svc?.stop();
  });

  /** One fresh browser profile per viewport, so neither visit can reuse the other's cache. */
  async function visit(viewportWidth: number): Promise<Visit> {
    const browser = await launchChromium({ width: viewportWidth, height: 900 });
    try {
      const tab = browser.page;
      const fetched: Promise<Visit['fetched'][number]>[] = [];
      tab.on('response', (response) => {
        if (!response.url().startsWith(`${svc.baseUrl}/transform?`)) return;
        fetched.push(
          (async () => {
            const body = await response.body();
            const meta = await sharp(body).metadata();
            return { url: response.url(), status: response.status(), contentType: response.headers()['content-type'] ?? '', width: meta.width ?? 0, format: meta.format ?? '' };
          })(),
        );
      });
      await tab.goto(pageUrl, { waitUntil: 'load' });
      await tab.waitForFunction(() => {
        const img = document.getElementById('pic') as HTMLImageElement | null;
        return img !== null && img.complete;
      });
      const state = await tab.evaluate(() => {
        const img = document.getElementById('pic') as HTMLImageElement;
        return { naturalWidth: img.naturalWidth, currentSrc: img.currentSrc };
      });
      await tab.screenshot({ path: path.join(TEST_OUTPUT, `srcset-${viewportWidth}px.png`), fullPage: true });
      return { ...state, fetched: await Promise.all(fetched) };
    } finally {
      await browser.close();
    }
  }

  it('loads the image at 400 px and 1400 px viewports, fetching the larger candidate for the larger viewport', async () => {
    const small = await visit(400);
    const large = await visit(1400);
    const candidates = markup.srcset.split(/,\s+/).map((e) => e.split(' ')[0]);

    for (const [name, v] of [['400px', small], ['1400px', large]] as const) {
      expect(v.naturalWidth, `${name}: image loaded`).to.be.greaterThan(0);
      expect(candidates, `${name}: currentSrc is a srcset candidate`).to.include(v.currentSrc);
      const chosen = v.fetched.filter((f) => f.url === v.currentSrc);
      expect(chosen, `${name}: the chosen candidate was fetched`).to.have.length.greaterThan(0);
      for (const f of chosen) {
        expect(f.status).to.equal(200);
        expect(f.width, `${name}: decoded width of the fetched bytes`).to.equal(Number(new URL(f.url).searchParams.get('w')));
        const expectedFormat = { 'image/avif': 'heif', 'image/webp': 'webp', 'image/jpeg': 'jpeg', 'image/png': 'png' }[f.contentType];
        expect(f.format, `${name}: Content-Type ${f.contentType} agrees with the bytes`).to.equal(expectedFormat);
      }
    }

    const widthOf = (v: Visit) => Number(new URL(v.currentSrc).searchParams.get('w'));
    expect(widthOf(small), 'candidate for a 400 px slot at DPR 1').to.equal(400);
    expect(widthOf(large), 'candidate for the 1200 px slot of a 1400 px viewport').to.equal(1200);
    expect(widthOf(large)).to.be.greaterThan(widthOf(small));
    expect(large.naturalWidth).to.be.greaterThan(small.naturalWidth);
    expect(fs.existsSync(path.join(TEST_OUTPUT, 'srcset-1400px.png'))).to.equal(true);
  });
});
