/**
 * Hosted tasks on the dashboard (issue 24, docs/hosted-tasks.md, docs/dashboard.md): a task the gateway
 * hosts is marked as hosted in the JSON API and in the browser (the Tasks list, the "Hosted only"
 * filter, the task's page with its explanation); a task the upstream runs itself is not. Real gateway,
 * Temporal dev server, two example upstreams (one running tasks itself, one with ordinary tools only)
 * and headless Chromium, both databases.
 */
import type { Page } from 'playwright-core';
import { DashboardPages } from '../helpers/browser';
import type { DashboardFixture } from '../helpers/dashboard';
import { startDashboardFixture, TOKENS, waitForDetail } from '../helpers/dashboard';

const EXPLANATION = 'Hosted by the gateway: an ordinary tool call run as a durable task';
const list = (q = '') => `/v1/projects/hosting/tasks${q}`;
const task = (ref: string) => `/v1/projects/hosting/tasks/${ref}`;

let f: DashboardFixture;
let pages: DashboardPages;
/** A task upstream `tasks` runs itself, and a call of upstream `plain`'s ordinary tool the gateway hosts. */
const refs = { upstreamTask: '', hostedTask: '' };

beforeAll(async () => {
  f = await startDashboardFixture({ hosted: true });
  pages = await DashboardPages.launch();
  refs.upstreamTask = (
    await f.startTask(
      'alice',
      'tasks.slow_compute',
      { seconds: 120, label: 'upstream' },
      { project: 'hosting' },
    )
  ).ref;
  refs.hostedTask = (
    await f.startTask('alice', 'plain.slow_compute', { seconds: 1, label: 'hosted' }, { project: 'hosting' })
  ).ref;
  await waitForDetail(f.api('alice'), task(refs.hostedTask), (b) => b.task.status === 'completed');
});
afterAll(async () => {
  await pages?.close();
  await f?.close();
});
afterEach(() => {
  pages.expectClean();
});

describe('the JSON API', () => {
  test('the list and the detail say which task is hosted', async () => {
    const api = f.api('bob');
    const reply = await api.get(list());
    expect(reply.status).toBe(200);
    expect(reply.body.hosted).toBe(false);
    expect(reply.body.tasks).toEqual([
      expect.objectContaining({
        ref: refs.hostedTask,
        upstream: 'plain',
        tool: 'slow_compute',
        hosted: true,
      }),
      expect.objectContaining({
        ref: refs.upstreamTask,
        upstream: 'tasks',
        tool: 'slow_compute',
        hosted: false,
      }),
    ]);
    const hosted = await api.get(task(refs.hostedTask));
    expect(hosted.body.task).toMatchObject({ hosted: true, status: 'completed' });
    const upstream = await api.get(task(refs.upstreamTask));
    expect(upstream.body.task).toMatchObject({ hosted: false, status: 'working' });
  });

  test('hosted=true lists only hosted tasks, with the tab counts under the same filter', async () => {
    const api = f.api('alice');
    const all = await api.get(list());
    expect(all.body.counts).toEqual({ all: 2, pending: 1, completed: 1, failed: 0, cancelled: 0 });
    const hosted = await api.get(list('?hosted=true'));
    expect(hosted.status).toBe(200);
    expect(hosted.body.hosted).toBe(true);
    expect(hosted.body.tasks.map((x: { ref: string }) => x.ref)).toEqual([refs.hostedTask]);
    expect(hosted.body.counts).toEqual({ all: 1, pending: 0, completed: 1, failed: 0, cancelled: 0 });
    const pendingHosted = await api.get(list('?hosted=true&group=pending'));
    expect(pendingHosted.body.tasks).toEqual([]);
    const wrong = await api.get(list('?hosted=yes'));
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toBe('"hosted" must be "true"');
  });
});

describe('in the browser', () => {
  const signIn = (): Promise<Page> => pages.signIn(f.baseUrl, TOKENS.tess);

  test('the Tasks list marks the hosted task, and "Hosted only" shows just the hosted ones', async () => {
    const page = await signIn();
    await page.getByRole('link', { name: /hosting/ }).click();
    const hostedRow = page.locator(`tr[data-ref="${refs.hostedTask}"]`);
    const upstreamRow = page.locator(`tr[data-ref="${refs.upstreamTask}"]`);
    await hostedRow.waitFor();
    await upstreamRow.waitFor();
    const badge = hostedRow.getByTestId('hosted-badge');
    expect(await badge.textContent()).toBe('hosted');
    expect(await badge.getAttribute('title')).toBe(EXPLANATION);
    expect(await upstreamRow.getByTestId('hosted-badge').count()).toBe(0);
    expect(await page.locator('[data-count="all"]').textContent()).toBe('2');

    const filter = page.getByRole('button', { name: 'Hosted only' });
    expect(await filter.getAttribute('aria-pressed')).toBe('false');
    await filter.click();
    await upstreamRow.waitFor({ state: 'detached' });
    expect(page.url()).toContain('hosted=true');
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await hostedRow.getAttribute('data-hosted')).toBe('true');
    await page.locator('[data-count="all"]').filter({ hasText: /^1$/ }).waitFor();
    expect(await page.getByRole('button', { name: 'Hosted only' }).getAttribute('aria-pressed')).toBe('true');
    // The filter stays on across the group tabs.
    await page.getByRole('tab', { name: /Pending/ }).click();
    await page.getByText('No tasks here.').waitFor();
    expect(page.url()).toContain('hosted=true');
    // Pressed again, it shows every task.
    await page.getByRole('button', { name: 'Hosted only' }).click();
    await upstreamRow.waitFor();
    expect(page.url()).not.toContain('hosted=');
  });

  test("a hosted task's page carries the mark and says what it means; another task's does not", async () => {
    const page = await signIn();
    await page.goto(`${f.baseUrl}/dashboard/#/p/hosting/t/${refs.hostedTask}`);
    await page.getByRole('heading', { name: 'slow_compute' }).waitFor();
    expect(await page.locator('.heading-row').getByTestId('hosted-badge').textContent()).toBe('hosted');
    expect(await page.getByTestId('hosted-note').textContent()).toBe(`${EXPLANATION}.`);
    expect(await page.locator('[data-field="Upstream"]').textContent()).toBe('plain');

    await page.goto(`${f.baseUrl}/dashboard/#/p/hosting/t/${refs.upstreamTask}`);
    await page
      .locator('[data-field="Upstream"]')
      .filter({ hasText: /^tasks$/ })
      .waitFor();
    expect(await page.getByTestId('hosted-badge').count()).toBe(0);
    expect(await page.getByTestId('hosted-note').count()).toBe(0);
  });
});
