// The read-only sections of one task's page: its details (and workflow link), its inputs and results or
// why they are hidden, and its timeline. Each draws one section element from the task's data.
import type { TaskDetailView } from '../../view-types';
import type { Child } from '../dom.js';
import { h, replace } from '../dom.js';
import {
  callerText,
  formatTime,
  HOSTED_EXPLANATION,
  json,
  personName,
  statusBadge,
  statusLabel,
} from '../format.js';

export function drawMeta(meta: HTMLElement, data: TaskDetailView): void {
  const t = data.task;
  const rows: Array<[string, string]> = [
    ['Tool', t.tool],
    ['Upstream', t.upstream],
    ['Status', statusLabel(t.status)],
    ['Status message', t.statusMessage ?? '—'],
    ['Started by', callerText(t.caller)],
    ['Caller kind', t.caller.kind === 'api_key' ? 'API key' : t.caller.kind],
    ['Assignee', personName(t.assignee)],
    ['Created', formatTime(t.createdAt)],
    ['Last updated', formatTime(t.lastUpdatedAt)],
  ];
  replace(
    meta,
    h('h2', { id: 'meta-h' }, 'Details'),
    h(
      'dl',
      { class: 'meta' },
      rows.map(([k, v]) => [h('dt', {}, k), h('dd', { 'data-field': k }, v)]),
    ),
    t.hosted && h('p', { class: 'hosted-note', 'data-testid': 'hosted-note' }, `${HOSTED_EXPLANATION}.`),
    data.workflow &&
      h(
        'p',
        { class: 'workflow' },
        'Workflow: ',
        data.workflow.url
          ? h(
              'a',
              {
                href: data.workflow.url,
                target: '_blank',
                rel: 'noopener noreferrer',
                'data-testid': 'temporal-link',
              },
              `${data.workflow.id} in the Temporal Web UI`,
            )
          : h('code', {}, data.workflow.id),
      ),
  );
}

export function drawPayload(payload: HTMLElement, data: TaskDetailView): void {
  const p = data.payload;
  if (!p.visible) {
    return replace(
      payload,
      h('h2', { id: 'payload-h' }, 'Inputs and results'),
      h('p', { class: 'notice', 'data-testid': 'payload-hidden', 'data-reason': p.reason }, p.message),
    );
  }
  replace(
    payload,
    h('h2', { id: 'payload-h' }, 'Inputs and results'),
    p.arguments !== undefined && [h('h3', {}, 'Arguments'), json(p.arguments)],
    p.result && [h('h3', {}, 'Result'), resultView(p.result)],
    p.error && [h('h3', {}, 'Error'), h('p', { class: 'error-text' }, `${p.error.code}: ${p.error.message}`)],
    p.arguments === undefined && !p.result && !p.error && h('p', { class: 'muted' }, 'Nothing yet.'),
  );
}

export function drawTimeline(timeline: HTMLElement, data: TaskDetailView): void {
  replace(
    timeline,
    h('h2', { id: 'timeline-h' }, 'Timeline'),
    h(
      'ol',
      { class: 'timeline', 'data-testid': 'timeline' },
      data.timeline.map((e) =>
        h(
          'li',
          { 'data-kind': e.kind },
          h('time', { datetime: e.at }, formatTime(e.at)),
          e.kind === 'assignment'
            ? h(
                'span',
                {},
                e.assignee ? `Assigned to ${e.assignee.handle}` : 'Unassigned',
                e.by ? ` by ${e.by.handle}` : '',
              )
            : h('span', {}, statusBadge(e.status), e.statusMessage ? ` ${e.statusMessage}` : ''),
        ),
      ),
    ),
  );
}

/** A tool result's content item, as far as the page reads it. */
interface ContentItem {
  type?: unknown;
  text?: unknown;
}

function resultView(result: Record<string, unknown>): Child[] {
  const content: unknown[] = Array.isArray(result['content']) ? result['content'] : [];
  return [
    Boolean(result['isError']) && h('p', { class: 'error-text' }, 'The tool reported an error.'),
    content.map((c) => {
      const item = c as ContentItem | null;
      return item?.type === 'text' ? h('p', { class: 'result-text' }, item.text as Child) : json(c);
    }),
    result['structuredContent'] !== undefined && json(result['structuredContent']),
  ];
}
