/**
 * Real headless Chromium for the console's browser tests: Debian's `chromium` package driven by
 * `playwright-core` (which downloads no browser of its own). Without /usr/bin/chromium the
 * browser tests are skipped locally and fail in CI (CI=true), where `.ci/run` installs it.
 *
 * The flags keep Chromium from reaching out (updates, sync, safe browsing, QUIC): the machine's
 * network refuses every connection but loopback. Playwright gives each launch a fresh temporary
 * profile (--user-data-dir) and removes it on close.
 */
import { existsSync } from 'node:fs';
import type { Test } from 'tap';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.FLOE_TEST_CHROMIUM ?? '/usr/bin/chromium';

export const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-default-apps', '--disable-extensions', '--disable-dev-shm-usage',
];

/** Chromium, or undefined when it is missing outside CI (the caller skips). Closed on teardown. */
export async function launchChromium(t: Test): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM_PATH)) {
    if (process.env.CI === 'true') t.fail(`Chromium is not installed at ${CHROMIUM_PATH} (required in CI; .ci/run installs it)`);
    else await t.test('browser tests', { skip: `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install chromium)` }, () => {});
    return undefined;
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS, timeout: 60_000 });
  t.teardown(() => browser.close());
  return browser;
}

/** What a page did that a test should notice: script errors, failed requests, CSP violations. */
export interface PageWatch {
  readonly errors: string[];
  readonly cspViolations: string[];
}

/** A new context and page on `baseUrl`; page errors and CSP reports are collected into the watch. */
export async function openPage(browser: Browser, baseUrl: string, options: { bypassCSP?: boolean } = {}): Promise<{ context: BrowserContext; page: Page; watch: PageWatch }> {
  // bypassCSP only where a test injects a checker (axe-core) the console's CSP would refuse.
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1280, height: 800 }, ...(options.bypassCSP ? { bypassCSP: true } : {}) });
  const page = await context.newPage();
  // Generous: on a loaded CI machine a page's first render has taken over 15 s; every wait is for
  // an element or event, so a longer bound costs nothing when the console is quick.
  page.setDefaultTimeout(60_000);
  const watch: PageWatch = { errors: [], cspViolations: [] };
  page.on('pageerror', (e) => watch.errors.push(e.message));
  page.on('console', (m) => {
    const text = m.text();
    if (/Content[- ]Security[- ]Policy/i.test(text)) watch.cspViolations.push(text);
    else if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(text)) watch.errors.push(text);
  });
  return { context, page, watch };
}
