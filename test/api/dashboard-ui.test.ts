/**
 * The dashboard in a real browser: headless Chromium (Debian package) driven by playwright-core, against
 * the real gateway, Temporal dev server and example upstream. Saves screenshots of the main screens
 * (into TASKROUTER_SCREENSHOTS_DIR when set: `npm run docs:screenshots` writes docs/screenshots/).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { DashboardPages, pageUntil } from '../helpers/browser';
import type { DashboardFixture, Who } from '../helpers/dashboard';
import { startDashboardFixture, TOKENS, waitForDetail } from '../helpers/dashboard';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';

const SHOTS = process.env['TASKROUTER_SCREENSHOTS_DIR']
  ? path.resolve(process.env['TASKROUTER_SCREENSHOTS_DIR'])
  : mkdtempSync(path.join(os.tmpdir(), 'taskrouter-shots-'));

let f: DashboardFixture;
let pages: DashboardPages;
const refs = { keyDone: '', keySlow: '', bobSlow: '', aliceSlow: '' };

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  f = await startDashboardFixture({ temporalUiUrl: 'http://127.0.0.1:8233' });
  pages = await DashboardPages.launch();
  refs.keyDone = (await f.startTask('key', 'slow_compute', { seconds: 0, label: 'nightly export' })).ref;
  refs.keySlow = (await f.startTask('key', 'slow_compute', { seconds: 300, label: 'reindex' })).ref;
  refs.bobSlow = (await f.startTask('bob', 'slow_compute', { seconds: 300, label: 'bob report' })).ref;
  refs.aliceSlow = (await f.startTask('alice', 'slow_compute', { seconds: 300, label: 'backfill' })).ref;
  await waitForDetail(
    f.api('alice'),
    `/v1/projects/board/tasks/${refs.keyDone}`,
    (b) => b.task.status === 'completed',
  );
});
afterAll(async () => {
  await pages?.close();
  await f?.close();
  if (!process.env['TASKROUTER_SCREENSHOTS_DIR']) rmSync(SHOTS, { recursive: true, force: true });
});
afterEach(() => {
  pages.expectClean();
});

function newPage(viewport?: { width: number; height: number }): Promise<Page> {
  return pages.newPage(f.baseUrl, viewport);
}

function signIn(who: Who, viewport?: { width: number; height: number }): Promise<Page> {
  return pages.signIn(f.baseUrl, TOKENS[who], viewport);
}

async function shot(page: Page, name: string): Promise<void> {
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  expect(statSync(file).size).toBeGreaterThan(5_000);
}

/** The count shown on a group tab. */
async function tabCount(page: Page, group: string): Promise<number> {
  return Number(await page.locator(`[data-count="${group}"]`).textContent());
}

/** Waits until the task table (or the empty notice) shows `n` rows. */
async function rowsCount(page: Page, n: number): Promise<void> {
  // Polled from here: the dashboard's CSP (no eval) rules out page.waitForFunction with a string.
  await pageUntil(async () => (await page.locator('tbody tr').count()) === n, `${n} rows`);
}

async function rowRefs(page: Page): Promise<string[]> {
  return page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-ref') ?? ''));
}

test('sign in: the session cookie is HttpOnly, the token is not kept, the project picker lists projects', async () => {
  const page = await newPage();
  await page.goto(`${f.baseUrl}/dashboard/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await shot(page, 'sign-in');
  await page.getByLabel('User token').fill('trp_wrong-token-0000000000000000000000');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'Unknown, revoked or expired user token' }).waitFor();
  await page.getByLabel('User token').fill(TOKENS.alice);
  await page.keyboard.press('Enter');
  await page.getByRole('link', { name: /board/ }).waitFor();
  expect(await page.getByRole('link', { name: /peruser/ }).count()).toBe(1);
  expect(await page.getByTestId('whoami').textContent()).toBe('alice');
  const cookies = await page.context().cookies();
  expect(cookies).toEqual([
    expect.objectContaining({ name: 'taskrouter_session', httpOnly: true, sameSite: 'Strict' }),
  ]);
  // Nothing script-readable holds a credential.
  expect(await page.evaluate('document.cookie')).toBe('');
  expect(await page.evaluate('JSON.stringify(localStorage) + JSON.stringify(sessionStorage)')).not.toContain(
    'trp_',
  );
});

test('tabs show the right tasks and counts; the list refreshes live', async () => {
  const page = await signIn('alice');
  await page.getByRole('link', { name: /board/ }).click();
  await page.getByRole('tab', { name: /All/ }).waitFor();
  expect(await tabCount(page, 'all')).toBe(4);
  expect(await tabCount(page, 'pending')).toBe(3);
  expect(await tabCount(page, 'completed')).toBe(1);
  expect(await rowRefs(page)).toEqual([refs.aliceSlow, refs.bobSlow, refs.keySlow, refs.keyDone]);
  await shot(page, 'tasks');
  // The project's upstreams, with what their last probe found.
  const upstream = page.locator('section.upstreams li[data-upstream="example"]');
  await upstream.waitFor();
  expect(await upstream.textContent()).toContain('MCP 2026-07-28');

  await page.getByRole('tab', { name: /Pending/ }).click();
  await rowsCount(page, 3);
  expect(await rowRefs(page)).toEqual([refs.aliceSlow, refs.bobSlow, refs.keySlow]);
  expect(await page.getByRole('tab', { name: /Pending/ }).getAttribute('aria-selected')).toBe('true');

  // Keyboard: arrow keys move between tabs.
  await page.getByRole('tab', { name: /Pending/ }).focus();
  await page.keyboard.press('ArrowRight');
  await pageUntil(async () => page.url().includes('group=completed'), 'the Completed tab');
  await pageUntil(
    async () => (await page.evaluate('document.activeElement?.dataset.group')) === 'completed',
    'focus on the Completed tab',
  );
  // A second arrow key moves on from there (focus followed the navigation).
  await page.keyboard.press('ArrowRight');
  await pageUntil(async () => page.url().includes('group=failed'), 'the Failed tab');
  await pageUntil(
    async () => (await page.evaluate('document.activeElement?.dataset.group')) === 'failed',
    'focus on the Failed tab',
  );
  await page.keyboard.press('ArrowLeft');
  await pageUntil(async () => page.url().includes('group=completed'), 'back to the Completed tab');
  await rowsCount(page, 1);
  expect(await rowRefs(page)).toEqual([refs.keyDone]);
  await page.getByRole('tab', { name: /Failed/ }).click();
  await page.getByText('No tasks here.').waitFor();

  // A new task appears and finishes without a reload.
  await page.getByRole('tab', { name: /Pending/ }).click();
  await rowsCount(page, 3);
  await page.evaluate('window.marker = 42');
  const quick = await f.startTask('alice', 'slow_compute', { seconds: 2, label: 'quick' });
  await page.locator(`tr[data-ref="${quick.ref}"]`).waitFor();
  await page.locator(`tr[data-ref="${quick.ref}"]`).waitFor({ state: 'detached', timeout: 20_000 });
  await page.locator('[data-count="completed"]').filter({ hasText: /^2$/ }).waitFor();
  expect(await page.evaluate('window.marker')).toBe(42);
});

test('assign a task, see it in the timeline, then find it with the Assigned filter', async () => {
  const page = await signIn('alice');
  await page.goto(`${f.baseUrl}/dashboard/#/p/board/t/${refs.keySlow}`);
  await page.getByRole('heading', { name: 'slow_compute' }).waitFor();
  // An API-key task: no payload for anyone, but team members may assign it.
  await page.getByTestId('payload-hidden').filter({ hasText: 'started with an API key' }).waitFor();
  expect(await page.getByTestId('cancel-task').count()).toBe(0);
  await page.getByLabel('Assignee').selectOption('bob');
  await page.getByRole('button', { name: 'Save assignee' }).click();
  await page.getByTestId('timeline').getByText('Assigned to bob by alice').waitFor();
  expect(await page.locator('[data-field="Assignee"]').textContent()).toBe('bob');
  expect(await page.getByTestId('task-status').textContent()).toBe('working');
  expect(await page.getByTestId('temporal-link').getAttribute('href')).toMatch(
    /^http:\/\/127\.0\.0\.1:8233\/namespaces\/.+\/workflows\/task-[0-9a-f]{32}$/,
  );
  await shot(page, 'task-assigned');

  await page.getByRole('link', { name: 'board' }).click();
  await page.getByRole('button', { name: 'Assigned', exact: true }).click();
  await rowsCount(page, 1);
  expect(await rowRefs(page)).toEqual([refs.keySlow]);
  expect(await tabCount(page, 'all')).toBe(1);
  expect(await page.locator('tbody tr .assignee').textContent()).toBe('bob');
  expect(await page.getByRole('button', { name: 'Assigned', exact: true }).getAttribute('aria-pressed')).toBe(
    'true',
  );
  // Keyboard: focus stays on the filter across the navigation it causes.
  await page.getByRole('button', { name: 'Assigned to me' }).focus();
  await page.keyboard.press('Enter');
  await pageUntil(async () => page.url().includes('assigned=me'), 'the "Assigned to me" filter');
  await page.getByText('No tasks here.').waitFor();
  expect(await page.evaluate('document.activeElement?.dataset.assigned')).toBe('me');
  expect(await tabCount(page, 'all')).toBe(0);
});

test('the original caller answers an elicitation and watches the task complete without reloading', async () => {
  const filename = 'budget-2027.xlsx';
  const { ref } = await f.startTask(
    'alice',
    'confirm_delete',
    { filename },
    { capabilities: TASKS_AND_FORM_CAPS },
  );
  const page = await signIn('alice');
  // The seed's label for input_required, in the list as on the task's page and its timeline.
  await page.goto(`${f.baseUrl}/dashboard/#/p/board`);
  const row = page.locator(`tr[data-ref="${ref}"]`);
  await row.locator('[data-label="Status"]').getByText('Waiting for input').waitFor({ timeout: 20_000 });
  await page.goto(`${f.baseUrl}/dashboard/#/p/board/t/${ref}`);
  const form = page.locator('form.elicitation');
  await form.getByText(`Delete ${filename}?`).waitFor({ timeout: 20_000 });
  expect(await page.getByTestId('task-status').textContent()).toBe('Waiting for input');
  await shot(page, 'task-input');
  await page.evaluate('window.marker = 7');
  await form.getByLabel('Confirm').check();
  await form.getByRole('button', { name: 'Submit' }).click();
  await page.getByTestId('task-status').filter({ hasText: 'completed' }).waitFor({ timeout: 20_000 });
  await page.getByText(`Confirmed: deleted ${filename}`).waitFor();
  expect(await page.locator('form.elicitation').count()).toBe(0);
  expect(await page.evaluate('window.marker')).toBe(7);
  await page.getByTestId('timeline').getByText('completed').waitFor();
  expect(await page.getByTestId('timeline').getByText('Waiting for input').count()).toBeGreaterThan(0);
  expect(await page.getByText('input required').count()).toBe(0);
  await shot(page, 'task-completed');
});

test('two questions at once: answering one keeps the other form (and what is typed in it)', async () => {
  const { ref } = await f.startTask('alice', 'multi_input', {}, { capabilities: TASKS_AND_FORM_CAPS });
  const page = await signIn('alice');
  await page.goto(`${f.baseUrl}/dashboard/#/p/board/t/${ref}`);
  const first = page.locator('form[data-input-key="first"]');
  const second = page.locator('form[data-input-key="second"]');
  await first.getByText('first value?').waitFor({ timeout: 20_000 });
  // Half-typed text in one form survives the live refresh and the other form's answer.
  await second.getByLabel('name').fill('Grace');
  await first.getByLabel('name').fill('Ada');
  await first.getByRole('button', { name: 'Submit' }).click();
  await first.waitFor({ state: 'detached', timeout: 20_000 });
  expect(await second.getByLabel('name').inputValue()).toBe('Grace');
  // A required field left empty is caught by the browser before anything is sent.
  await second.getByLabel('name').fill('');
  await second.getByRole('button', { name: 'Submit' }).click();
  expect(
    await second.getByLabel('name').evaluate((el) => (el as { validity: { valid: boolean } }).validity.valid),
  ).toBe(false);
  await second.getByLabel('name').fill('Grace');
  await second.getByRole('button', { name: 'Submit' }).click();
  await page.getByText('Got Ada and Grace').waitFor({ timeout: 20_000 });
  expect(await page.getByTestId('task-status').textContent()).toBe('completed');
});

test('a direct member sees metadata, no assignment control, and only their own payload', async () => {
  const page = await signIn('bob');
  await page.getByRole('link', { name: /board/ }).click();
  await page.getByRole('tab', { name: /All/ }).waitFor();
  await page.goto(`${f.baseUrl}/dashboard/#/p/board/t/${refs.aliceSlow}`);
  await page.getByRole('heading', { name: 'slow_compute' }).waitFor();
  await page
    .getByTestId('payload-hidden')
    .filter({ hasText: 'Only the user who started this task' })
    .waitFor();
  expect(await page.getByTestId('assign-form').count()).toBe(0);
  expect(await page.getByTestId('cancel-task').count()).toBe(0);
  expect(await page.getByTestId('temporal-link').count()).toBe(0);
  expect(await page.locator('[data-field="Started by"]').textContent()).toBe('alice');
  await shot(page, 'task-direct-member');

  // Their own task: payload and cancel, still no assignment.
  await page.goto(`${f.baseUrl}/dashboard/#/p/board/t/${refs.bobSlow}`);
  await page.getByText('"label": "bob report"').waitFor();
  expect(await page.getByTestId('assign-form').count()).toBe(0);
  page.once('dialog', (d) => void d.accept());
  await page.getByTestId('cancel-task').click();
  await page.getByTestId('task-status').filter({ hasText: 'cancelled' }).waitFor({ timeout: 20_000 });
});

test('on a phone screen the task list stacks into cards', async () => {
  const page = await signIn('tess', { width: 390, height: 844 });
  await page.getByRole('link', { name: /board/ }).click();
  await page.getByRole('tab', { name: /All/ }).waitFor();
  const width = await page.evaluate('document.documentElement.scrollWidth');
  expect(width).toBeLessThanOrEqual(390);
  expect(await page.locator('thead').isVisible()).toBe(false);
  // The skip link moves focus to the content without leaving the view.
  const url = page.url();
  await page.locator('.skip-link').focus();
  await page.keyboard.press('Enter');
  expect(await page.evaluate('document.activeElement?.id')).toBe('main');
  expect(page.url()).toBe(url);
  await shot(page, 'tasks-phone');
});
