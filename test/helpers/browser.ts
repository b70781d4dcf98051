/**
 * Headless Chromium for the dashboard's browser tests: Debian's `chromium` (installed by
 * scripts/install-chromium.sh) driven by playwright-core, which never downloads a browser: it only
 * launches the executable found here.
 */
import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { until } from './until';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** TASKROUTER_CHROMIUM_PATH, else the Debian package's executable; undefined when none is installed. */
export function findChromium(): string | undefined {
  const configured = process.env['TASKROUTER_CHROMIUM_PATH'];
  if (configured) return existsSync(configured) ? configured : undefined;
  return CANDIDATES.find((p) => existsSync(p));
}

export async function launchChromium(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) {
    throw new Error(
      'Chromium not found: install it with scripts/install-chromium.sh (Debian package "chromium") or set ' +
        'TASKROUTER_CHROMIUM_PATH to a Chromium executable',
    );
  }
  return chromium.launch({ executablePath, headless: true });
}

/**
 * Fails the test on any page error, console error, or request that leaves the gateway (the dashboard
 * must work with no external network access). Returns what was seen, for the assertions.
 */
export function watchPage(page: Page, origin: string): { errors: string[]; foreignRequests: string[] } {
  const seen = { errors: [] as string[], foreignRequests: [] as string[] };
  page.on('pageerror', (err) => seen.errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    // Failed API calls the page handles (401 before signing in, 403 checks) log as resource errors.
    if (msg.type() === 'error' && !/status of 4\d\d/.test(msg.text()))
      seen.errors.push(`console: ${msg.text()}`);
  });
  page.on('request', (req) => {
    const url = req.url();
    if (!url.startsWith(origin) && !url.startsWith('data:')) seen.foreignRequests.push(url);
  });
  return seen;
}

/**
 * The dashboard pages of one test file: each page in a browser context of its own, watched (watchPage)
 * from the start; `expectClean()` in an afterEach fails the test on anything the pages saw since the last
 * check; `close()` closes every context and the browser.
 */
export class DashboardPages {
  private readonly contexts: BrowserContext[] = [];
  private readonly watched: Array<ReturnType<typeof watchPage>> = [];

  private constructor(private readonly browser: Browser) {}

  static async launch(): Promise<DashboardPages> {
    return new DashboardPages(await launchChromium());
  }

  /** A blank page whose requests may go to `origin` only. */
  async newPage(origin: string, viewport = { width: 1280, height: 860 }): Promise<Page> {
    const context = await this.browser.newContext({ viewport });
    this.contexts.push(context);
    const page = await context.newPage();
    this.watched.push(watchPage(page, origin));
    return page;
  }

  /** A page signed in to the dashboard of the gateway at `origin` with the user token `token`. */
  async signIn(origin: string, token: string, viewport?: { width: number; height: number }): Promise<Page> {
    const page = await this.newPage(origin, viewport);
    await page.goto(`${origin}/dashboard/`);
    await page.getByLabel('User token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    return page;
  }

  /** No page error, no console error, nothing fetched from anywhere but the gateway. */
  expectClean(): void {
    for (const w of this.watched.splice(0)) {
      expect(w.errors).toEqual([]);
      expect(w.foreignRequests).toEqual([]);
    }
  }

  async close(): Promise<void> {
    for (const c of this.contexts) await c.close();
    await this.browser.close();
  }
}

/**
 * Polls `check` (what a page shows, read from the test: the dashboard's CSP, no eval, rules out
 * page.waitForFunction with a string) every 50 ms until it holds; throws naming `what` after `timeoutMs`.
 */
export function pageUntil(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  return until(check, () => `timed out waiting for ${what}`, timeoutMs, 50);
}
