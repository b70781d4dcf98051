// A project's tasks: the group tabs with their counts, the Assigned and Hosted filters, the task table
// and "Load more", refreshed live without moving the keyboard focus.
import type {
  ProjectView,
  TaskGroupView,
  TaskListView,
  TaskSummaryView,
  UpstreamStatusView,
} from '../../view-types';
import { api } from '../api.js';
import { approvalPolicySection } from './approvals.js';
import { connectionsSection } from './connections.js';
import { h, keepFocus, replace } from '../dom.js';
import { ago, callerText, formatTime, hostedBadge, personName, statusBadge } from '../format.js';
import { setCrumbs } from '../frame.js';
import type { TasksRoute } from '../nav.js';
import { goAndFocus, tasksHash } from '../nav.js';
import { keepRefreshing } from '../refresh.js';
import { state } from '../state.js';

const GROUPS: ReadonlyArray<readonly [TaskGroupView, string]> = [
  ['all', 'All'],
  ['pending', 'Pending'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
];
const ASSIGNED: ReadonlyArray<readonly [string, string]> = [
  ['all', 'All tasks'],
  ['any', 'Assigned'],
  ['me', 'Assigned to me'],
];
const LIST_REFRESH_MS = 2000;

export async function renderTasks(main: HTMLElement, route: TasksRoute, renderId: number): Promise<void> {
  const { slug, group, assigned, hosted } = route;
  setCrumbs({ label: 'Projects', href: '#/' }, { label: slug });
  document.title = `${slug} tasks · TaskRouter`;
  const params = (): string => {
    const q = new URLSearchParams({ group, assigned });
    if (hosted) q.set('hosted', 'true');
    return `/v1/projects/${encodeURIComponent(slug)}/tasks?${q}`;
  };
  const [first, project] = await Promise.all([
    api<TaskListView>('GET', params()),
    api<ProjectView>('GET', `/v1/projects/${encodeURIComponent(slug)}`),
  ]);
  let data = first;
  if (renderId !== state.renderId) return;

  const tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Task groups' });
  // Buttons, not a select: a select fires "change" on every arrow key, which would navigate.
  const filter = h(
    'div',
    { class: 'segmented', role: 'group', 'aria-label': 'Assigned filter' },
    ASSIGNED.map(([value, label]) =>
      h(
        'button',
        {
          type: 'button',
          'data-assigned': value,
          'aria-pressed': value === assigned ? 'true' : 'false',
          onclick: () => goAndFocus(tasksHash(slug, group, value, hosted), `[data-assigned="${value}"]`),
        },
        label,
      ),
    ),
  );
  // Only the tasks the gateway hosts (ordinary tool calls it runs as durable tasks), or all of them.
  const hostedFilter = h(
    'button',
    {
      type: 'button',
      id: 'hosted-filter',
      class: 'toggle',
      'aria-pressed': hosted ? 'true' : 'false',
      title: 'Show only the tasks the gateway hosts',
      onclick: () => goAndFocus(tasksHash(slug, group, assigned, !hosted), '#hosted-filter'),
    },
    'Hosted only',
  );
  const panel = h('div', { id: 'task-panel', role: 'tabpanel', 'aria-labelledby': `tab-${group}` });
  const more = h('div', { class: 'more' });

  const drawTabs = (): void =>
    replace(
      tabs,
      GROUPS.map(([value, label]) =>
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            id: `tab-${value}`,
            'data-group': value,
            'aria-selected': value === group ? 'true' : 'false',
            'aria-controls': 'task-panel',
            tabindex: value === group ? '0' : '-1',
            onclick: () => goAndFocus(tasksHash(slug, value, assigned, hosted), `[data-group="${value}"]`),
            onkeydown: (event) => {
              const i = GROUPS.findIndex(([g]) => g === value);
              const next = event.key === 'ArrowRight' ? i + 1 : event.key === 'ArrowLeft' ? i - 1 : null;
              if (next === null) return;
              event.preventDefault();
              const target = GROUPS[(next + GROUPS.length) % GROUPS.length]?.[0] ?? 'all';
              goAndFocus(tasksHash(slug, target, assigned, hosted), `[data-group="${target}"]`);
            },
          },
          label,
          ' ',
          h('span', { class: 'count', 'data-count': value }, String(data.counts[value])),
        ),
      ),
    );

  let rows = data.tasks;
  const groupLabel = GROUPS.find(([g]) => g === group)?.[1];
  const drawRows = (): void => {
    if (rows.length === 0) {
      return replace(panel, h('p', { class: 'empty muted' }, 'No tasks here.'));
    }
    replace(
      panel,
      h(
        'table',
        { class: 'tasks' },
        h('caption', { class: 'visually-hidden' }, `${groupLabel} tasks`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Tool', 'Status', 'Message', 'Caller', 'Assignee', 'Created'].map((c) =>
              h('th', { scope: 'col' }, c),
            ),
          ),
        ),
        h(
          'tbody',
          {},
          rows.map((t) => taskRow(slug, t)),
        ),
      ),
    );
  };
  let nextCursor = data.nextCursor;
  let pagesLoaded = 1;
  const loadMore = async (cursor: string): Promise<void> => {
    const page = await api<TaskListView>('GET', `${params()}&cursor=${encodeURIComponent(cursor)}`);
    const firstNew = page.tasks[0]?.ref;
    rows = rows.concat(page.tasks);
    nextCursor = page.nextCursor;
    pagesLoaded += 1;
    drawRows();
    drawMore();
    // Keyboard users continue at the first task of the new page.
    if (firstNew) panel.querySelector<HTMLElement>(`tr[data-ref="${firstNew}"] a`)?.focus();
  };
  const drawMore = (): void => {
    const cursor = nextCursor;
    replace(more, cursor && h('button', { type: 'button', onclick: () => loadMore(cursor) }, 'Load more'));
  };

  drawTabs();
  drawRows();
  drawMore();
  const connections = await connectionsSection(slug);
  if (renderId !== state.renderId) return;
  replace(
    main,
    h(
      'div',
      { class: 'heading-row' },
      h('h1', {}, 'Tasks'),
      h('div', { class: 'filter' }, filter, hostedFilter),
    ),
    tabs,
    panel,
    more,
    upstreamSection(project.upstreams),
    approvalPolicySection(slug, project.approvalPolicy),
    connections,
  );

  // Live refresh: counts and the first page, redrawn only when something changed (keeps focus put).
  let seen = JSON.stringify(data);
  keepRefreshing(renderId, LIST_REFRESH_MS, async () => {
    const fresh = await api<TaskListView>('GET', params());
    if (renderId !== state.renderId) return;
    const text = JSON.stringify(fresh);
    if (text === seen) return;
    seen = text;
    data = fresh;
    keepFocus(() => {
      drawTabs();
      // Once further pages are loaded, only the counts refresh (replacing the rows would drop them).
      if (pagesLoaded === 1) {
        rows = fresh.tasks;
        nextCursor = fresh.nextCursor;
        drawRows();
        drawMore();
      }
    });
  });
}

function taskRow(slug: string, t: TaskSummaryView): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-ref': t.ref, 'data-status': t.status, 'data-hosted': t.hosted ? 'true' : 'false' },
    h(
      'td',
      { 'data-label': 'Tool' },
      h('a', { href: `#/p/${encodeURIComponent(slug)}/t/${t.ref}` }, t.tool),
      h('span', { class: 'muted small' }, ` ${t.upstream}`),
      t.hosted && [' ', hostedBadge()],
    ),
    h('td', { 'data-label': 'Status' }, statusBadge(t.status)),
    h('td', { 'data-label': 'Message', class: 'message' }, t.statusMessage ?? ''),
    h('td', { 'data-label': 'Caller' }, callerText(t.caller)),
    h('td', { 'data-label': 'Assignee', class: 'assignee' }, personName(t.assignee)),
    h(
      'td',
      { 'data-label': 'Created' },
      h('time', { datetime: t.createdAt, title: formatTime(t.createdAt) }, ago(t.createdAt)),
    ),
  );
}

/**
 * The project's upstreams and what their last probe found: an upstream that speaks no supported MCP or
 * cannot be reached is still listed, with its problem, so nobody wonders where its tools went.
 */
function upstreamSection(upstreams: UpstreamStatusView[]): HTMLElement | null {
  if (upstreams.length === 0) return null;
  return h(
    'section',
    { class: 'upstreams', 'aria-labelledby': 'upstreams-heading' },
    h('h2', { id: 'upstreams-heading' }, 'Upstreams'),
    h(
      'ul',
      {},
      upstreams.map((u) => {
        const credentials = CREDENTIALS[u.credentials];
        return h(
          'li',
          { 'data-upstream': u.alias },
          h('strong', {}, u.alias),
          ' ',
          upstreamBadge(u),
          credentials &&
            h('span', { class: 'muted small', 'data-credentials': u.credentials }, ` · ${credentials}`),
          u.problem && h('span', { class: 'problem' }, ` ${u.problem}`),
          u.probedAt &&
            h(
              'span',
              { class: 'muted small' },
              ' · probed ',
              h('time', { datetime: u.probedAt }, ago(u.probedAt)),
            ),
        );
      }),
    ),
  );
}

// How each upstream's credential comes about (views.ts, credentialsOf).
const CREDENTIALS: Partial<Record<string, string>> = {
  project: 'project credential',
  per_user: "each user's own authorization",
  token_exchange: 'token exchange of your sign-in',
  oauth: 'connect with OAuth',
  oauth_configured: 'connect with OAuth (configured client)',
  oauth_metadata_document: 'connect with OAuth (client metadata document)',
  oauth_dynamic: 'connect with OAuth (dynamic registration)',
};

function upstreamBadge(u: UpstreamStatusView): HTMLSpanElement {
  if (!u.enabled) return h('span', { class: 'badge status-cancelled' }, 'disabled');
  if (u.problem) return h('span', { class: 'badge status-failed' }, 'problem');
  if (!u.probedAt) return h('span', { class: 'badge status-working' }, 'not probed yet');
  return h('span', { class: 'badge status-completed' }, `MCP ${u.protocolVersion ?? u.era}`);
}
