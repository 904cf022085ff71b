/**
 * Real headless Firefox for the console's browser tests: Debian's `firefox-esr` driven over
 * WebDriver BiDi by `puppeteer-core` (which downloads no browser of its own). playwright-core's
 * own Firefox needs Playwright's patched build (not downloadable here), and its BiDi channel
 * (`moz-firefox`) sends commands ESR 153 does not have (emulation.setMediaFeaturesOverride), so
 * it cannot drive a stock Firefox ESR; see docs/decisions.md. Without /usr/bin/firefox-esr the
 * Firefox tests are skipped locally and fail in CI (CI=true), where `.ci/run` installs it.
 *
 * The preferences keep Firefox from reaching out on its first start (telemetry, updates, remote
 * settings, captive-portal and connectivity checks, push, safe browsing): the machine's network
 * refuses every connection but loopback. Checked with strace over a whole test file: no DNS
 * query, and no connection but to the test server. puppeteer gives each launch a fresh temporary
 * profile and removes it on close.
 */
import { existsSync } from 'node:fs';
import type { Test } from 'tap';
import puppeteer, { type Browser, type BrowserContext, type ElementHandle, type Page } from 'puppeteer-core';

export const FIREFOX_PATH = process.env.FLOE_TEST_FIREFOX ?? '/usr/bin/firefox-esr';

/** On top of puppeteer's own test profile (which already turns off most background services). */
const OFFLINE_PREFS: Readonly<Record<string, string | number | boolean>> = {
  'app.update.enabled': false,
  'app.update.auto': false,
  'app.update.service.enabled': false,
  'app.normandy.enabled': false,
  'toolkit.telemetry.enabled': false,
  'toolkit.telemetry.unified': false,
  'toolkit.telemetry.archive.enabled': false,
  'toolkit.telemetry.server': '',
  'datareporting.healthreport.uploadEnabled': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'browser.ping-centre.telemetry': false,
  'browser.newtabpage.activity-stream.feeds.telemetry': false,
  'browser.newtabpage.activity-stream.telemetry': false,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'network.dns.disablePrefetch': true,
  'network.prefetch-next': false,
  'network.predictor.enabled': false,
  'dom.push.connection.enabled': false,
  'browser.safebrowsing.update.enabled': false,
  'extensions.blocklist.enabled': false,
  'extensions.systemAddon.update.enabled': false,
  'browser.region.network.url': '',
  'browser.region.update.enabled': false,
  'browser.topsites.contile.enabled': false,
  'media.gmp-gmpopenh264.enabled': false,
  'geo.enabled': false,
  // Remote settings' own "do nothing" value (Firefox skips remote activity for it under test).
  'services.settings.server': 'data:,#remote-settings-dummy/v1',
  // Anything left pointing at puppeteer's placeholder host resolves locally, with no DNS query.
  'network.dns.localDomains': 'dummy.test',
};

/** Firefox ESR, or undefined when it is missing outside CI (the caller skips). Closed on teardown. */
export async function launchFirefox(t: Test): Promise<Browser | undefined> {
  if (!existsSync(FIREFOX_PATH)) {
    if (process.env.CI === 'true') t.fail(`Firefox ESR is not installed at ${FIREFOX_PATH} (required in CI; .ci/run installs it)`);
    else await t.test('Firefox tests', { skip: `Firefox ESR is not installed at ${FIREFOX_PATH} (apt-get install firefox-esr)` }, () => {});
    return undefined;
  }
  const browser = await puppeteer.launch({
    browser: 'firefox', protocol: 'webDriverBiDi', executablePath: FIREFOX_PATH, headless: true,
    timeout: 60_000, extraPrefsFirefox: { ...OFFLINE_PREFS },
    // What Firefox's own test harnesses set: connections to anything but loopback are refused, and
    // remote settings honour puppeteer's dummy server (a release build ignores that preference
    // otherwise and looks up firefox.settings.services.mozilla.com at start).
    env: { ...process.env, MOZ_DISABLE_NONLOCAL_CONNECTIONS: '1' },
  });
  t.teardown(() => browser.close());
  return browser;
}

/** What a page did that a test should notice: script errors and CSP violations. */
export interface FirefoxPageWatch {
  readonly errors: string[];
  readonly cspViolations: string[];
}

/**
 * A new (incognito-like) context and a page on `baseUrl`. Script errors come from BiDi's log
 * events; CSP violations from the page's own `securitypolicyviolation` events, which a preload
 * script (not subject to the page's CSP) reports through the console, since Firefox does not
 * pass its CSP warnings to BiDi's log.
 */
export async function openFirefoxPage(browser: Browser, baseUrl: string): Promise<{ context: BrowserContext; page: Page; watch: FirefoxPageWatch; goto(path: string): Promise<void> }> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  // Generous: on a loaded CI machine a page's first render has taken over 15 s; every wait is for
  // an element or event, so a longer bound costs nothing when the console is quick.
  page.setDefaultTimeout(60_000);
  const watch: FirefoxPageWatch = { errors: [], cspViolations: [] };
  await page.evaluateOnNewDocument(`document.addEventListener('securitypolicyviolation', (e) => {
    console.warn('floe-csp-violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline'));
  })`);
  page.on('pageerror', (e) => watch.errors.push(e instanceof Error ? e.message : String(e)));
  page.on('console', (m) => {
    const text = m.text();
    if (text.startsWith('floe-csp-violation: ') || /Content[- ]Security[- ]Policy/i.test(text)) watch.cspViolations.push(text);
    else if (m.type() === 'error') watch.errors.push(text);
  });
  return {
    context, page, watch,
    async goto(path) {
      await page.goto(new URL(path, baseUrl).href);
    },
  };
}

/** The form field whose label is `label` (by its accessible name). */
export async function fieldByLabel(page: Page, label: string): Promise<ElementHandle> {
  return waitFor(page, `label ${label}`, `(() => { const l = [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === ${JSON.stringify(label)}); return l && l.control; })()`);
}

/** The button whose text is `name`. */
export async function buttonNamed(page: Page, name: string): Promise<ElementHandle> {
  return waitFor(page, `button ${name}`, `[...document.querySelectorAll('button')].find((b) => b.textContent.trim() === ${JSON.stringify(name)} && !b.disabled && b.offsetParent !== null)`);
}

/**
 * Waits until `text` (a string or a regular expression) appears in the page's text; by default as
 * long as the page's other waits (60 s, a bound for what never shows: under load a sign-in and its
 * first render took over 15 s).
 */
export async function waitForText(page: Page, text: string | RegExp, timeout = 60_000): Promise<void> {
  const test = typeof text === 'string' ? `document.body.innerText.includes(${JSON.stringify(text)})` : `${text.toString()}.test(document.body.innerText)`;
  await page.waitForFunction(test, { timeout });
}

/** The heading `name` (h1–h3), once it is on the page. */
export async function waitForHeading(page: Page, name: string | RegExp): Promise<void> {
  const match = typeof name === 'string' ? `h.textContent.trim() === ${JSON.stringify(name)}` : `${name.toString()}.test(h.textContent.trim())`;
  await page.waitForFunction(`[...document.querySelectorAll('h1, h2, h3')].some((h) => ${match})`);
}

async function waitFor(page: Page, what: string, expression: string): Promise<ElementHandle> {
  const handle = await page.waitForFunction(`${expression} || null`).catch((e: unknown) => {
    throw new Error(`waiting for ${what}: ${e instanceof Error ? e.message : String(e)}`);
  });
  const element = handle.asElement();
  if (!element) throw new Error(`${what} is not an element`);
  return element as ElementHandle;
}
