// Headless Chromium for browser tests: Debian's /usr/bin/chromium driven by playwright-core, a
// fresh profile per launch (removed afterwards), no background network traffic.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const TEST_OUTPUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test-output');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The browser suites need Chromium; without it they fail with one line saying how to get it (never a silent skip). */
export function requireChromium(): void {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: \`npm run setup\` installs Debian's chromium for the browser tests`);
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launchChromium(options: { width?: number; height?: number; isMobile?: boolean } = {}): Promise<Browser> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    deviceScaleFactor: 1,
    isMobile: options.isMobile,
    hasTouch: options.isMobile,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close().catch(() => undefined);
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
