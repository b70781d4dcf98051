// Moving between views: the addresses of views (routes live in the URL fragment) and `go`. Going to the
// address already shown re-renders it; the router hands its render function over at start (app.js), so
// modules that navigate need not import the router, which imports them.
import { state } from './state.js';

let rerender = async () => {};

/** Called once at start with the router's render. */
export function setRenderer(render) {
  rerender = render;
}

export function go(hash) {
  if (location.hash === hash) void rerender();
  else location.hash = hash;
}

/** Navigates, then focuses `selector` in the new view. */
export function goAndFocus(hash, selector) {
  state.focusAfterRender = selector;
  go(hash);
}

export function tasksHash(slug, group, assigned, hosted = false) {
  const q = new URLSearchParams();
  if (group !== 'all') q.set('group', group);
  if (assigned !== 'all') q.set('assigned', assigned);
  if (hosted) q.set('hosted', 'true');
  const s = q.toString();
  return `#/p/${encodeURIComponent(slug)}${s ? `?${s}` : ''}`;
}

/** The Approvals view: `status` one of pending, approved, denied, expired, withdrawn or all. */
export function approvalsHash(status = 'pending', project = '') {
  const q = new URLSearchParams();
  if (status !== 'pending') q.set('status', status);
  if (project) q.set('project', project);
  const s = q.toString();
  return `#/approvals${s ? `?${s}` : ''}`;
}
