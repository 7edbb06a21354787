// GET /docs in a real browser (Debian's /usr/bin/chromium driven by playwright-core): Swagger UI
// loads from this server only (no CDN), a user pastes an API key in Authorize, expands
// GET /image/test, tries it out and sees 200; the key survives a reload (persistAuthorization).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { TEST_OUTPUT, requireChromium, launchChromium, type Browser } from '../harness/chromium.js';
import { TestService } from '../harness/test-service.js';

describe('/docs in a real browser (headless Chromium)', function () {
  this.timeout(90_000);
  let svc: TestService;
  let key: string;
  let browser: Browser | undefined;
  let tab: Page;
  const requested: string[] = [];

  before(async function () {
    requireChromium();
    svc = await TestService.start({ workers: 1 });
    key = (await svc.createUser()).key;
    fs.mkdirSync(TEST_OUTPUT, { recursive: true });
    browser = await launchChromium({ width: 1280, height: 1000 });
    tab = browser.page;
    tab.on('request', (r) => requested.push(r.url()));
  });

  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('loads Swagger UI and the document from this server only', async () => {
    await tab.goto(svc.url('/docs'), { waitUntil: 'load' });
    await tab.locator('.swagger-ui .info .title').filter({ hasText: 'Pictor' }).waitFor({ timeout: 20_000 });
    await tab.locator('.opblock-summary-path[data-path="/image/test"]').waitFor();
    expect(requested.some((u) => u === svc.url('/openapi.json'))).to.equal(true);
    const foreign = requested.filter((u) => !u.startsWith(svc.baseUrl) && !u.startsWith('data:'));
    expect(foreign, 'requests to other hosts (CDN, validator)').to.deep.equal([]);
    await tab.screenshot({ path: path.join(TEST_OUTPUT, 'docs-overview.png'), fullPage: false });
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
    await tab.screenshot({ path: path.join(TEST_OUTPUT, 'docs-try-it-out.png'), fullPage: false });
  });

  it('keeps the key across a reload (persistAuthorization)', async () => {
    await tab.reload({ waitUntil: 'load' });
    await tab.locator('.opblock-summary-path[data-path="/image/test"]').waitFor({ timeout: 20_000 });
    const stored = await tab.evaluate(() => window.localStorage.getItem('authorized'));
    expect(stored ?? '').to.contain(key);
    expect(await tab.locator('.swagger-ui .auth-wrapper .authorize.locked').count()).to.be.greaterThan(0);
  });
});
