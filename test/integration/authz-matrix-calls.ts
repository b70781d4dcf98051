/**
 * Each task method of both eras performed as one caller of the authorization matrix, and the judges of
 * what came back: the owner's answers, and for anyone else exactly what a task id that never existed gets
 * (authz-matrix.test.ts, authz-matrix-revoked.test.ts).
 */
import { randomBytes } from 'node:crypto';
import type { McpTestClient } from '../helpers/mcp-client';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { TASK_ID_PREFIX } from '../../src/gateway/tasks/task-ids';
import { META, PROTOCOL_VERSION, requestHeaders, TASKS_EXTENSION } from '../../src/protocol';
import type { Method, Subject } from './authz-matrix-gateway';
import { gw } from './authz-matrix-gateway';

function client(s: Subject): McpTestClient {
  const c = gw.clientFor(s.project);
  return s.token === undefined ? c : c.withToken(s.token);
}

/** What one request got: HTTP status, and the JSON-RPC result or error (ids left out). */
export interface Outcome {
  status: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** The JSON-RPC response in a reply body: a JSON object, or the last message of an SSE stream. */
function responseOf(type: string, text: string): Omit<Outcome, 'status'> {
  if (text === '') return {};
  let message: Record<string, unknown>;
  if (type.startsWith('text/event-stream')) {
    const data = text
      .split('\n')
      // Priming events (an id and an empty data line, for resumption) carry no message.
      .filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '')
      .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>)
      .filter((m) => 'id' in m);
    message = data[data.length - 1] ?? {};
  } else message = JSON.parse(text) as Record<string, unknown>;
  return {
    ...(message.result !== undefined && { result: message.result as Record<string, unknown> }),
    ...(message.error !== undefined && { error: message.error as Outcome['error'] }),
  };
}

/** A 2025-11-25 session of `s` (declaring the era's task capabilities), or the refusal of initialize. */
async function legacySession(s: Subject): Promise<{ id: string } | Outcome> {
  const res = await fetch(client(s).url, {
    method: 'POST',
    headers: {
      ...client(s).defaultHeaders,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { tasks: { list: {}, cancel: {} } },
        clientInfo: { name: 'matrix', version: '1' },
      },
    }),
  });
  const text = await res.text();
  const id = res.headers.get('mcp-session-id');
  if (res.status === 200 && id) return { id };
  return { status: res.status, ...responseOf(res.headers.get('content-type') ?? '', text) };
}

const sessions = new Map<Subject, { id: string } | Outcome>();
export async function sessionOf(s: Subject) {
  let session = sessions.get(s);
  if (!session) {
    session = await legacySession(s);
    sessions.set(s, session);
  }
  return session;
}

async function legacyRequest(s: Subject, method: string, params: Record<string, unknown>): Promise<Outcome> {
  const session = await sessionOf(s);
  if (!('id' in session)) return session;
  const res = await fetch(client(s).url, {
    method: 'POST',
    headers: {
      ...client(s).defaultHeaders,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': session.id,
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: res.status, ...responseOf(res.headers.get('content-type') ?? '', await res.text()) };
}

/** `subscriptions/listen` for one task: the acknowledgement (or the refusal), then the stream is closed. */
async function listenFor(s: Subject, taskId: string): Promise<Outcome> {
  const params = { notifications: { taskIds: [taskId] } };
  const abort = new AbortController();
  const res = await fetch(client(s).url, {
    method: 'POST',
    headers: {
      ...client(s).defaultHeaders,
      ...requestHeaders('subscriptions/listen', params, PROTOCOL_VERSION),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: {
        ...params,
        _meta: {
          [META.protocolVersion]: PROTOCOL_VERSION,
          [META.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } },
        },
      },
    }),
    signal: abort.signal,
  });
  try {
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream'))
      return { status: res.status, ...responseOf(res.headers.get('content-type') ?? '', await res.text()) };
    // The first event is the acknowledgement: what the gateway agreed to tell this caller.
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
    }
    const data = (text.split('\n\n')[0] ?? '')
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5))
      .join('\n');
    const ack = JSON.parse(data) as { params?: { notifications?: Record<string, unknown> } };
    return { status: res.status, result: { acknowledged: ack.params?.notifications ?? null } };
  } finally {
    abort.abort();
  }
}

export async function perform(s: Subject, method: Method, taskId: string): Promise<Outcome> {
  const c = client(s);
  const reply = (r: Awaited<ReturnType<McpTestClient['request']>>): Outcome => ({
    status: r.status,
    ...(r.body?.result !== undefined && { result: r.body.result }),
    ...(r.body?.error !== undefined && { error: r.body.error }),
  });
  switch (method) {
    case '2026 tasks/get':
      return reply(await c.request('tasks/get', { taskId }));
    case '2026 tasks/update':
      // Declaring form elicitation, as answering requires: the answer is about the task, not the caller.
      return reply(
        await c.request(
          'tasks/update',
          { taskId, inputResponses: { confirm: { action: 'cancel' } } },
          { capabilities: TASKS_AND_FORM_CAPS },
        ),
      );
    case '2026 tasks/cancel':
      return reply(await c.request('tasks/cancel', { taskId }));
    case '2026 subscriptions/listen':
      return listenFor(s, taskId);
    case '2025 tasks/get':
      return legacyRequest(s, 'tasks/get', { taskId });
    case '2025 tasks/result':
      return legacyRequest(s, 'tasks/result', { taskId });
    case '2025 tasks/cancel':
      return legacyRequest(s, 'tasks/cancel', { taskId });
    case '2025 tasks/list':
      return legacyRequest(s, 'tasks/list', {});
  }
}

/** A task id no task ever had: what a caller learns about a task that is not theirs must equal this. */
const neverExisted = () => TASK_ID_PREFIX + randomBytes(24).toString('base64url');

/** Every task this test created, by id, with its owner. */
const owners = new Map<string, Subject>();

export async function startTask(owner: Subject): Promise<string> {
  const created = await client(owner).callTool('slow_compute', { seconds: 120, label: 'matrix' });
  expect(created.body.result?.resultType).toBe('task');
  const taskId = String(created.body.result?.taskId);
  owners.set(taskId, owner);
  return taskId;
}

/** A task started by the owner's 2025-11-25 session (`params.task`): one the era's tasks/list names. */
export async function startLegacyTask(owner: Subject): Promise<string> {
  const created = await legacyRequest(owner, 'tools/call', {
    name: 'slow_compute',
    arguments: { seconds: 120, label: 'matrix' },
    task: { ttl: 600_000 },
  });
  const taskId = String((created.result?.task as { taskId?: unknown } | undefined)?.taskId);
  expect(taskId).toMatch(/^trt_/);
  owners.set(taskId, owner);
  return taskId;
}

/** Task ids an outcome names anywhere (results, listed tasks, acknowledgements). */
function namedTasks(o: Outcome): string[] {
  return [...JSON.stringify(o).matchAll(/trt_[A-Za-z0-9_-]{32}/g)].map((m) => m[0]);
}

/** The same answer, ignoring which unknown id it was about. */
function sameAnswer(a: Outcome, b: Outcome, aId: string, bId: string): boolean {
  return JSON.stringify(a).replaceAll(aId, 'ID') === JSON.stringify(b).replaceAll(bId, 'ID');
}

/** Checks one cell that is not the owner's; returns what is wrong with it, or undefined. */
export async function judgeForeign(s: Subject, method: Method, taskId: string, got: Outcome) {
  const foreign = namedTasks(got).filter((id) => owners.get(id) !== undefined && owners.get(id) !== s);
  if (foreign.length > 0) return `read another caller's task: ${JSON.stringify(got)}`;
  if (s.refused) {
    if (got.status !== s.refused.status || got.error?.code !== s.refused.code)
      return `expected the project-level refusal ${s.refused.status}/${s.refused.code}, got ${JSON.stringify(got)}`;
    return undefined;
  }
  if (method === '2025 tasks/list') {
    if (got.status !== 200 || !Array.isArray(got.result?.tasks)) return `no list: ${JSON.stringify(got)}`;
    return undefined;
  }
  if (method === '2026 subscriptions/listen') {
    const ack = got.result?.acknowledged as { taskIds?: unknown } | undefined;
    if (got.status !== 200 || JSON.stringify(ack?.taskIds) !== '[]')
      return `the listen acknowledged another caller's task: ${JSON.stringify(got)}`;
    return undefined;
  }
  const unknownId = neverExisted();
  const baseline = await perform(s, method, unknownId);
  if (!got.error || !sameAnswer(got, baseline, taskId, unknownId))
    return `not the answer for a task that never existed: ${JSON.stringify(got)} vs ${JSON.stringify(baseline)}`;
  return undefined;
}

/** Checks one cell of the owner: the task is theirs to read and control. */
export function judgeOwn(owner: Subject, method: Method, taskId: string, listed: string, got: Outcome) {
  if (got.status !== 200 || (got.error && method !== '2026 tasks/update' && method !== '2025 tasks/result'))
    return `HTTP ${got.status}: ${JSON.stringify(got)}`;
  switch (method) {
    case '2026 tasks/get':
    case '2025 tasks/get':
    case '2025 tasks/cancel':
      return got.result?.taskId === taskId ? undefined : `not the task: ${JSON.stringify(got)}`;
    case '2026 tasks/cancel':
      return got.result?.resultType === 'complete' ? undefined : `not cancelled: ${JSON.stringify(got)}`;
    case '2025 tasks/list': {
      // The era's list names the tasks the caller's 2025 sessions started (src/gateway/tasks/task-list.ts).
      const named = namedTasks(got);
      if (!named.includes(listed)) return `own task not listed: ${JSON.stringify(got)}`;
      const others = named.filter((id) => owners.get(id) !== owner);
      return others.length === 0 ? undefined : `lists tasks of others: ${others.join(', ')}`;
    }
    case '2026 subscriptions/listen':
      return JSON.stringify((got.result?.acknowledged as { taskIds?: unknown })?.taskIds) ===
        JSON.stringify([taskId])
        ? undefined
        : `own task not acknowledged: ${JSON.stringify(got)}`;
    case '2026 tasks/update':
      // Nothing was asked of the client: whatever the answer, it is never "no such task".
      return got.error?.message.match(/not found/i)
        ? `own task not found: ${JSON.stringify(got)}`
        : undefined;
    case '2025 tasks/result':
      // After the cancel above: the outcome of the cancelled task, at once.
      return got.result || got.error?.message.match(/cancel/i)
        ? undefined
        : `no outcome: ${JSON.stringify(got)}`;
  }
}
