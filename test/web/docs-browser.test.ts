// GET /docs in a real browser (Debian's /usr/bin/chromium driven by playwright-core): Swagger UI
// loads from this server only (no CDN), a user pastes an API key in Authorize, expands
// GET /image/test, tries it out and sees 200; the key survives a reload (persistAuthorization).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { TestService } from '../harness/test-service.js';

const CHROMIUM = '/usr/bin/chromium';
const OUTPUT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test-output');
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('/docs in a real browser (headless Chromium)', function () {
  this.timeout(90_000);
  let svc: TestService;
  let key: string;
  let userDataDir: string;
  let context: BrowserContext;
  let tab: Page;
  const requested: string[] = [];

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) {
      console.warn(`      skipped: ${CHROMIUM} not found (npm run setup installs Debian's chromium)`);
      this.skip();
    }
    svc = await TestService.start({ workers: 1 });
    key = (await svc.createUser()).key;
    fs.mkdirSync(OUTPUT_DIR, { recursive: true });
    userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 1000 },
    });
    tab = context.pages()[0] ?? (await context.newPage());
    tab.on('request', (r) => requested.push(r.url()));
  });

  after(async () => {
    await context?.close();
    if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
    await svc?.stop();
  });

  it('loads Swagger UI and the document from this server only', async () => {
    await tab.goto(svc.url('/docs'), { waitUntil: 'load' });
    await tab.locator('.swagger-ui .info .title').filter({ hasText: 'Pictor' }).waitFor({ timeout: 20_000 });
    await tab.locator('.opblock-summary-path[data-path="/image/test"]').waitFor();
    expect(requested.some((u) => u === svc.url('/openapi.json'))).to.equal(true);
    const foreign = requested.filter((u) => !u.startsWith(svc.baseUrl) && !u.startsWith('data:'));
    expect(foreign, 'requests to other hosts (CDN, validator)').to.deep.equal([]);
    await tab.screenshot({ path: path.join(OUTPUT_DIR, 'docs-overview.png'), fullPage: false });
  });

  it('Authorize with a key, then Try it out on GET /image/test answers 200', async () => {
    await tab.locator('.swagger-ui .auth-wrapper .authorize').first().click();
    const modal = tab.locator('.swagger-ui .dialog-ux .modal-ux');
    await modal.waitFor();
    const apiKeyBlock = modal.locator('.auth-container').filter({ hasText: 'ApiKeyAuth' });
    await apiKeyBlock.locator('input[type="text"], input[type="password"]').first().fill(key);
    await apiKeyBlock.locator('button.authorize').click();
    await apiKeyBlock.getByRole('button', { name: 'Remove authorization' }).waitFor(); // now authorized
    await apiKeyBlock.locator('button.btn-done').click();

    const op = tab.locator('.opblock').filter({ has: tab.locator('.opblock-summary-path[data-path="/image/test"]') });
    await op.locator('.opblock-summary').first().click();
    await op.locator('button.try-out__btn').click();
    const sent = tab.waitForRequest((r) => r.url() === svc.url('/image/test'));
    await op.locator('button.execute').click();
    const request = await sent;
    expect(request.headers()['x-api-key']).to.equal(key);
    const status = op.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 20_000 });
    expect((await status.innerText()).trim()).to.equal('200');
    const body = await op.locator('.live-responses-table .response-col_description pre').first().innerText();
    expect(JSON.parse(body)).to.include({ valid: true });
    await op.scrollIntoViewIfNeeded();
    await tab.screenshot({ path: path.join(OUTPUT_DIR, 'docs-try-it-out.png'), fullPage: false });
  });

  it('keeps the key across a reload (persistAuthorization)', async () => {
    await tab.reload({ waitUntil: 'load' });
    await tab.locator('.opblock-summary-path[data-path="/image/test"]').waitFor({ timeout: 20_000 });
    const stored = await tab.evaluate(() => window.localStorage.getItem('authorized'));
    expect(stored ?? '').to.contain(key);
    expect(await tab.locator('.swagger-ui .auth-wrapper .authorize.locked').count()).to.be.greaterThan(0);
  });
});
