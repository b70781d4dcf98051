/**
 * The authorization matrix of task follow-ups, generated and exhaustive (issue "protocol completeness and
 * hostile input", point 4): every task method of every era the gateway serves
 *
 *   2026-07-28:  tasks/get, tasks/update, tasks/cancel, subscriptions/listen (taskIds)
 *   2025-11-25:  tasks/get, tasks/result, tasks/list, tasks/cancel (a session per caller)
 *
 * × every caller the control plane knows (team member, second team member, direct member, API keys, the
 * same user through another project, another team's user and key, an anonymous caller, outsiders without
 * access, the admin token, no token, a bad token) × every owner of a task (team member, direct member, API key, per-user
 * upstream authorization, anonymous). Then the states that take access away, each on a task of its own:
 * an API key revoked, a user token revoked, a direct member removed, an upstream authorization withdrawn.
 *
 * Expected, cell by cell: the owner reads and controls the task; anyone else who may call their own
 * project gets exactly the answer a task id that never existed gets (so the answer says nothing, not even
 * that the task exists), tasks/list never names another caller's task, a listen acknowledges none of them;
 * callers who may not call the project at all get the project-level refusal (401, 404). Zero reads across
 * tenants is counted: a cell that is not the owner's and returns any task field fails. No refused cell
 * sends anything to the upstream (tasks/update and tasks/cancel counted there).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { McpTestClient } from '../helpers/mcp-client';
import { TASKS_AND_FORM_CAPS } from '../helpers/mcp-client';
import { TASK_ID_PREFIX } from '../../src/gateway/task-ids';
import { META, PROTOCOL_VERSION, requestHeaders, TASKS_EXTENSION } from '../../src/protocol';

const ADMIN = `admin-${randomUUID()}`;
const tok = (name: string) => `trp_${name}-matrix-${'0'.repeat(30)}`.slice(0, 44);
const key = (name: string) => `trk_${name}-matrix-${'0'.repeat(30)}`.slice(0, 44);
const TOKENS = {
  alice: tok('alice'),
  tess: tok('tess'),
  bob: tok('bob'),
  carol: tok('carol'),
  dave: tok('dave'),
  erin: tok('erin'),
  frank: tok('frank'),
};
const KEYS = {
  one: key('one'),
  two: key('two'),
  three: key('three'),
  sibling: key('sibling'),
  elsewhere: key('elsewhere'),
};

/** A caller: a project's endpoint and a credential (none for anonymous and outsider cases). */
interface Subject {
  name: string;
  project: string;
  token?: string;
  /** What every request of this subject gets when it may not call `project` at all. */
  refused?: { status: number; code: number };
}

const S = {
  alice: { name: 'alice (team member)', project: 'secure', token: TOKENS.alice },
  tess: { name: 'tess (team member)', project: 'secure', token: TOKENS.tess },
  bob: { name: 'bob (direct member)', project: 'secure', token: TOKENS.bob },
  key1: { name: 'API key one', project: 'secure', token: KEYS.one },
  key2: { name: 'API key two', project: 'secure', token: KEYS.two },
  aliceSibling: { name: 'alice through another project', project: 'sibling', token: TOKENS.alice },
  keySibling: { name: "another project's API key", project: 'sibling', token: KEYS.sibling },
  carol: { name: "another team's user", project: 'elsewhere', token: TOKENS.carol },
  keyElsewhere: { name: "another team's API key", project: 'elsewhere', token: KEYS.elsewhere },
  anonymous: { name: 'anonymous caller', project: 'open' },
  dave: { name: 'dave (per-user authorization)', project: 'peruser', token: TOKENS.dave },
  alicePerUser: { name: 'alice (her own authorization)', project: 'peruser', token: TOKENS.alice },
  carolOutside: {
    name: "another team's user on this project",
    project: 'secure',
    token: TOKENS.carol,
    refused: { status: 404, code: -31004 },
  },
  keyOutside: {
    name: 'an API key on a project not its own',
    project: 'elsewhere',
    token: KEYS.one,
    refused: { status: 404, code: -31004 },
  },
  // The instance administrator manages projects; the admin token is no caller of any endpoint.
  adminToken: {
    name: 'the admin token',
    project: 'secure',
    token: ADMIN,
    refused: { status: 401, code: -31007 },
  },
  noToken: { name: 'no token', project: 'secure', refused: { status: 401, code: -31007 } },
  badToken: {
    name: 'a token that never existed',
    project: 'secure',
    token: tok('nobody'),
    refused: { status: 401, code: -31007 },
  },
} satisfies Record<string, Subject>;

/** Owners of the tasks the access-removing states take away. */
const LATE = {
  key3: { name: 'API key three (revoked)', project: 'secure', token: KEYS.three },
  frank: { name: 'frank (token revoked)', project: 'secure', token: TOKENS.frank },
  erin: { name: 'erin (direct member, removed)', project: 'secure', token: TOKENS.erin },
  daveWithdrawn: { name: 'dave (authorization withdrawn)', project: 'peruser', token: TOKENS.dave },
} satisfies Record<string, Subject>;

type Method =
  | '2026 tasks/get'
  | '2026 tasks/update'
  | '2026 tasks/cancel'
  | '2026 subscriptions/listen'
  | '2025 tasks/get'
  | '2025 tasks/result'
  | '2025 tasks/list'
  | '2025 tasks/cancel';
/** Cancelling and waiting for the result come last for the owner (they end the task). */
const METHODS: Method[] = [
  '2026 tasks/get',
  '2026 tasks/update',
  '2026 subscriptions/listen',
  '2025 tasks/get',
  '2025 tasks/list',
  '2026 tasks/cancel',
  '2025 tasks/cancel',
  '2025 tasks/result',
];

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    config: { admin: { token: ADMIN } },
    projects: () => [],
    bootstrap: (url) => {
      const upstream = { alias: 'example', url };
      return {
        users: Object.entries(TOKENS).map(([handle, token]) => ({
          handle,
          tokens: [{ name: 't', token }],
        })),
        teams: [
          { slug: 'core', members: ['alice', 'tess', 'dave', 'frank'] },
          { slug: 'other', members: ['carol'] },
        ],
        projects: [
          {
            slug: 'secure',
            team: 'core',
            namespacing: false,
            members: ['bob', 'erin'],
            apiKeys: [
              { name: 'one', key: KEYS.one },
              { name: 'two', key: KEYS.two },
              { name: 'three', key: KEYS.three },
            ],
            upstreams: [upstream],
          },
          {
            slug: 'sibling',
            team: 'core',
            namespacing: false,
            apiKeys: [{ name: 's', key: KEYS.sibling }],
            upstreams: [upstream],
          },
          {
            slug: 'elsewhere',
            team: 'other',
            namespacing: false,
            apiKeys: [{ name: 'e', key: KEYS.elsewhere }],
            upstreams: [upstream],
          },
          { slug: 'open', team: 'other', authMode: 'anonymous', namespacing: false, upstreams: [upstream] },
          {
            slug: 'peruser',
            team: 'core',
            namespacing: false,
            upstreams: [{ ...upstream, auth: { mode: 'per_user' } }],
          },
        ],
      };
    },
  });
  for (const who of [TOKENS.dave, TOKENS.alice]) {
    const grant = await admin(
      'PUT',
      '/projects/peruser/upstreams/example/authorization',
      { credential: `secret-${randomUUID()}` },
      who,
    );
    expect(grant.status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

async function admin(method: string, route: string, body?: unknown, token = ADMIN) {
  const base = new URL(gw.client.url).origin;
  const res = await fetch(`${base}/v1/admin${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as Record<string, unknown> };
}

function client(s: Subject): McpTestClient {
  const c = gw.clientFor(s.project);
  return s.token === undefined ? c : c.withToken(s.token);
}

/** What one request got: HTTP status, and the JSON-RPC result or error (ids left out). */
interface Outcome {
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
async function sessionOf(s: Subject) {
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

async function perform(s: Subject, method: Method, taskId: string): Promise<Outcome> {
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

async function startTask(owner: Subject): Promise<string> {
  const created = await client(owner).callTool('slow_compute', { seconds: 120, label: 'matrix' });
  expect(created.body.result?.resultType).toBe('task');
  const taskId = String(created.body.result?.taskId);
  owners.set(taskId, owner);
  return taskId;
}

/** A task started by the owner's 2025-11-25 session (`params.task`): one the era's tasks/list names. */
async function startLegacyTask(owner: Subject): Promise<string> {
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
async function judgeForeign(s: Subject, method: Method, taskId: string, got: Outcome) {
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
function judgeOwn(owner: Subject, method: Method, taskId: string, listed: string, got: Outcome) {
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
      // The era's list names the tasks the caller's 2025 sessions started (src/gateway/task-list.ts).
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

const OWNERS: Subject[] = [S.alice, S.bob, S.key1, S.dave, S.anonymous];
const SUBJECTS: Subject[] = Object.values(S);

test(`${OWNERS.length} owners × 2 tasks (one per era) × ${SUBJECTS.length} callers × ${METHODS.length} task methods of both eras: only the owner reads or controls a task`, async () => {
  const tasks = new Map<Subject, { modern: string; legacy: string }>();
  for (const owner of OWNERS)
    tasks.set(owner, { modern: await startTask(owner), legacy: await startLegacyTask(owner) });
  const failures: string[] = [];
  let cells = 0;
  let foreignCells = 0;
  const controls = () => ({ update: gw.upstream.stats.tasksUpdate, cancel: gw.upstream.stats.tasksCancel });
  const before = controls();
  // Every caller that is not the owner first (nothing they do may change the task)...
  for (const owner of OWNERS) {
    for (const taskId of Object.values(tasks.get(owner) ?? {})) {
      for (const s of SUBJECTS) {
        if (s === owner) continue;
        for (const method of METHODS) {
          cells++;
          foreignCells++;
          const got = await perform(s, method, taskId);
          const wrong = await judgeForeign(s, method, taskId, got);
          if (wrong) failures.push(`${method} by ${s.name} on ${owner.name}'s task: ${wrong}`);
        }
      }
    }
  }
  // ...and none of it reached the upstream.
  expect(controls()).toEqual(before);
  // Then the owners, cancelling last.
  for (const owner of OWNERS) {
    const own = tasks.get(owner) as { modern: string; legacy: string };
    for (const taskId of [own.modern, own.legacy]) {
      for (const method of METHODS) {
        cells++;
        const got = await perform(owner, method, taskId);
        const wrong = judgeOwn(owner, method, taskId, own.legacy, got);
        if (wrong) failures.push(`${method} by the owner ${owner.name}: ${wrong}`);
      }
    }
  }
  console.log(
    `authorization matrix: ${cells} cells (${foreignCells} by callers other than the owner, 0 reads allowed), ${failures.length} failures`,
  );
  expect(failures).toEqual([]);
}, 240_000);

describe('access taken away: every method of both eras refused, nothing reaches the upstream', () => {
  const cases: Array<[string, Subject, () => Promise<void>, { status: number; code: number }]> = [
    [
      'an API key revoked',
      LATE.key3,
      async () => {
        const keys = (await admin('GET', '/projects/secure/keys')).body as {
          keys: Array<{ id: string; name: string }>;
        };
        const three = keys.keys.find((k) => k.name === 'three');
        expect((await admin('DELETE', `/projects/secure/keys/${three?.id}`)).status).toBe(200);
      },
      { status: 401, code: -31007 },
    ],
    [
      'a user token revoked',
      LATE.frank,
      async () => {
        const tokens = (await admin('GET', '/users/frank/tokens')).body as { tokens: Array<{ id: string }> };
        expect((await admin('DELETE', `/users/frank/tokens/${tokens.tokens[0]?.id}`)).status).toBe(200);
      },
      { status: 401, code: -31007 },
    ],
    [
      'a direct member removed',
      LATE.erin,
      async () => {
        expect((await admin('DELETE', '/projects/secure/members/erin')).status).toBe(204);
      },
      { status: 404, code: -31004 },
    ],
    [
      'the upstream authorization withdrawn',
      LATE.daveWithdrawn,
      async () => {
        const withdrawn = await admin(
          'DELETE',
          '/projects/peruser/upstreams/example/authorization',
          undefined,
          TOKENS.dave,
        );
        expect(withdrawn.status).toBe(200);
      },
      { status: 200, code: -31009 },
    ],
  ];

  test.each(cases)('%s', async (_what, owner, takeAway, refusal) => {
    const taskId = await startTask(owner);
    // The 2025 session is opened while access still holds: taking access away must end it too.
    expect('id' in (await sessionOf(owner))).toBe(true);
    expect((await perform(owner, '2026 tasks/get', taskId)).result?.taskId).toBe(taskId);
    await takeAway();
    const before = { update: gw.upstream.stats.tasksUpdate, cancel: gw.upstream.stats.tasksCancel };
    const failures: string[] = [];
    for (const method of METHODS) {
      const got = await perform(owner, method, taskId);
      if (refusal.status === 200 && method === '2025 tasks/list') {
        // Listing reads the gateway's own records of the caller's tasks, not the upstream: still theirs.
        if (got.status !== 200) failures.push(`${method}: ${JSON.stringify(got)}`);
        continue;
      }
      if (refusal.status === 200 && method === '2026 subscriptions/listen') {
        // A task the caller can no longer follow is left out of the acknowledgement.
        const ack = got.result?.acknowledged as { taskIds?: unknown } | undefined;
        if (JSON.stringify(ack?.taskIds) !== '[]') failures.push(`${method}: ${JSON.stringify(got)}`);
        continue;
      }
      if (got.status !== refusal.status || got.error?.code !== refusal.code || got.result)
        failures.push(`${method}: expected ${refusal.status}/${refusal.code}, got ${JSON.stringify(got)}`);
    }
    expect(failures).toEqual([]);
    expect({ update: gw.upstream.stats.tasksUpdate, cancel: gw.upstream.stats.tasksCancel }).toEqual(before);
  });
});
