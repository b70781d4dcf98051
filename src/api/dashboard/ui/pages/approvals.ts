// Calls waiting for approval (docs/approvals.md): the status tabs (pending, decided ones, expired), the
// project filter and the list of requests the viewer may see, refreshed live. Each request links to its
// page (approval-detail.js), where its approvers see the arguments and decide.
import type {
  ApprovalDecisionView,
  ApprovalPolicySummaryView,
  ApprovalRequestView,
  ApprovalsView,
  ProjectsView,
} from '../../view-types';
import { api } from '../api.js';
import { h, keepFocus, replace } from '../dom.js';
import { ago, formatTime } from '../format.js';
import { refreshApprovalBadge, setCrumbs } from '../frame.js';
import type { ApprovalsRoute } from '../nav.js';
import { approvalsHash, goAndFocus } from '../nav.js';
import { keepRefreshing } from '../refresh.js';
import { state } from '../state.js';

export const APPROVAL_STATUSES: ReadonlyArray<readonly [string, string]> = [
  ['pending', 'Pending'],
  ['approved', 'Approved'],
  ['denied', 'Denied'],
  ['expired', 'Expired'],
  ['withdrawn', 'Withdrawn'],
  ['all', 'All'],
];
const LIST_REFRESH_MS = 2000;

export function approvalBadge(status: string): HTMLSpanElement {
  return h('span', { class: `badge approval-${status}`, 'data-testid': 'approval-status' }, status);
}

/** Who asked: a user by handle, an API key or anonymous caller by kind and id. */
export function askedBy(caller: ApprovalRequestView['caller']): string {
  if (caller.kind === 'user') return caller.handle ?? `user ${caller.id}`;
  const kind = caller.kind === 'api_key' ? 'API key' : caller.kind;
  return caller.id ? `${kind} ${caller.id}` : kind;
}

/** The decisions so far, one line each: "approve by erin: fine". */
export function decisionsList(decisions: ApprovalDecisionView[]): HTMLElement {
  if (decisions.length === 0) return h('span', { class: 'muted' }, 'none yet');
  return h(
    'ul',
    { class: 'decisions' },
    decisions.map((d) =>
      h(
        'li',
        { 'data-decision': d.decision },
        h('strong', {}, d.decision === 'approve' ? 'Approved' : 'Denied'),
        ` by ${d.byName}`,
        d.comment && `: ${d.comment}`,
        ' ',
        h('time', { datetime: d.at, title: formatTime(d.at), class: 'muted small' }, ago(d.at)),
      ),
    ),
  );
}

/** The first characters of the arguments' digest (keyed HMAC-SHA-256), the whole digest on hover. */
export function digest(sha: string): HTMLElement {
  return h('code', { title: sha, class: 'digest' }, `${sha.slice(0, 12)}…`);
}

export async function renderApprovals(
  main: HTMLElement,
  route: ApprovalsRoute,
  renderId: number,
): Promise<void> {
  const { status, project } = route;
  setCrumbs({ label: 'Projects', href: '#/' }, { label: 'Approvals' });
  document.title = 'Approvals · TaskRouter';
  const listPath = (): string => {
    const q = new URLSearchParams({ limit: '200' });
    if (status !== 'all') q.set('status', status);
    if (project) q.set('project', project);
    return `/v1/approvals?${q}`;
  };
  const [list, { projects }] = await Promise.all([
    api<ApprovalsView>('GET', listPath()),
    api<ProjectsView>('GET', '/v1/projects'),
  ]);
  let approvals = list.approvals;
  if (renderId !== state.renderId) return;

  const tabs = h(
    'div',
    { class: 'tabs', role: 'tablist', 'aria-label': 'Approval status' },
    APPROVAL_STATUSES.map(([value, label]) =>
      h(
        'button',
        {
          type: 'button',
          role: 'tab',
          id: `approvals-tab-${value}`,
          'data-group': value,
          'aria-selected': value === status ? 'true' : 'false',
          'aria-controls': 'approval-panel',
          tabindex: value === status ? '0' : '-1',
          onclick: () => goAndFocus(approvalsHash(value, project), `[data-group="${value}"]`),
          onkeydown: (event) => {
            const i = APPROVAL_STATUSES.findIndex(([s]) => s === value);
            const next = event.key === 'ArrowRight' ? i + 1 : event.key === 'ArrowLeft' ? i - 1 : null;
            if (next === null) return;
            event.preventDefault();
            const n = APPROVAL_STATUSES.length;
            const target = APPROVAL_STATUSES[(next + n) % n]?.[0] ?? 'pending';
            goAndFocus(approvalsHash(target, project), `[data-group="${target}"]`);
          },
        },
        label,
      ),
    ),
  );

  // The viewer's projects and any project a listed request comes from (an approver named by a policy
  // need not be a member of the project).
  const slugs = [...new Set([...projects.map((p) => p.slug), ...approvals.map((a) => a.project), project])]
    .filter(Boolean)
    .sort();
  const projectSelect = h(
    'select',
    {
      id: 'approvals-project',
      onchange: (event) =>
        goAndFocus(approvalsHash(status, (event.target as HTMLSelectElement).value), '#approvals-project'),
    },
    h('option', { value: '' }, 'All projects'),
    slugs.map((s) => h('option', { value: s, selected: s === project }, s)),
  );
  const memberOf = new Set(projects.map((p) => p.slug));
  const panel = h('div', {
    id: 'approval-panel',
    role: 'tabpanel',
    'aria-labelledby': `approvals-tab-${status}`,
  });
  const drawRows = (): void => {
    if (approvals.length === 0) {
      return replace(panel, h('p', { class: 'empty muted' }, 'No approval requests here.'));
    }
    replace(panel, approvalTable(approvals, memberOf));
  };
  drawRows();
  replace(
    main,
    h(
      'div',
      { class: 'heading-row' },
      h('h1', {}, 'Approvals'),
      h('div', { class: 'filter' }, h('label', { for: 'approvals-project' }, 'Project'), projectSelect),
    ),
    tabs,
    panel,
  );
  void refreshApprovalBadge(status === 'pending' && !project ? approvals : undefined);

  let seen = JSON.stringify(approvals);
  keepRefreshing(renderId, LIST_REFRESH_MS, async () => {
    const fresh = (await api<ApprovalsView>('GET', listPath())).approvals;
    if (renderId !== state.renderId) return;
    const text = JSON.stringify(fresh);
    if (text === seen) return;
    seen = text;
    approvals = fresh;
    keepFocus(drawRows);
    void refreshApprovalBadge(status === 'pending' && !project ? approvals : undefined);
  });
}

function approvalTable(approvals: ApprovalRequestView[], memberOf: Set<string>): HTMLTableElement {
  const cols = ['Call', 'Project', 'Asked by', 'Asked', 'Expires', 'Policy', 'Arguments', 'Decisions'];
  return h(
    'table',
    { class: 'tasks approvals' },
    h('caption', { class: 'visually-hidden' }, 'Approval requests'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        cols.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      approvals.map((a) =>
        h(
          'tr',
          { 'data-approval': a.id, 'data-status': a.status },
          h(
            'td',
            { 'data-label': 'Call' },
            h('a', { href: `#/approvals/${encodeURIComponent(a.id)}` }, a.tool),
            h('span', { class: 'muted small' }, ` ${a.upstream}`),
            ' ',
            approvalBadge(a.status),
            a.mayDecide && [' ', h('span', { class: 'badge yours' }, 'your decision')],
          ),
          h(
            'td',
            { 'data-label': 'Project' },
            memberOf.has(a.project)
              ? h('a', { href: `#/p/${encodeURIComponent(a.project)}` }, a.project)
              : a.project,
          ),
          h('td', { 'data-label': 'Asked by' }, askedBy(a.caller)),
          h(
            'td',
            { 'data-label': 'Asked' },
            h('time', { datetime: a.createdAt, title: formatTime(a.createdAt) }, ago(a.createdAt)),
          ),
          h('td', { 'data-label': 'Expires' }, h('time', { datetime: a.expiresAt }, formatTime(a.expiresAt))),
          h('td', { 'data-label': 'Policy' }, `v${a.policyVersion}`),
          h('td', { 'data-label': 'Arguments' }, digest(a.argumentsSha256)),
          h(
            'td',
            { 'data-label': 'Decisions' },
            `${a.decisions.filter((d) => d.decision === 'approve').length}/${a.required}`,
            a.decisions.length > 0 && decisionsList(a.decisions),
          ),
        ),
      ),
    ),
  );
}

/** A project's approval policy on its page, read-only: which calls wait, who may approve, its version. */
export function approvalPolicySection(
  slug: string,
  policy: ApprovalPolicySummaryView | null,
): HTMLElement | null {
  if (!policy) return null;
  const rules = policy.rules.map((r) => {
    const what = [...r.tools, ...r.annotations.map((a) => `tools with ${a}`)].join(', ');
    return `${what || 'no tools'} on ${r.upstream === '*' ? 'every upstream' : r.upstream}`;
  });
  const who = [
    policy.approvers.managers && "the project's team",
    ...policy.approvers.users,
    ...policy.approvers.teams.map((t) => `team ${t}`),
  ].filter(Boolean);
  const rows: Array<[string, string]> = [
    ['Calls that wait', rules.join('; ')],
    ['Who may approve', who.join(', ') || 'nobody'],
    ['Approvals needed', String(policy.required)],
    ['Own calls', policy.selfApproval ? 'may be approved by their caller' : 'never approved by their caller'],
    ['Requests expire after', duration(policy.expiresAfterMs)],
  ];
  return h(
    'section',
    { class: 'upstreams', 'aria-labelledby': 'policy-heading', 'data-testid': 'approval-policy' },
    h('h2', { id: 'policy-heading' }, `Approval policy (version ${policy.version})`),
    h(
      'dl',
      { class: 'meta' },
      rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    ),
    h('p', {}, h('a', { href: approvalsHash('pending', slug) }, 'Requests waiting for approval')),
  );
}

function duration(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}
