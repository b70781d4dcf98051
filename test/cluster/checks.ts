/**
 * After the storm: every creation compared with the upstream's own records (its call log and its
 * `tasks/get`), the gateway's `tasks/get` and the dashboard. Creations whose answer the client never got
 * (a replica died under the request) are found on the dashboard by the id in their arguments, driven to
 * their end there and checked like the others.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { McpTestClient } from '../helpers/mcp-client';
import type { Creation } from './workload';
import { isTerminal } from './workload';

interface UpstreamCall {
  tool: string;
  arguments: Record<string, unknown>;
  taskId?: string;
}

export interface Dashboard {
  baseUrl: string;
  project: string;
  token: string;
}

export interface Figures {
  creations: number;
  tasks: number;
  adopted: number;
  toldFailed: number;
  mayHaveSent: number;
  unknown: number;
  untracked: number;
  lost: number;
  duplicates: number;
  orphans: number;
  inconsistent: number;
  findings: string[];
}

type Summary = { ref: string; status: string };

async function dashboardGet(d: Dashboard, path: string): Promise<Record<string, unknown>> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(`${d.baseUrl}${path}`, {
        headers: { authorization: `Bearer ${d.token}` },
        signal: AbortSignal.timeout(30_000),
      });
      if (res.ok) return (await res.json()) as Record<string, unknown>;
      if (attempt >= 5) throw new Error(`GET ${path}: HTTP ${res.status} ${await res.text()}`);
    } catch (err) {
      if (attempt >= 5) throw err;
    }
    await sleep(1000);
  }
}

async function dashboardPost(d: Dashboard, path: string, body: unknown): Promise<void> {
  for (let attempt = 0; attempt < 6; attempt++) {
    try {
      const res = await fetch(`${d.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      if (res.ok) return;
    } catch {
      // a replica restarting: try again
    }
    await sleep(1000);
  }
}

/** Every task of the project on the dashboard, newest first, and the tab counts. */
export async function listDashboard(
  d: Dashboard,
): Promise<{ tasks: Summary[]; counts: Record<string, number> }> {
  const tasks: Summary[] = [];
  let cursor: string | undefined;
  let counts: Record<string, number> = {};
  do {
    const page = await dashboardGet(
      d,
      `/v1/projects/${d.project}/tasks?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    tasks.push(...(page.tasks as Summary[]));
    counts = page.counts as Record<string, number>;
    cursor = page.nextCursor as string | undefined;
  } while (cursor);
  return { tasks, counts };
}

function detail(d: Dashboard, ref: string) {
  return dashboardGet(d, `/v1/projects/${d.project}/tasks/${ref}`) as Promise<{
    task: { status: string };
    timeline: Array<{ kind: string; status?: string }>;
    payload: { visible: boolean; arguments?: Record<string, unknown> };
  }>;
}

function idOf(args: Record<string, unknown> | undefined): string | undefined {
  const id = args?.['label'] ?? args?.['filename'] ?? args?.['run'] ?? args?.['name'];
  return typeof id === 'string' ? id : undefined;
}

/**
 * Tasks the dashboard shows that no client answer named: matched to their creation by id, answered or
 * cancelled from the dashboard as their creator would, and followed there to their end.
 */
export async function adoptUnanswered(
  d: Dashboard,
  creations: Creation[],
  deadline: number,
): Promise<{ adopted: Creation[]; unexplained: string[] }> {
  const byRef = new Set(creations.map((c) => c.ref).filter(Boolean));
  const byId = new Map(creations.map((c) => [c.id, c]));
  const adopted: Creation[] = [];
  const unexplained: string[] = [];
  for (const summary of (await listDashboard(d)).tasks) {
    if (byRef.has(summary.ref)) continue;
    const shown = await detail(d, summary.ref);
    const c = byId.get(idOf(shown.payload.arguments) ?? '');
    if (!c) {
      unexplained.push(`dashboard task ${summary.ref} matches no creation`);
      continue;
    }
    c.ref = summary.ref;
    adopted.push(c);
  }
  for (const c of adopted) {
    const base = `/v1/projects/${d.project}/tasks/${c.ref}`;
    while (Date.now() < deadline) {
      const shown = await detail(d, c.ref as string);
      const status = shown.task.status;
      if (isTerminal(status)) break;
      if (status === 'input_required') {
        await dashboardPost(d, `${base}/input`, {
          inputResponses: { confirm: { action: 'accept', content: { confirm: c.confirm } } },
        });
      } else if (c.kind === 'cancel') {
        await dashboardPost(d, `${base}/cancel`, {});
      }
      await sleep(1500);
    }
  }
  return { adopted, unexplained };
}

/** The final status expected of each kind, and what else its result must show. */
function expectationProblem(
  c: Creation,
  status: string,
  result: Record<string, unknown> | undefined,
): string | undefined {
  const text = JSON.stringify(result ?? {});
  switch (c.kind) {
    case 'greet':
      return text.includes(`Hello, ${c.id}!`) ? undefined : `greet answered ${text.slice(0, 200)}`;
    case 'slow':
      return status === 'completed' && text.includes(c.id) ? undefined : `slow_compute ended ${status}`;
    case 'cancel':
      return status === 'cancelled' ? undefined : `cancelled slow_compute ended ${status}`;
    case 'confirm':
      return status === 'completed' && text.includes(`"confirmed":${String(c.confirm)}`)
        ? undefined
        : `confirm_delete ended ${status}: ${text.slice(0, 200)}`;
    case 'failing':
      return status === 'completed' && text.includes('"isError":true')
        ? undefined
        : `failing_job ended ${status}`;
    case 'protocolError':
      return status === 'failed' && text.includes('-32603')
        ? undefined
        : `protocol_error_job ended ${status}`;
  }
}

export interface CheckInputs {
  creations: Creation[];
  adopted: Creation[];
  unexplained: string[];
  upstreamCalls: UpstreamCall[];
  /** The example upstream's own MCP endpoint, for its `tasks/get`. */
  upstream: McpTestClient;
  gateway: McpTestClient;
  dashboard: Dashboard;
}

/** Compares everything; findings name each lost, duplicated, orphaned or inconsistent creation. */
export async function check(inputs: CheckInputs): Promise<Figures> {
  const { creations, adopted, upstreamCalls, upstream, dashboard } = inputs;
  const findings = [...inputs.unexplained];
  const f = { lost: 0, duplicates: 0, orphans: 0, inconsistent: inputs.unexplained.length, untracked: 0 };
  const callsById = new Map<string, UpstreamCall[]>();
  for (const call of upstreamCalls) {
    const id = idOf(call.arguments);
    if (id !== undefined) callsById.set(id, [...(callsById.get(id) ?? []), call]);
  }
  const adoptedSet = new Set(adopted);
  const gatewayTasks = creations.filter((c) => c.outcome === 'task' || adoptedSet.has(c));
  const tally: Record<string, number> = { completed: 0, failed: 0, cancelled: 0 };

  for (const c of creations) {
    const calls = callsById.get(c.id) ?? [];
    const note = (what: keyof typeof f, message: string): void => {
      f[what]++;
      findings.push(`${what}: ${c.id} (${c.tool}, ${c.outcome ?? 'not created'}): ${message}`);
    };
    if (calls.length > 1) note('duplicates', `the upstream received ${calls.length} calls`);
    if (c.outcome === 'told-failed' && calls.length > 0) {
      note('orphans', `the client was told "${c.error?.message ?? ''}" but the upstream received the call`);
    }
    if (c.outcome === 'result' && c.kind !== 'greet')
      note('inconsistent', 'a task tool answered synchronously');
    if (c.outcome === 'result') {
      const problem = expectationProblem(c, 'completed', c.result);
      if (problem) note('inconsistent', problem);
    }
    const isGatewayTask = c.outcome === 'task' || adoptedSet.has(c);
    if (!isGatewayTask) {
      if (calls.some((call) => call.taskId !== undefined)) f.untracked++;
      continue;
    }
    const upstreamTaskId = calls[0]?.taskId;
    if (upstreamTaskId === undefined) {
      note('lost', 'the gateway has a task but the upstream never created one');
      continue;
    }
    const theirs = (await upstream.getTask(upstreamTaskId)).body.result;
    const shown = await detail(dashboard, c.ref as string);
    let ours = shown.task.status;
    let result: Record<string, unknown> | undefined;
    if (c.outcome === 'task') {
      const got = (await inputs.gateway.getTask(c.taskId as string)).body;
      ours = String(got.result?.status ?? `error ${String(got.error?.message)}`);
      result = got.result;
      if (ours !== shown.task.status)
        note('inconsistent', `tasks/get says ${ours}, the dashboard ${shown.task.status}`);
    } else {
      result = (await dashboardGet(
        dashboard,
        `/v1/projects/${dashboard.project}/tasks/${c.ref}/payload`,
      ).catch(() => ({}))) as Record<string, unknown>;
    }
    if (!isTerminal(ours)) note('lost', `still ${ours} at the gateway (upstream: ${String(theirs?.status)})`);
    else if (ours !== theirs?.status)
      note('lost', `ended ${ours} at the gateway but ${String(theirs?.status)} upstream`);
    else {
      tally[ours] = (tally[ours] ?? 0) + 1;
      const problem = expectationProblem(c, ours, result);
      if (problem) note('inconsistent', problem);
    }
    const lastStatus = shown.timeline.filter((e) => e.kind === 'status').at(-1)?.status;
    if (lastStatus !== shown.task.status) {
      note(
        'inconsistent',
        `the dashboard timeline ends ${String(lastStatus)}, the task is ${shown.task.status}`,
      );
    }
  }

  const { tasks, counts } = await listDashboard(dashboard);
  const expected = { all: gatewayTasks.length, pending: 0, ...tally };
  for (const [group, n] of Object.entries(expected)) {
    if (counts[group] !== n) {
      f.inconsistent++;
      findings.push(
        `inconsistent: the dashboard counts ${String(counts[group])} ${group} tasks, expected ${n}`,
      );
    }
  }
  if (tasks.length !== gatewayTasks.length) {
    f.inconsistent++;
    findings.push(
      `inconsistent: the dashboard lists ${tasks.length} tasks, the clients know ${gatewayTasks.length}`,
    );
  }
  const outcomes = (o: string) => creations.filter((c) => c.outcome === o).length;
  return {
    creations: creations.length,
    tasks: gatewayTasks.length,
    adopted: adopted.length,
    toldFailed: outcomes('told-failed'),
    mayHaveSent: outcomes('may-have-sent'),
    unknown: outcomes('unknown'),
    ...f,
    findings,
  };
}
