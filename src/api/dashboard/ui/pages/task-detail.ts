// One task's page: it loads the task, lays out its sections and keeps them live, redrawing a section
// only when its own data changed. The sections are drawn by task-sections.ts and task-controls.ts, the
// input forms by elicitation.ts.
import type { ProjectView, TaskDetailView, TaskStatusView } from '../../view-types';
import { api } from '../api.js';
import { announce, h, keepFocus, replace } from '../dom.js';
import { elicitationForm } from '../elicitation.js';
import { hostedBadge, statusBadge, statusLabel } from '../format.js';
import { setCrumbs } from '../frame.js';
import type { TaskRoute } from '../nav.js';
import { tasksHash } from '../nav.js';
import { keepRefreshing } from '../refresh.js';
import { state } from '../state.js';
import { drawControls } from './task-controls.js';
import { drawMeta, drawPayload, drawTimeline } from './task-sections.js';

const TERMINAL: ReadonlySet<TaskStatusView> = new Set(['completed', 'failed', 'cancelled']);
const DETAIL_REFRESH_MS = 1000;

export async function renderTask(main: HTMLElement, route: TaskRoute, renderId: number): Promise<void> {
  const { slug, ref } = route;
  const base = `/v1/projects/${encodeURIComponent(slug)}/tasks/${encodeURIComponent(ref)}`;
  let data = await api<TaskDetailView>('GET', base);
  const project = await api<ProjectView>('GET', `/v1/projects/${encodeURIComponent(slug)}`);
  if (renderId !== state.renderId) return;
  setCrumbs(
    { label: 'Projects', href: '#/' },
    { label: slug, href: tasksHash(slug, 'all', 'all') },
    { label: data.task.tool },
  );
  document.title = `${data.task.tool} · ${slug} · TaskRouter`;

  const header = h('div', { class: 'heading-row' });
  const meta = h('section', { class: 'card', 'aria-labelledby': 'meta-h' });
  const controls = h('section', { class: 'card controls', 'aria-labelledby': 'controls-h' });
  const input = h('section', { class: 'card input-section', 'aria-labelledby': 'input-h' });
  const payload = h('section', { class: 'card', 'aria-labelledby': 'payload-h' });
  const timeline = h('section', { class: 'card', 'aria-labelledby': 'timeline-h' });

  const drawHeader = (): void =>
    replace(
      header,
      h('h1', {}, data.task.tool),
      h('span', { 'data-testid': 'task-status' }, statusBadge(data.task.status)),
      data.task.hosted && hostedBadge(),
    );

  // One form per open input request, kept across refreshes while its request is unchanged, so an
  // answered question disappears without wiping what is typed into the others.
  const forms = new Map<string, { request: string; form: HTMLFormElement }>();
  const drawInput = (): void => {
    const p = data.payload;
    const requests = data.controls.answer && p.visible ? p.inputRequests : undefined;
    const open = Object.entries(requests ?? {});
    for (const [k, entry] of forms) {
      if (!open.some(([key, r]) => key === k && JSON.stringify(r) === entry.request)) {
        entry.form.remove();
        forms.delete(k);
      }
    }
    if (open.length === 0) {
      input.hidden = true;
      return replace(input);
    }
    if (!input.querySelector('#input-h')) replace(input, h('h2', { id: 'input-h' }, 'Input requested'));
    input.hidden = false;
    for (const [k, r] of open) {
      if (forms.has(k)) continue; // left in place: moving a node would take the keyboard focus away
      const form = elicitationForm(base, k, r, refresh);
      forms.set(k, { request: JSON.stringify(r), form });
      input.append(form);
    }
  };

  // Each section is redrawn only when its own data changed, so a refresh never resets a control the
  // user is working with (a half-chosen assignee, a focused button).
  const drawn: Record<string, string> = {};
  const section = (name: string, key: unknown, drawSection: () => void): void => {
    const k = JSON.stringify(key);
    if (drawn[name] === k) return;
    drawn[name] = k;
    keepFocus(drawSection);
  };
  const draw = (): void => {
    section('header', [data.task.tool, data.task.status, data.task.hosted], drawHeader);
    section('meta', [data.task, data.workflow], () => drawMeta(meta, data));
    section('controls', [data.controls.assign, data.controls.cancel, data.task.assignee], () =>
      drawControls(controls, data, base, project.people, refresh),
    );
    drawInput();
    section('payload', data.payload, () => drawPayload(payload, data));
    section('timeline', data.timeline, () => drawTimeline(timeline, data));
  };
  let seen = JSON.stringify(data);
  async function refresh(): Promise<void> {
    const fresh = await api<TaskDetailView>('GET', base);
    if (renderId !== state.renderId) return;
    const text = JSON.stringify(fresh);
    if (text === seen) return;
    if (fresh.task.status !== data.task.status) announce(`Task is now ${statusLabel(fresh.task.status)}`);
    seen = text;
    data = fresh;
    draw();
  }
  draw();
  replace(
    main,
    header,
    h('div', { class: 'grid' }, h('div', {}, input, controls, payload), h('div', {}, meta, timeline)),
  );
  // Live refresh: every tick while the task can still change; a finished task changes only by
  // assignment, so every fifth tick is enough then.
  let ticks = 0;
  keepRefreshing(renderId, DETAIL_REFRESH_MS, async () => {
    ticks += 1;
    if (TERMINAL.has(data.task.status) && ticks % 5 !== 0) return;
    await refresh();
  });
}
