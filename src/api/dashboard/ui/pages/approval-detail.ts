// One call waiting for approval: what was asked (project, upstream, tool, who, when, until when, under
// which policy version, the arguments' digest), the arguments themselves (to its approvers only, as
// text), the decisions so far, and Approve / Deny with a comment while the viewer may decide. The
// server decides who may; a refusal (already decided, expired, not an approver, one's own call) is
// shown as the server worded it.
import type { ApprovalAnswerView, ApprovalDetailView, ProjectsView } from '../../view-types';
import { api, ApiError, messageOf } from '../api.js';
import type { Child } from '../dom.js';
import { announce, h, keepFocus, replace } from '../dom.js';
import { formatTime, json } from '../format.js';
import { refreshApprovalBadge, setCrumbs } from '../frame.js';
import type { ApprovalRoute } from '../nav.js';
import { approvalsHash } from '../nav.js';
import { keepRefreshing } from '../refresh.js';
import { state } from '../state.js';
import { approvalBadge, askedBy, decisionsList } from './approvals.js';

const DETAIL_REFRESH_MS = 1000;

export async function renderApproval(
  main: HTMLElement,
  route: ApprovalRoute,
  renderId: number,
): Promise<void> {
  const base = `/v1/approvals/${encodeURIComponent(route.id)}`;
  const [detail, { projects }] = await Promise.all([
    api<ApprovalDetailView>('GET', base),
    api<ProjectsView>('GET', '/v1/projects'),
  ]);
  let a = detail.approval;
  if (renderId !== state.renderId) return;
  const memberOf = new Set(projects.map((p) => p.slug));
  setCrumbs(
    { label: 'Projects', href: '#/' },
    { label: 'Approvals', href: approvalsHash() },
    { label: `${a.tool} on ${a.upstream}` },
  );
  document.title = `Approval: ${a.tool} · TaskRouter`;

  const header = h('div', { class: 'heading-row' });
  const meta = h('section', { class: 'card', 'aria-labelledby': 'approval-meta-h' });
  const args = h('section', { class: 'card', 'aria-labelledby': 'approval-args-h' });
  const decide = h('section', { class: 'card decide', 'aria-labelledby': 'approval-decide-h' });

  const drawHeader = (): void =>
    replace(header, h('h1', {}, `${a.tool} on ${a.upstream}`), approvalBadge(a.status));
  const drawMeta = (): void => {
    const rows: Array<[string, Child]> = [
      ['Project', a.project],
      ['Upstream', a.upstream],
      ['Tool', a.tool],
      ['Asked by', `${askedBy(a.caller)} (${a.caller.kind})`],
      ['Asked', formatTime(a.createdAt)],
      ['Expires', formatTime(a.expiresAt)],
      ['Policy version', `v${a.policyVersion}`],
      ['Approvals needed', String(a.required)],
      ['Arguments digest', h('code', { class: 'digest' }, a.argumentsSha256)],
    ];
    if (a.decidedAt) rows.push(['Decided', formatTime(a.decidedAt)]);
    replace(
      meta,
      h('h2', { id: 'approval-meta-h' }, 'Request'),
      h(
        'dl',
        { class: 'meta' },
        rows.map(([k, v]) => [h('dt', {}, k), h('dd', { 'data-field': k }, v)]),
        h('dt', {}, 'Decisions'),
        h('dd', { 'data-field': 'Decisions' }, decisionsList(a.decisions)),
      ),
      // The task's page needs a role on the project; an approver from elsewhere is not offered it.
      memberOf.has(a.project) &&
        h(
          'p',
          { class: 'workflow' },
          h(
            'a',
            {
              href: `#/p/${encodeURIComponent(a.project)}/t/${encodeURIComponent(a.taskKey)}`,
              'data-testid': 'approval-task-link',
            },
            "The call's task",
          ),
        ),
    );
  };
  const drawArgs = (): void =>
    replace(
      args,
      h('h2', { id: 'approval-args-h' }, 'Arguments'),
      'arguments' in a
        ? h('div', { 'data-testid': 'approval-arguments' }, json(a.arguments))
        : h('p', { class: 'muted' }, 'The arguments are shown only to those who may approve this call.'),
    );

  // The form is drawn once and kept while the viewer may decide (a refresh must not wipe a comment); a
  // refusal stays shown when the form goes (decided or expired meanwhile).
  const error = h('p', { class: 'field-error', id: 'approval-error', role: 'alert' });
  let formShown = false;
  const drawDecide = (): void => {
    if (a.mayDecide) {
      if (formShown) return;
      formShown = true;
      const form = decisionForm(base, error, refresh);
      return replace(decide, h('h2', { id: 'approval-decide-h' }, 'Decide'), form);
    }
    formShown = false;
    replace(
      decide,
      h('h2', { id: 'approval-decide-h' }, 'Decide'),
      h('p', { class: 'muted', 'data-testid': 'approval-closed' }, closedText(a.status)),
      error,
    );
  };

  let seen = JSON.stringify(a);
  async function refresh(): Promise<void> {
    const fresh = (await api<ApprovalDetailView>('GET', base)).approval;
    if (renderId !== state.renderId) return;
    const text = JSON.stringify(fresh);
    if (text === seen) return;
    seen = text;
    a = fresh;
    keepFocus(() => {
      drawHeader();
      drawMeta();
      drawArgs();
      drawDecide();
    });
    void refreshApprovalBadge();
  }

  drawHeader();
  drawMeta();
  drawArgs();
  drawDecide();
  replace(main, header, h('div', { class: 'grid' }, h('div', {}, args, meta), h('div', {}, decide)));
  keepRefreshing(renderId, DETAIL_REFRESH_MS, refresh);
}

function closedText(status: string): string {
  if (status === 'pending')
    return 'You may not decide on this request (the approval policy does not name you).';
  if (status === 'expired')
    return 'This request expired: the call was not made, and nothing more can be decided.';
  if (status === 'withdrawn') return 'The caller withdrew this request: nothing more can be decided.';
  return `This request is ${status}: nothing more can be decided.`;
}

/** Why a decision was refused, in words: the server's message with what kind of refusal it is. */
function refusalText(err: unknown): string {
  if (!(err instanceof ApiError)) return messageOf(err);
  if (err.status === 409) return `Already decided or expired: ${err.message}`;
  if (err.status === 403) return `Not allowed: ${err.message}`;
  return err.message;
}

function decisionForm(base: string, error: HTMLElement, refresh: () => Promise<void>): HTMLFormElement {
  const comment = h('textarea', {
    id: 'approval-comment',
    rows: '3',
    maxlength: '1000',
    'aria-describedby': 'approval-comment-hint',
  });
  const send = async (decision: 'approve' | 'deny', event: MouseEvent): Promise<void> => {
    replace(error);
    if (decision === 'deny' && !comment.value.trim()) {
      replace(error, 'A denial needs a comment: the caller is told why.');
      comment.focus();
      return;
    }
    const buttons = (event.target as HTMLElement).closest('form')?.querySelectorAll('button') ?? [];
    for (const b of buttons) b.disabled = true;
    try {
      const text = comment.value.trim();
      const res = await api<ApprovalAnswerView>('POST', `${base}/${decision}`, text ? { comment: text } : {});
      announce(decision === 'approve' ? `Approved (${res.approvals}/${res.required})` : 'Denied');
      await refresh();
    } catch (err) {
      replace(error, refusalText(err));
      await refresh().catch(() => undefined);
    } finally {
      for (const b of buttons) if (b.isConnected) b.disabled = false;
    }
  };
  return h(
    'form',
    { 'data-testid': 'approval-form', onsubmit: (event) => event.preventDefault() },
    h('label', { for: 'approval-comment' }, 'Comment'),
    comment,
    h(
      'span',
      { class: 'hint', id: 'approval-comment-hint' },
      'Optional when approving; a denial needs one (the caller is told who denied and why).',
    ),
    error,
    h(
      'div',
      { class: 'buttons' },
      h(
        'button',
        { type: 'button', class: 'primary', id: 'approve', onclick: (e) => send('approve', e) },
        'Approve',
      ),
      h('button', { type: 'button', class: 'danger', id: 'deny', onclick: (e) => send('deny', e) }, 'Deny'),
    ),
  );
}
