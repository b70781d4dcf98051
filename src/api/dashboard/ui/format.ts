// How values are shown: times, statuses, people and callers, and raw JSON.
import type { CallerView, PersonView, TaskStatusView } from '../view-types';
import { h } from './dom.js';

export function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function ago(iso: string): string {
  const seconds = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (seconds < 60) return `${Math.max(seconds, 0)} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

/** How a task status reads: the seed names `input_required` "Waiting for input" wherever it is shown. */
export function statusLabel(status: TaskStatusView): string {
  return status === 'input_required' ? 'Waiting for input' : status.replace('_', ' ');
}

export function statusBadge(status: TaskStatusView): HTMLSpanElement {
  return h('span', { class: `badge status-${status}` }, statusLabel(status));
}

/** What the hosted mark means (docs/hosted-tasks.md), on the mark itself and on the task's page. */
export const HOSTED_EXPLANATION = 'Hosted by the gateway: an ordinary tool call run as a durable task';

/** The mark of a task the gateway hosts. */
export function hostedBadge(): HTMLSpanElement {
  return h(
    'span',
    { class: 'badge hosted', 'data-testid': 'hosted-badge', title: HOSTED_EXPLANATION },
    'hosted',
  );
}

export function personName(p: PersonView | null): string {
  return p ? p.handle : '—';
}

export function callerText(caller: CallerView): string {
  if (caller.kind === 'user') return caller.user ? caller.user.handle : 'user';
  if (caller.kind === 'api_key') return 'API key';
  return caller.kind;
}

export function json(value: unknown): HTMLPreElement {
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}
