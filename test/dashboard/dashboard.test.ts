// The web dashboard end to end: headless Chromium drives every flow against the real service
// (front door serving /dashboard, queues, workers including passport): pasting a key, drag-and-drop
// upload with progress, the paged gallery with its project filter and delete, the transform
// playground, the srcset generator, usage charts, project management, the passport demo, keyboard
// use and labels, and a narrow (390 px) viewport. Screenshots go to test-output/dashboard/.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { PictorClient, TRANSFORM_PARAMS, type UploadResult } from '../../src/client/index.js';
import { freePort } from '../../scripts/lib/redis-server.js';
import { CORPUS, jpeg } from '../fixtures/images.js';
import { requireChromium, launchChromium, TEST_OUTPUT, type Browser } from '../harness/chromium.js';
import { TestService } from '../harness/test-service.js';

const SHOTS = path.join(TEST_OUTPUT, 'dashboard');
const PORTRAIT = path.join(CORPUS, 'faces/02_grace_hopper.jpg');

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
}

/** A photo-like JPEG of noise (~2 MB), large enough for the upload to report progress. */
async function noisyJpeg(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let seed = 12345;
  for (let i = 0; i < raw.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    raw[i] = seed >> 23;
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 92 }).toBuffer();
}

async function connect(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard`);
  await page.waitForSelector('html[data-ready="true"]');
  await page.fill('#api-key', key);
  await page.press('#api-key', 'Enter');
  await page.waitForSelector('#session-info:not([hidden])');
}

async function section(page: Page, id: string): Promise<void> {
  await page.click(`#tab-${id}`);
  await page.waitForSelector(`#panel-${id}:not([hidden])`);
}

describe('web dashboard in headless Chromium', function () {
  this.timeout(90_000);
  let svc: TestService;
  let user: Awaited<ReturnType<TestService['createUser']>>;
  let sdk: PictorClient;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async function () {
    requireChromium();
    // The dashboard's own origin is an allowed demo origin (DEMO_ORIGINS), as documented.
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    svc = await TestService.start({
      workerQueues: 'upload-finalize,transform,passport,analyze',
      env: { PORT: String(port), BASE_URL: base, DEMO_ORIGINS: base, WORKER_CONCURRENCY: '2' },
    });
    user = await svc.createUser();
    sdk = new PictorClient({ baseUrl: svc.baseUrl, apiKey: user.key });
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium({ width: 1280, height: 900 });
    page = browser.page;
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('dialog', (d) => void d.dismiss());
  });

  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('asks for a key, then connects with it (session storage only)', async () => {
    await page.goto(`${svc.baseUrl}/dashboard`);
    expect(page.url()).to.equal(`${svc.baseUrl}/dashboard/#upload`);
    await page.waitForSelector('html[data-ready="true"]');
    expect(await page.isVisible('#needs-key')).to.equal(true);
    expect(await page.isVisible('#panel-upload')).to.equal(false);
    await page.fill('#api-key', 'pk_not_a_key');
    await page.click('#key-form button[type="submit"]');
    await page.waitForSelector('#key-status.error');
    expect(await page.textContent('#key-status')).to.match(/401/);
    await page.fill('#api-key', user.key);
    await page.click('#key-form button[type="submit"]');
    await page.waitForSelector('#session-info:not([hidden])');
    expect(await page.textContent('#session-user')).to.contain(user.userId);
    const stored = await page.evaluate(() => ({ session: sessionStorage.getItem('pictor.apiKey'), local: localStorage.length, cookie: document.cookie }));
    expect(stored).to.deep.equal({ session: user.key, local: 0, cookie: '' });
    expect(await page.isVisible('#panel-upload')).to.equal(true);
    await shot(page, '01-connected');
  });

  it('upload: drag and drop and the file picker, with progress bars', async () => {
    await section(page, 'upload');
    await page.waitForSelector('#upload-project option', { state: 'attached' });
    await page.fill('#upload-public-id', 'e2e/hero');
    const big = await noisyJpeg(1000, 700);
    await page.evaluate(
      ({ b64 }) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([bytes], 'dropped.jpg', { type: 'image/jpeg' }));
        const zone = document.getElementById('drop-zone')!;
        zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
        zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      },
      { b64: big.toString('base64') },
    );
    await page.waitForSelector('#upload-list li[data-state="done"]', { timeout: 20_000 });
    const dropped = await page.$eval('#upload-list li', (li) => ({
      progress: (li.querySelector('progress') as HTMLProgressElement).value,
      events: Number((li as HTMLElement).dataset.progressEvents ?? 0),
      text: li.textContent ?? '',
    }));
    expect(dropped.progress).to.equal(100);
    expect(dropped.events).to.be.at.least(1);
    expect(dropped.text).to.contain('1000×700');
    // Two more through the file picker.
    await page.setInputFiles('#upload-files', [
      { name: 'street.jpg', mimeType: 'image/jpeg', buffer: await jpeg(900, 600) },
      { name: 'portrait.jpg', mimeType: 'image/jpeg', buffer: fs.readFileSync(PORTRAIT) },
    ]);
    await page.waitForFunction(() => document.querySelectorAll('#upload-list li[data-state="done"]').length === 3, undefined, { timeout: 20_000 });
    // A file the service refuses shows the server's message.
    await page.setInputFiles('#upload-files', [{ name: 'notes.jpg', mimeType: 'image/jpeg', buffer: Buffer.from('plain text, not an image') }]);
    await page.waitForSelector('#upload-list li[data-state="failed"]');
    expect(await page.textContent('#upload-list li[data-state="failed"] .status')).to.match(/415/);
    const images = (await sdk.images.list()).images.map((i) => i.public_id);
    expect(images).to.have.members(['e2e/hero', 'street', 'portrait']);
    await shot(page, '02-upload');
  });

  it('gallery: pages through images, filters by project, deletes one', async () => {
    // The project first, then 13 images in parallel (newest = the last one, uploaded alone).
    await sdk.projects.create({ name: 'Bulk' });
    const bulk: UploadResult[] = await Promise.all(Array.from({ length: 12 }, async (_, i) => sdk.upload(await jpeg(64 + i, 48), { publicId: `bulk/${String(i).padStart(2, '0')}`, project: 'Bulk' })));
    bulk.push(await sdk.upload(await jpeg(90, 48), { publicId: 'bulk/12', project: 'Bulk' }));
    await section(page, 'gallery');
    await page.selectOption('#gallery-limit', '12');
    await page.waitForFunction(() => document.querySelectorAll('#gallery-grid li').length === 12);
    expect(await page.isDisabled('#gallery-next')).to.equal(false);
    expect(await page.isDisabled('#gallery-prev')).to.equal(true);
    await page.click('#gallery-next');
    await page.waitForFunction(() => document.getElementById('gallery-page')!.textContent === 'Page 2');
    await page.waitForFunction(() => document.querySelectorAll('#gallery-grid li').length === 4);
    expect(await page.isDisabled('#gallery-next')).to.equal(true);
    await page.click('#gallery-prev');
    await page.waitForFunction(() => document.getElementById('gallery-page')!.textContent === 'Page 1');
    // Project filter: only the 13 bulk images (12 + 1 page).
    await page.selectOption('#gallery-project', 'bulk');
    await page.waitForFunction(() => Array.from(document.querySelectorAll('#gallery-grid figcaption')).every((c) => c.textContent!.includes('bulk')));
    expect(await page.$$eval('#gallery-grid li', (lis) => lis.length)).to.equal(12);
    // Thumbnails come from the public /cdn/{imageId} route (320² cover), which never makes an
    // output larger than the original (docs/limits.md): these 48 px high images give 48² thumbnails.
    await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('#gallery-grid img')).slice(0, 4).every((img) => img.complete && img.naturalWidth === 48 && img.naturalHeight === 48));
    await shot(page, '03-gallery');
    // Delete the newest bulk image through the dialog.
    const victim = bulk[bulk.length - 1];
    await page.click(`#gallery-grid li[data-image-id="${victim.imageId}"] button.danger`);
    await page.waitForSelector('#confirm-dialog[open]');
    await shot(page, '04-gallery-delete-dialog', false);
    await page.click('#confirm-ok');
    await page.waitForSelector(`#gallery-grid li[data-image-id="${victim.imageId}"]`, { state: 'detached' });
    await page.waitForFunction(() => /Deleted/.test(document.getElementById('gallery-status')!.textContent ?? ''));
    expect(await page.isDisabled('#gallery-next')).to.equal(true);
    const left = (await sdk.images.list({ project: 'bulk', limit: 100 })).images.map((i) => i.imageId);
    expect(left).to.have.length(12);
    expect(left).to.not.include(victim.imageId);
  });

  it('playground: a control per registry parameter, live preview, URLs to copy', async () => {
    await page.selectOption('#gallery-project', '');
    await page.waitForFunction(() => document.querySelectorAll('#gallery-grid li').length === 12);
    // "Playground" on the hero's card selects it there.
    const hero = (await sdk.images.list({ limit: 100 })).images.find((i) => i.public_id === 'e2e/hero')!;
    await page.selectOption('#gallery-limit', '100');
    await page.waitForSelector(`#gallery-grid li[data-image-id="${hero.imageId}"]`);
    await page.click(`#gallery-grid li[data-image-id="${hero.imageId}"] button:has-text("Playground")`);
    await page.waitForSelector('#panel-playground:not([hidden])');
    // The panel shows first and fills its image list from the API (show() awaits it).
    await page.waitForFunction(() => (document.getElementById('pg-src') as HTMLSelectElement).value !== '');
    expect(await page.inputValue('#pg-src')).to.equal(hero.public_url);
    const controls = await page.$$eval('#pg-params .param', (els) => els.map((e) => (e as HTMLElement).dataset.param));
    expect(controls).to.deep.equal(TRANSFORM_PARAMS.filter((p) => (p.sets as readonly string[]).includes('B')).map((p) => p.name));
    // First the starting point: 800 px wide, format negotiated (AVIF for Chromium).
    await page.waitForFunction(() => /image\/avif · 800×560/.test(document.getElementById('pg-info')!.textContent ?? ''));
    // Width by typing, format by select, saturation by keyboard on the slider.
    await page.fill('#pg-w-value', '400');
    await page.selectOption('#pg-f', 'png');
    await page.focus('#pg-sat');
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(() => /image\/png · 400×280/.test(document.getElementById('pg-info')!.textContent ?? ''), undefined, { timeout: 15_000 });
    expect(await page.isChecked('#pg-on-w')).to.equal(true);
    expect(await page.isChecked('#pg-on-sat')).to.equal(true);
    const url = await page.inputValue('#pg-url');
    expect(url).to.equal(`${svc.baseUrl}/image/preview?src=${encodeURIComponent(hero.public_url)}&w=400&f=png&sat=-5`);
    expect(await page.getAttribute('#pg-preview', 'data-url')).to.equal(url);
    expect(await page.getAttribute('#pg-preview', 'src')).to.match(/^blob:/);
    // The public URL works without a key; the keyed one with it.
    const publicUrl = await page.inputValue('#pg-public-url');
    const res = await fetch(publicUrl);
    expect(res.status).to.equal(200);
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    expect([meta.width, meta.format]).to.deep.equal([400, 'png']);
    expect(await page.inputValue('#pg-curl')).to.contain(url);
    await shot(page, '05-playground');
  });

  it('playground: q=auto and its variants, remove_bg, blur_faces and pixelate_faces each render a preview', async () => {
    const portrait = (await sdk.images.list({ limit: 100 })).images.find((i) => i.public_id === 'portrait')!;
    await page.selectOption('#pg-src', portrait.public_url);
    await page.click('#pg-reset');
    await page.selectOption('#pg-f', 'webp');
    /** Waits until the preview shows the URL the controls now make, which must contain `pair`; answers the info line. */
    const previewOf = async (pair: string): Promise<string> => {
      await page.waitForFunction(
        (p) => {
          const url = (document.getElementById('pg-url') as HTMLInputElement).value;
          const info = document.getElementById('pg-info')!.textContent ?? '';
          return url.includes(p) && document.getElementById('pg-preview')!.dataset.url === url && /image\/webp · \d+×\d+/.test(info);
        },
        pair,
        { timeout: 30_000 },
      );
      return (await page.textContent('#pg-info')) ?? '';
    };
    const chosen: Record<string, number> = {};
    for (const word of ['auto', 'auto:best', 'auto:good', 'auto:eco']) {
      await page.selectOption('#pg-q-word', word);
      const info = await previewOf(`q=${encodeURIComponent(word)}`);
      expect(info, word).to.match(/quality \d+ chosen/);
      chosen[word] = Number(/quality (\d+) chosen/.exec(info)![1]);
    }
    expect(chosen['auto:eco']).to.be.below(chosen['auto:best']);
    await page.selectOption('#pg-q-word', '');
    expect(await previewOf('q=80')).to.not.match(/chosen/);
    await page.uncheck('#pg-on-q');
    await page.check('#pg-on-remove_bg');
    expect(await previewOf('remove_bg=true')).to.not.match(/no person/);
    // The same on a picture without a face: the plain image, and the playground says why.
    const hero = (await sdk.images.list({ limit: 100 })).images.find((i) => i.public_id === 'e2e/hero')!;
    await page.selectOption('#pg-src', hero.public_url);
    await page.waitForFunction(() => /no person found/.test(document.getElementById('pg-info')!.textContent ?? ''), undefined, { timeout: 30_000 });
    await page.selectOption('#pg-src', portrait.public_url);
    await page.uncheck('#pg-on-remove_bg');
    await page.fill('#pg-blur_faces-value', '12');
    await previewOf('blur_faces=12');
    await page.uncheck('#pg-on-blur_faces');
    await page.fill('#pg-pixelate_faces-value', '10');
    await previewOf('pixelate_faces=10');
    // Reset puts every control back, q's word and the free-form text fields included.
    await page.selectOption('#pg-q-word', 'auto:best');
    await page.fill('#pg-crop', '1,2,30,40');
    await page.click('#pg-reset');
    expect([await page.inputValue('#pg-q-word'), await page.inputValue('#pg-crop'), await page.isChecked('#pg-on-pixelate_faces')]).to.deep.equal(['', '', false]);
  });

  it('srcset: generates the markup and loads every candidate and the responsive image', async () => {
    await section(page, 'srcset');
    const hero = (await sdk.images.list({ limit: 100 })).images.find((i) => i.public_id === 'e2e/hero')!;
    await page.selectOption('#ss-src', hero.public_url);
    await page.fill('#ss-widths', '200,400,800');
    await page.selectOption('#ss-format', 'jpeg');
    await page.click('#ss-form button[type="submit"]');
    await page.waitForSelector('#ss-result:not([hidden])');
    await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('#ss-previews img')).every((img) => img.dataset.loaded === 'true'), undefined, { timeout: 20_000 });
    const widths = await page.$$eval('#ss-previews img', (imgs) => imgs.map((img) => [Number((img as HTMLImageElement).dataset.width), (img as HTMLImageElement).naturalWidth]));
    expect(widths).to.deep.equal([
      [200, 200],
      [400, 400],
      [800, 800],
    ]);
    const html = await page.inputValue('#ss-html');
    expect(html).to.match(/^<img srcset="[^"]+w=200[^"]+200w, [^"]+ 400w, [^"]+ 800w"/);
    expect(html).to.contain('sizes="(max-width: 800px) 100vw, 800px"');
    await page.waitForFunction(() => (document.getElementById('ss-responsive') as HTMLImageElement).complete && /candidate/.test(document.getElementById('ss-current')!.textContent ?? ''));
    expect(await page.textContent('#ss-current')).to.match(/800 px candidate/);
    await shot(page, '06-srcset');
  });

  it('srcset: widths "auto" are chosen by the server, from 200 px to the image\'s width, and every candidate loads', async () => {
    await section(page, 'srcset');
    const hero = (await sdk.images.list({ limit: 100 })).images.find((i) => i.public_id === 'e2e/hero')!;
    await page.selectOption('#ss-src', hero.public_url);
    await page.fill('#ss-widths', 'auto');
    await page.selectOption('#ss-format', 'webp');
    await page.click('#ss-form button[type="submit"]');
    await page.waitForFunction(() => /candidates/.test(document.getElementById('ss-status')?.textContent ?? ''), undefined, { timeout: 30_000 });
    await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('#ss-previews img')).every((img) => img.dataset.loaded === 'true'), undefined, { timeout: 20_000 });
    const widths = await page.$$eval('#ss-previews img', (imgs) => imgs.map((img) => [Number((img as HTMLImageElement).dataset.width), (img as HTMLImageElement).naturalWidth]));
    expect(widths.length).to.be.within(2, 8);
    for (const [w, natural] of widths) expect(natural).to.equal(w);
    expect([widths[0][0], widths.at(-1)![0]]).to.deep.equal([200, hero.width]);
    // The candidates just rendered are counted in batches: the usage test reads settled figures.
    await svc.derivativesSettled(user.userId);
  });

  it('usage: storage, bandwidth and transformations against the plan limits', async () => {
    await section(page, 'usage');
    await page.waitForSelector('#usage-bars li');
    const usage = await sdk.usage();
    const bars = await page.$$eval('#usage-bars li', (lis) =>
      lis.map((li) => ({ id: li.id, text: li.textContent ?? '', title: li.querySelector('svg title')?.textContent ?? '', share: Number(li.querySelector('rect.used')?.getAttribute('data-share')) })),
    );
    expect(bars.map((b) => b.id)).to.deep.equal(['usage-storage', 'usage-bandwidth', 'usage-transformations']);
    expect(bars[0].text).to.contain('of 100 GB');
    expect(bars[0].title).to.match(/^Storage: /);
    expect(bars[0].share).to.be.closeTo(usage.storage_bytes / usage.limits.storage_bytes, 1e-6);
    expect(bars[2].text).to.contain('of 100,000');
    expect(bars[2].share).to.be.greaterThan(0);
    const plans = await page.$$eval('#plans-table tbody tr', (rows) => rows.map((r) => r.querySelector('th')!.textContent));
    expect(plans).to.deep.equal(['Free', 'Pro (yours)', 'Business']);
    await shot(page, '07-usage');
  });

  it('projects: create, rename, delete (the default project is protected)', async () => {
    await section(page, 'projects');
    await page.waitForSelector('#projects-table tr[data-slug="default"]');
    expect(await page.isDisabled('#projects-table tr[data-slug="default"] button.danger')).to.equal(true);
    await page.fill('#project-name', 'Holiday 2026');
    await page.fill('#project-description', 'Beach pictures');
    await page.click('#project-create button[type="submit"]');
    await page.waitForSelector('#projects-table tr[data-slug="holiday-2026"]');
    await page.click('#projects-table tr[data-slug="holiday-2026"] button:has-text("Rename")');
    await page.fill('#projects-table input[aria-label="New name for Holiday 2026"]', 'Holidays');
    await page.press('#projects-table input[aria-label="New name for Holiday 2026"]', 'Enter');
    await page.waitForSelector('#projects-table tr[data-slug="holidays"]');
    expect(await page.textContent('#projects-status')).to.contain('Renamed to Holidays');
    // Duplicate names: the server's 409 is shown.
    await page.fill('#project-name', 'Holidays');
    await page.click('#project-create button[type="submit"]');
    await page.waitForSelector('#projects-status.error');
    expect(await page.textContent('#projects-status')).to.match(/409/);
    await shot(page, '08-projects');
    // Bulk has 12 images: delete it but move them to the default project.
    await page.click('#projects-table tr[data-slug="bulk"] button.danger');
    await page.waitForSelector('#confirm-dialog[open]');
    expect(await page.isVisible('#confirm-option')).to.equal(true);
    await page.check('#confirm-option');
    await page.click('#confirm-ok');
    await page.waitForSelector('#projects-table tr[data-slug="bulk"]', { state: 'detached' });
    expect(await page.textContent('#projects-status')).to.contain('12 image(s) moved, 0 deleted');
    await page.click('#projects-table tr[data-slug="holidays"] button.danger');
    await page.waitForSelector('#confirm-dialog[open]');
    await page.click('#confirm-ok');
    await page.waitForSelector('#projects-table tr[data-slug="holidays"]', { state: 'detached' });
    expect((await sdk.projects.list()).map((p) => p.slug)).to.deep.equal(['default']);
  });

  it('passport: upload from this origin (DEMO_ORIGINS), photo, sheet, face box and checks; then from a URL', async () => {
    await section(page, 'passport');
    await page.waitForSelector('#pp-country option[value="india_visa"]', { state: 'attached' });
    await page.setInputFiles('#pp-file', PORTRAIT);
    await page.selectOption('#pp-country', 'usa');
    await page.check('#pp-sheet');
    const answer = page.waitForResponse((r) => r.url().includes('/passport-photo/demo/process') && r.request().method() === 'POST', { timeout: 40_000 });
    await page.click('#pp-submit');
    await page.waitForSelector('#pp-result:not([hidden])', { timeout: 40_000 });
    const result = await page.evaluate(() => {
      const box = document.getElementById('pp-face-box')!;
      const frame = box.parentElement!.getBoundingClientRect();
      const b = box.getBoundingClientRect();
      const photo = document.getElementById('pp-photo') as HTMLImageElement;
      const sheet = document.getElementById('pp-sheet-img') as HTMLImageElement;
      return {
        status: document.getElementById('pp-status')!.textContent,
        face: { w: b.width / frame.width, h: b.height / frame.height, left: (b.left - frame.left) / frame.width },
        photo: [photo.naturalWidth, photo.naturalHeight],
        sheetVisible: !document.getElementById('pp-sheet-figure')!.hidden,
        sheet: sheet.naturalWidth,
        checks: Array.from(document.querySelectorAll('#pp-checks tbody tr')).map((r) => [(r as HTMLElement).dataset.check, (r as HTMLElement).dataset.passed, r.children[1].textContent]),
        warnings: document.querySelectorAll('#pp-warnings li').length,
      };
    });
    expect(result.status).to.match(/^Done/);
    expect(result.face.w).to.be.within(0.2, 0.6);
    expect(result.face.h).to.be.within(0.2, 0.6);
    expect(result.face.left).to.be.within(0.1, 0.5);
    expect(result.photo).to.deep.equal([600, 600]);
    expect(result.sheetVisible).to.equal(true);
    expect(result.sheet).to.equal(1800);
    expect(result.checks.length).to.be.greaterThan(5);
    expect(result.checks.find((c) => c[0] === 'single_face')).to.deep.equal(['single_face', 'true', '✓ Pass']);
    // The officer's checks are shown with the rest.
    expect(result.checks.map((c) => c[0])).to.include.members(['head_in_frame', 'eyes_visible', 'glasses', 'expression', 'face_lighting', 'headwear']);
    expect(result.warnings).to.be.greaterThan(0);
    // What needs a look (Grace Hopper wears glasses: usa fails it), each with its message; the lines
    // measured on the photo drawn over it where the answer's measurements put them, with the bands.
    const json = (await (await answer).json()) as { measurements: Record<string, number>; checks: Array<{ name: string; status: string; message: string }> };
    const look = await page.evaluate(() => {
      const img = document.getElementById('pp-photo')!.getBoundingClientRect();
      const at = (cls: string): number | null => {
        const l = document.querySelector(`#pp-lines line.${cls}`);
        if (!l) return null;
        const r = l.getBoundingClientRect();
        return (r.top + r.height / 2 - img.top) / img.height;
      };
      return {
        issues: Array.from(document.querySelectorAll('#pp-issues li')).map((li) => [(li as HTMLElement).dataset.check, (li as HTMLElement).dataset.status, li.textContent]),
        lines: { eye: at('line-eye'), crown: at('line-crown'), chin: at('line-chin') },
        bands: Array.from(document.querySelectorAll('#pp-lines rect')).map((r) => r.getAttribute('class')),
        legend: document.getElementById('pp-lines-legend')!.textContent,
      };
    });
    const notPassing = json.checks.filter((c) => c.status !== 'pass');
    expect(look.issues.map((i) => i[0])).to.deep.equal(notPassing.map((c) => c.name));
    const glasses = look.issues.find((i) => i[0] === 'glasses')!;
    expect(glasses[1]).to.equal('fail');
    expect(glasses[2]).to.contain(json.checks.find((c) => c.name === 'glasses')!.message);
    const m = json.measurements;
    expect(look.lines.eye).to.be.closeTo(m.eye_y / 600, 0.01);
    expect(look.lines.crown).to.be.closeTo(m.crown_y / 600, 0.01);
    expect(look.lines.chin).to.be.closeTo(m.chin_y / 600, 0.01);
    expect(look.bands).to.include.members(['band-eye', 'band-chin', 'band-centre']);
    expect(look.legend).to.match(/crown y \d+, eyes y \d+, chin y \d+/);
    await shot(page, '09-passport-upload');
    // The country list follows GET /passport-photo/specs (every record, by its name).
    const options = await page.evaluate(() => Array.from(document.querySelectorAll('#pp-country option')).map((o) => (o as HTMLOptionElement).value));
    expect(options).to.deep.equal(['usa', 'india', 'india_visa', 'uk', 'schengen_visa', 'canada', 'china', 'japan']);
    // From a URL (the uploaded portrait), Japan (a document without an eye-line rule), no print sheet.
    const portrait = (await sdk.images.list({ limit: 100 })).images.find((i) => i.public_id === 'portrait')!;
    await page.check('#pp-source-url');
    await page.fill('#pp-url', portrait.public_url);
    await page.selectOption('#pp-country', 'japan');
    await page.uncheck('#pp-sheet');
    await page.click('#pp-submit');
    await page.waitForFunction(() => /^Done/.test(document.getElementById('pp-status')!.textContent ?? '') && document.getElementById('pp-sheet-figure')!.hidden, undefined, { timeout: 40_000 });
    const japan = await page.evaluate(() => ({
      photo: [(document.getElementById('pp-photo') as HTMLImageElement).naturalWidth, (document.getElementById('pp-photo') as HTMLImageElement).naturalHeight],
      caption: document.getElementById('pp-photo-caption')!.textContent,
      eyeLine: Array.from(document.querySelector('#pp-checks tr[data-check="eye_line"]')!.children).map((c) => c.textContent),
    }));
    expect(japan.photo).to.deep.equal([413, 531]);
    expect(japan.caption).to.match(/Japan/);
    expect(japan.eyeLine[1]).to.equal('✓ Pass');
    expect(japan.eyeLine[2]).to.match(/not set by this document/);
    expect(japan.eyeLine[4]).to.equal('not set by this document');
    await shot(page, '10-passport-url');
  });

  it('keyboard: arrow keys move between tabs; visible focus; every control has a label; text contrast ≥ 4.5:1', async () => {
    await page.focus('#tab-passport');
    await page.keyboard.press('Home');
    expect(await page.evaluate(() => [document.activeElement?.id, location.hash])).to.deep.equal(['tab-upload', '#upload']);
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => [document.activeElement?.id, document.getElementById('tab-gallery')!.getAttribute('aria-selected'), location.hash])).to.deep.equal(['tab-gallery', 'true', '#gallery']);
    await page.keyboard.press('End');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('tab-passport');
    expect(await page.isVisible('#panel-passport')).to.equal(true);
    // Keyboard focus is visible.
    const outline = await page.evaluate(() => {
      const s = getComputedStyle(document.activeElement!);
      return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
    });
    expect(outline.style).to.not.equal('none');
    expect(outline.width).to.be.at.least(2);
    // The drop zone opens the file picker from the keyboard.
    await page.keyboard.press('Home');
    const chooser = page.waitForEvent('filechooser', { timeout: 5000 });
    await page.focus('#drop-zone');
    await page.keyboard.press('Enter');
    expect((await chooser).isMultiple()).to.equal(true);
    // Labels: every form control of every section has an accessible name.
    const unlabeled = await page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLInputElement>('input, select, textarea'))
        .filter((el) => el.type !== 'hidden')
        .filter((el) => !(el.labels && el.labels.length > 0) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
        .map((el) => el.id || el.outerHTML.slice(0, 80)),
    );
    expect(unlabeled).to.deep.equal([]);
    // Contrast of text on its background for the main styles.
    const ratios = await page.evaluate(() => {
      const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
      const lum = ([r, g, b]: number[]) => {
        const f = (v: number) => {
          const s = v / 255;
          return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
        };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
      };
      const ratio = (a: string, b: string) => {
        const [l1, l2] = [lum(rgb(a)), lum(rgb(b))].sort((x, y) => y - x);
        return (l1 + 0.05) / (l2 + 0.05);
      };
      const bodyBg = getComputedStyle(document.body).backgroundColor === 'rgba(0, 0, 0, 0)' ? getComputedStyle(document.documentElement).backgroundColor : getComputedStyle(document.body).backgroundColor;
      const pick = (sel: string) => document.querySelector(sel) as HTMLElement;
      const primary = getComputedStyle(pick('#pp-submit'));
      return {
        body: ratio(getComputedStyle(document.body).color, bodyBg),
        muted: ratio(getComputedStyle(pick('.help')).color, bodyBg),
        primaryButton: ratio(primary.color, primary.backgroundColor),
        selectedTab: ratio(getComputedStyle(pick('[role="tab"][aria-selected="true"]')).color, bodyBg),
        pass: ratio(getComputedStyle(pick('.check-pass')).color, bodyBg),
      };
    });
    for (const [name, value] of Object.entries(ratios)) expect(value, name).to.be.at.least(4.5);
  });

  it('narrow (390 px) viewport: no sideways scrolling, tabs fit, panels stack', async () => {
    const mobile = await launchChromium({ width: 390, height: 844, isMobile: true });
    try {
      const m = mobile.page;
      m.on('pageerror', (err) => pageErrors.push(`mobile: ${err.message}`));
      await connect(m, svc.baseUrl, user.key);
      for (const id of ['upload', 'gallery', 'playground', 'usage', 'passport']) {
        await section(m, id);
        if (id === 'gallery') await m.waitForFunction(() => document.querySelectorAll('#gallery-grid li').length > 0);
        if (id === 'playground') await m.waitForFunction(() => /×/.test(document.getElementById('pg-info')!.textContent ?? ''), undefined, { timeout: 15_000 });
        if (id === 'usage') await m.waitForSelector('#usage-bars li');
        const layout = await m.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          tabsRight: Math.max(...Array.from(document.querySelectorAll('[role="tab"]')).map((t) => t.getBoundingClientRect().right)),
        }));
        expect(layout.scrollWidth, `${id}: page width`).to.be.at.most(390);
        expect(layout.tabsRight, `${id}: tabs`).to.be.at.most(390);
        await shot(m, `mobile-${id}`);
      }
      // The playground's form and preview stack vertically.
      await section(m, 'playground');
      const [form, preview] = await Promise.all([m.locator('#pg-form').boundingBox(), m.locator('.preview-box').boundingBox()]);
      expect(preview!.y).to.be.greaterThan(form!.y + form!.height - 1);
    } finally {
      await mobile.close();
    }
  });

  it('forgetting the key clears it and locks the keyed sections; no script errors on the way', async () => {
    await section(page, 'usage');
    await page.click('#forget-key');
    await page.waitForSelector('#key-form:not([hidden])');
    expect(await page.evaluate(() => sessionStorage.getItem('pictor.apiKey'))).to.equal(null);
    expect(await page.isVisible('#needs-key')).to.equal(true);
    expect(await page.isVisible('#panel-usage')).to.equal(false);
    await shot(page, '11-forgotten');
    expect(pageErrors).to.deep.equal([]);
  });
});
