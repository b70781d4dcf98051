/**
 * Headless Chromium for the dashboard's browser tests: Debian's `chromium` (installed by
 * scripts/install-chromium.sh) driven by playwright-core, which never downloads a browser: it only
 * launches the executable found here.
 */
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

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
