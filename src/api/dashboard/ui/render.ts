// Which view the URL fragment names, and drawing it: the session is checked first (no session, no view
// but sign-in), then the view renders into <main>, and focus goes where the navigation asked.
//   #/signin · #/ (projects) · #/p/<slug>?group=…&assigned=…&hosted=true (tasks) · #/p/<slug>/t/<ref> (one task)
//   #/approvals?status=…&project=… (calls waiting for approval) · #/approvals/<id> (one request)
import type { SessionView } from '../view-types';
import { api, ApiError, messageOf } from './api.js';
import { h, mainElement, replace } from './dom.js';
import { refreshApprovalBadge, renderWho } from './frame.js';
import type { Route } from './nav.js';
import { go } from './nav.js';
import { stopRefresh } from './refresh.js';
import { state } from './state.js';
import { renderApproval } from './pages/approval-detail.js';
import { renderApprovals } from './pages/approvals.js';
import { renderProjects } from './pages/projects.js';
import { renderSignIn } from './pages/signin.js';
import { renderTask } from './pages/task-detail.js';
import { renderTasks } from './pages/tasks.js';

function parseRoute(): Route {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path = '', search = ''] = raw.split('?');
  let parts: string[];
  try {
    parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return { name: 'projects' }; // a mangled address lands on the project list
  }
  const query = new URLSearchParams(search);
  const [first, second, third, fourth] = parts;
  if (first === 'signin') return { name: 'signin' };
  if (first === 'approvals' && second) return { name: 'approval', id: second };
  if (first === 'approvals') {
    return {
      name: 'approvals',
      status: query.get('status') ?? 'pending',
      project: query.get('project') ?? '',
    };
  }
  if (first === 'p' && second && third === 't' && fourth) {
    return { name: 'task', slug: second, ref: fourth };
  }
  if (first === 'p' && second) {
    return {
      name: 'tasks',
      slug: second,
      group: query.get('group') ?? 'all',
      assigned: query.get('assigned') ?? 'all',
      hosted: query.get('hosted') === 'true',
    };
  }
  return { name: 'projects' };
}

export async function render(): Promise<void> {
  stopRefresh();
  const renderId = ++state.renderId;
  const route = parseRoute();
  const main = mainElement();
  if (route.name !== 'signin' && !state.user) {
    try {
      const session = await api<SessionView>('GET', '/v1/session');
      state.user = session.user;
      state.csrf = session.csrfToken ?? null;
    } catch {
      if (renderId === state.renderId) go('#/signin');
      return;
    }
  }
  renderWho();
  if (route.name !== 'signin' && route.name !== 'approvals') void refreshApprovalBadge();
  try {
    if (route.name === 'signin') renderSignIn(main);
    else if (route.name === 'projects') await renderProjects(main, renderId);
    else if (route.name === 'tasks') await renderTasks(main, route, renderId);
    else if (route.name === 'task') await renderTask(main, route, renderId);
    else if (route.name === 'approvals') await renderApprovals(main, route, renderId);
    else await renderApproval(main, route, renderId);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return;
    replace(main, h('div', { class: 'notice error', role: 'alert' }, messageOf(err)));
  }
  // Navigation started from a control (a tab, a filter button) keeps the keyboard there.
  const focus = state.focusAfterRender;
  state.focusAfterRender = null;
  if (focus && renderId === state.renderId) document.querySelector<HTMLElement>(focus)?.focus();
}
