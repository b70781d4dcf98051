// Moving between pages: the addresses of pages (they live in the URL fragment) and `go`. Going to the
// address already shown re-renders it; render.ts hands its render function over at start (app.ts), so
// modules that navigate need not import render.ts, which imports them.
import { state } from './state.js';

let rerender: () => Promise<void> = async () => {};

/** Called once at start with render.ts's render. */
export function setRenderer(render: () => Promise<void>): void {
  rerender = render;
}

export function go(hash: string): void {
  if (location.hash === hash) void rerender();
  else location.hash = hash;
}

/** Navigates, then focuses `selector` in the new view. */
export function goAndFocus(hash: string, selector: string): void {
  state.focusAfterRender = selector;
  go(hash);
}

export function tasksHash(slug: string, group: string, assigned: string, hosted = false): string {
  const q = new URLSearchParams();
  if (group !== 'all') q.set('group', group);
  if (assigned !== 'all') q.set('assigned', assigned);
  if (hosted) q.set('hosted', 'true');
  const s = q.toString();
  return `#/p/${encodeURIComponent(slug)}${s ? `?${s}` : ''}`;
}

/** The Approvals view: `status` one of pending, approved, denied, expired, withdrawn or all. */
export function approvalsHash(status = 'pending', project = ''): string {
  const q = new URLSearchParams();
  if (status !== 'pending') q.set('status', status);
  if (project) q.set('project', project);
  const s = q.toString();
  return `#/approvals${s ? `?${s}` : ''}`;
}

/** The pages the URL fragment names, with what each reads from it (render.ts parses it). */
export interface TasksRoute {
  name: 'tasks';
  slug: string;
  group: string;
  assigned: string;
  hosted: boolean;
}
export interface TaskRoute {
  name: 'task';
  slug: string;
  ref: string;
}
export interface ApprovalsRoute {
  name: 'approvals';
  status: string;
  project: string;
}
export interface ApprovalRoute {
  name: 'approval';
  id: string;
}
export type Route =
  { name: 'signin' } | { name: 'projects' } | TasksRoute | TaskRoute | ApprovalsRoute | ApprovalRoute;
