/**
 * The dashboard's JSON shapes: task metadata (never payloads) for lists and details, timelines, and the
 * list cursor. Everything here is safe to show to anyone with a role on the project. The shapes are
 * view-types.ts's, which the browser UI reads too.
 */
import { PROBE_FAILED } from '../../protocol';
import type { UpstreamRecord } from '../../store/control-plane/types';
import type { DashboardUser } from '../../store/sessions/dashboard-store';
import type { TaskEvent, TaskRecord, TaskSummary } from '../../store/tasks/task-store';
import { HttpError } from '../rest-errors';
import type { TaskPosition } from '../../store/tasks/task-listing';
import { decodeTaskCursor, encodeTaskCursor } from '../../store/tasks/task-listing';
import type {
  CallerView,
  PersonView,
  TaskMetadataView,
  TaskSummaryView,
  TimelineEntryView,
  UpstreamStatusView,
} from './view-types';

export type People = Map<string, DashboardUser>;

function person(people: People, userId: string | undefined): PersonView | null {
  if (userId === undefined) return null;
  const user = people.get(userId);
  // A user removed since keeps their place in history under their id.
  return user ? { handle: user.handle, name: user.name } : { handle: userId, name: userId };
}

/** Who started the task: a user (by handle) or just the kind of caller for API keys and anonymous calls. */
function callerView(caller: TaskSummary['caller'], people: People): CallerView {
  if (caller.kind === 'user') return { kind: 'user' as const, user: person(people, caller.id) };
  return { kind: caller.kind };
}

/** The ids of users a list or a timeline mentions, to look their names up in one query. */
export function mentionedUsers(
  items: Array<{ caller?: TaskSummary['caller']; assigneeUserId?: string; actor?: string }>,
) {
  const ids: string[] = [];
  for (const item of items) {
    if (item.caller?.kind === 'user') ids.push(item.caller.id);
    if (item.assigneeUserId !== undefined) ids.push(item.assigneeUserId);
    if (item.actor?.startsWith('user:')) ids.push(item.actor.slice('user:'.length));
  }
  return ids;
}

export function taskSummaryView(task: TaskSummary, people: People): TaskSummaryView {
  return {
    ref: task.taskKey,
    tool: task.tool,
    upstream: task.upstream,
    caller: callerView(task.caller, people),
    status: task.status,
    ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    assignee: person(people, task.assigneeUserId),
    /** Run by the gateway as its own durable task: an ordinary tool call of the upstream (docs/hosted-tasks.md). */
    hosted: task.hosted === true,
  };
}

export function taskMetadataView(task: TaskRecord, people: People): TaskMetadataView {
  const s = task.snapshot;
  return {
    ...taskSummaryView(
      {
        taskKey: task.taskKey,
        workflowId: task.workflowId,
        caller: task.caller,
        upstream: task.upstream,
        tool: task.tool,
        status: s.status,
        ...(s.statusMessage !== undefined && { statusMessage: s.statusMessage }),
        createdAt: s.createdAt,
        lastUpdatedAt: s.lastUpdatedAt,
        ...(task.assigneeUserId !== undefined && { assigneeUserId: task.assigneeUserId }),
        ...(task.hosted === true && { hosted: true as const }),
      },
      people,
    ),
    ttlMs: s.ttlMs,
    payloadExpired: task.payloadExpired === true,
  };
}

export function timelineView(events: TaskEvent[], people: People): TimelineEntryView[] {
  return events.map((e) =>
    e.kind === 'assignment'
      ? {
          at: e.at,
          kind: 'assignment' as const,
          by: e.actor?.startsWith('user:') ? person(people, e.actor.slice('user:'.length)) : null,
          assignee: person(people, e.assigneeUserId),
        }
      : {
          at: e.at,
          kind: 'status' as const,
          status: e.status,
          ...(e.statusMessage !== undefined && { statusMessage: e.statusMessage }),
        },
  );
}

// ── list cursor ────────────────────────────────────────────────────────────────────────────────────

export const encodeListCursor = encodeTaskCursor;

export function decodeListCursor(cursor: string): TaskPosition {
  const position = decodeTaskCursor(cursor);
  if (!position) throw new HttpError('invalid', 'Invalid "cursor"');
  return position;
}

/**
 * An upstream as the project's members see it: its alias, whether it is served, and what the last
 * probe found (docs/interop.md, "Operators see why"), a failure as one message whatever failed (the
 * detail is the operator's: the gateway's log). The URL and the credential stay with the admin API.
 */
export function upstreamStatusView(upstream: UpstreamRecord): UpstreamStatusView {
  const probe = upstream.probe;
  return {
    alias: upstream.alias,
    enabled: upstream.enabled,
    era: probe?.era ?? null,
    protocolVersion: probe?.protocolVersion ?? null,
    probedAt: probe?.probedAt ?? null,
    problem: probe?.error ? PROBE_FAILED : null,
    credentials: credentialsOf(upstream),
  };
}

/**
 * How a call's upstream credential comes about, for people (docs/oauth.md): `token_exchange`, or for an
 * upstream users connect with OAuth the gateway's client at its server (`oauth_configured`,
 * `oauth_metadata_document`, `oauth_dynamic`; `oauth` before the first connect), `per_user`, `project`
 * or `none`.
 */
export function credentialsOf(upstream: UpstreamRecord): string {
  const a = upstream.auth;
  if (a.mode !== 'per_user') return a.mode;
  if (a.tokenExchange) return 'token_exchange';
  if (a.oauth) return a.oauth.registration ? `oauth_${a.oauth.registration}` : 'oauth';
  return 'per_user';
}
