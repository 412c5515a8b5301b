import AxeBuilder from '@axe-core/playwright';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import type { HeraldConfig } from '../../src/config/config';
import { createApp } from '../../src/app';
import { createTestDatabase } from './database';
import { freePort } from './net';
import { checkedHttp, TestApp } from './app';
import { chromiumPath, INSTALL_COMMAND } from './chromium';
import { DEADLINE_MS, pollUntil } from './poll';
import { fastEngine, testConfig } from './config';

/**
 * A real headless Chromium for the settings page's tests: Debian's `chromium` package (the global
 * setup installs it when missing and it can: ./chromium.ts) driven by playwright-core, which
 * downloads no browser of its own. Flags measured on this kind of machine: as root, offline, and
 * without Chromium's own background connections (which the closed network would refuse, many at a time).
 */
/** `extraArgs`: more Chromium flags (e.g. public-https.ts's host mapping). */
export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!fs.existsSync(executablePath)) {
    throw new Error(`${executablePath} is missing: ${INSTALL_COMMAND} (npm test's global setup installs it when run as root)`);
  }
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      ...extraArgs,
    ],
  });
}

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 375, height: 740 };

/**
 * The app as a browser reaches it: on a port chosen before boot so PUBLIC_URL (and the LinkedIn
 * callback built from it) is right, as `http://localhost:<port>`. Loopback receivers and fakes
 * listen on 127.0.0.1: another site for the browser, so cross-site rules (SameSite cookies) apply
 * between them as they would between Herald and LinkedIn.
 */
export interface PageApp extends TestApp {
  baseUrl: string;
}

export async function bootPageApp(overrides: Partial<HeraldConfig> = {}, options: { engine?: boolean } = {}): Promise<PageApp> {
  const port = await freePort();
  const databaseUrl = (await createTestDatabase()).url;
  const baseUrl = `http://localhost:${port}`;
  const config = testConfig(databaseUrl, {
    ...(options.engine ? fastEngine() : { allowPrivateUrls: true }),
    publicUrl: baseUrl,
    ...overrides,
  });
  const app = await createApp(config, { print: () => undefined });
  await app.listen(port, '127.0.0.1');
  return {
    app,
    baseUrl,
    ...(await checkedHttp(app)),
    config,
    databaseUrl,
    adminKey: config.bootstrapApiKey ?? '',
    close: () => app.close(),
  };
}

export async function newPage(browser: Browser, viewport = DESKTOP): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, locale: 'en-GB', timezoneId: 'Europe/Paris' });
  const page = await context.newPage();
  // A script error on a page is a failed test, not a silent one.
  page.on('pageerror', (err) => {
    throw err;
  });
  return { context, page };
}

/** Logs in through the login form, as a person would (the key typed, then Enter). */
export async function logIn(page: Page, baseUrl: string, apiKey: string, next = '/settings'): Promise<void> {
  await page.goto(`${baseUrl}${next}`);
  await page.getByLabel('API key').fill(apiKey);
  await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/settings/login')), page.getByLabel('API key').press('Enter')]);
}

/** axe-core's violations of impact "critical" on the current page (none is the bar). */
export async function criticalViolations(page: Page): Promise<{ id: string; help: string; nodes: string[] }[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === 'critical')
    .map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => n.html) }));
}

/** All violations (any impact), for the message when a test wants none of a kind. */
export async function violations(page: Page): Promise<{ id: string; impact: string | null | undefined; nodes: string[] }[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.html).slice(0, 3) }));
}

/** True when the page is wider than the window (a layout that breaks on a phone). */
export async function overflowsHorizontally(page: Page): Promise<boolean> {
  // A string: the test project has no DOM types, and this runs in the page.
  return page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth + 1');
}

/**
 * A screenshot of the page. Always taken (a broken page fails the test); copied into
 * docs/images/ when HERALD_UPDATE_SCREENSHOTS=1, which is how the documentation's pictures are
 * made: `HERALD_UPDATE_SCREENSHOTS=1 npx jest test/settings-accounts.test.ts`.
 */
export async function screenshot(page: Page, name: string): Promise<Buffer> {
  const png = await page.screenshot({ fullPage: true });
  if (process.env.HERALD_UPDATE_SCREENSHOTS === '1') {
    const dir = path.resolve(__dirname, '../../docs/images');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, name), png);
  }
  return png;
}

/** Polls `read` (e.g. a page reload) until `done` holds: the one poll helper (./poll.ts), at a page's pace. */
export function eventually<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = DEADLINE_MS): Promise<T> {
  return pollUntil(what, read, done, timeoutMs, 200);
}
