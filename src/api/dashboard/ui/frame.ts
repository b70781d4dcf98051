// The page around every view: who is signed in (with Sign out), the Approvals link with the count of
// requests the viewer may decide, and the breadcrumbs in the top bar.
import type { ApprovalRequestView, ApprovalsView } from '../view-types';
import { api } from './api.js';
import { h, replace } from './dom.js';
import { approvalsHash, go } from './nav.js';
import { state } from './state.js';

export function renderWho(): void {
  const who = document.getElementById('who');
  if (!who) return;
  if (!state.user) return replace(who);
  const badge = h('span', { class: 'count', id: 'approvals-badge', 'data-testid': 'approvals-badge' });
  badge.hidden = true;
  replace(
    who,
    h('a', { href: approvalsHash(), id: 'approvals-link', class: 'nav-link' }, 'Approvals', ' ', badge),
    h('span', { class: 'muted' }, 'Signed in as '),
    h('strong', { 'data-testid': 'whoami' }, state.user.handle),
    h(
      'button',
      {
        type: 'button',
        class: 'link-button',
        onclick: async () => {
          await api('DELETE', '/v1/session').catch(() => undefined);
          state.user = null;
          state.csrf = null;
          go('#/signin');
        },
      },
      'Sign out',
    ),
  );
}

/** One breadcrumb: the last names the page shown, the others link back. */
export interface Crumb {
  label: string;
  href?: string;
}

export function setCrumbs(...items: Crumb[]): void {
  const crumbs = document.getElementById('crumbs');
  if (!crumbs) return;
  replace(
    crumbs,
    h(
      'ol',
      {},
      items.map((item, i) =>
        h(
          'li',
          {},
          i === items.length - 1
            ? h('span', { 'aria-current': 'page' }, item.label)
            : h('a', { href: item.href }, item.label),
        ),
      ),
    ),
  );
}

/**
 * The badge on the Approvals link: how many waiting requests the viewer may decide now. Best effort: a
 * gateway without approvals (or a failed read) shows no badge.
 */
export async function refreshApprovalBadge(approvals?: ApprovalRequestView[]): Promise<void> {
  let list = approvals;
  if (!list) {
    try {
      list = (await api<ApprovalsView>('GET', '/v1/approvals?status=pending&limit=200')).approvals;
    } catch {
      list = [];
    }
  }
  const badge = document.getElementById('approvals-badge');
  if (!badge) return;
  const n = list.filter((a) => a.status === 'pending' && a.mayDecide).length;
  badge.textContent = String(n);
  badge.hidden = n === 0;
  badge.title = `${n} request${n === 1 ? '' : 's'} waiting for your decision`;
}
