/**
 * Upstream answers are read within bounds of size and time (issue "safe to share", finding 3), against a
 * real gateway process and hostile upstreams of the test's own: a JSON result streamed far past the
 * bound (the gateway stops reading, its RSS stays bounded, another project's call goes through), an SSE
 * event whose line never ends, a 50,000-key `_meta`, an upstream that drips a byte at a time (cut at the
 * deadline) next to one that keeps reporting progress (not cut), a large result cut to the project's
 * limit on a worker thread, the per-project bound through the admin API, and a task whose poll answer
 * is too large (it fails at once, it is not polled again and again).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { getFreePort } from '../../src/tooling/processes';
import type { HostileRequest, HostileUpstream } from '../helpers/hostile-upstream';
import { rssBytes, startHostileUpstream, writeSse } from '../helpers/hostile-upstream';
import type { StreamedMessage } from '../helpers/mcp-client';
import { McpTestClient, progressToolCall } from '../helpers/mcp-client';
import {
  anonymousProject,
  killChildren,
  startServeProcess,
  writeServeConfig,
} from '../helpers/serve-process';
import { testStoreConfig } from '../helpers/store';
import { adminCall } from '../helpers/admin-api';

const MiB = 1024 * 1024;
const ADMIN_TOKEN = 'admin-token-for-answer-bounds';
/**
 * The instance's deadline, short so the drip feed ends soon; progress must outlive it. The 300 MB flood's
 * call runs under it too, through its pause and the victim's call: 4 s was too short on a loaded CI machine.
 */
const DEADLINE_MS = 8000;
/** What the gateway process may grow by while a 300 MB answer is thrown at it (it grew 0.8–1.6 GB). */
const RSS_GROWTH_BOUND = 256 * MiB;
/** Progress notifications of the tool that outlives the deadline (one every 200 ms: 12 s). */
const PROGRESS_STEPS = 60;

let dir: string;
let port: number;
let gateway: ChildProcess;
let hostile: HostileUpstream;
let taskUpstream: HostileUpstream;
let example: ExampleUpstream;
const children: ChildProcess[] = [];

/** What the hostile upstream's handlers saw: bytes written before the gateway hung up, by tool. */
const written: Record<string, number> = {};
/** Released by the test while the 300 MB answer is half way. */
let resumeFlood: () => void = () => {};
let floodPaused: Promise<void> = Promise.resolve();
let hugeFirstCalls = 0;
let markFloodPaused: () => void = () => {};

const resultFrame = (id: HostileRequest['id']) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;

/** Writes `total` bytes of filler, honouring back-pressure; records how much was written at close. */
function flood(
  res: ServerResponse,
  name: string,
  total: number,
  head: string,
  opts: { pauseAt?: number } = {},
) {
  let sent = 0;
  let paused = false;
  const block = 'x'.repeat(256 * 1024);
  res.on('close', () => (written[name] = sent));
  res.write(head);
  const pump = () => {
    while (sent < total && !res.destroyed) {
      if (opts.pauseAt !== undefined && !paused && sent >= opts.pauseAt) {
        paused = true;
        markFloodPaused();
        floodPaused.then(pump, pump);
        return;
      }
      sent += block.length;
      if (!res.write(block)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end('"}]}}');
  };
  pump();
}

function onAttack(res: ServerResponse, m: HostileRequest): void {
  const name = String(m.params.name ?? m.method);
  const json = (result: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`${resultFrame(m.id)}${JSON.stringify(result)}}`);
  };
  switch (name) {
    case 'flood':
      // 300 MB generated on the fly, without content-length: only counting can stop it.
      res.writeHead(200, { 'content-type': 'application/json' });
      flood(
        res,
        name,
        300e6,
        `${resultFrame(m.id)}{"resultType":"complete","content":[{"type":"text","text":"`,
        {
          pauseAt: 8 * MiB,
        },
      );
      return;
    case 'endless-event':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      flood(res, name, 300e6, 'event: message\ndata: ');
      return;
    case 'meta':
      json({
        resultType: 'complete',
        content: [{ type: 'text', text: 'ok' }],
        _meta: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`vendor.example/k${i}`, i])),
      });
      return;
    case 'drip': {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${resultFrame(m.id)}{"resultType":"complete","content":[{"type":"text","text":"`);
      let sent = 0;
      const timer = setInterval(() => {
        sent++;
        res.write('d');
      }, 500);
      res.on('close', () => {
        clearInterval(timer);
        written[name] = sent;
      });
      return;
    }
    case 'progress': {
      // Longer than the deadline, reporting progress all along (every 200 ms, PROGRESS_STEPS times): a working tool.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const token = (m.params._meta as Record<string, unknown> | undefined)?.['progressToken'];
      let step = 0;
      const timer = setInterval(() => {
        step++;
        if (step <= PROGRESS_STEPS) {
          writeSse(res, {
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken: token, progress: step },
          });
          return;
        }
        clearInterval(timer);
        writeSse(res, {
          jsonrpc: '2.0',
          id: m.id,
          result: { resultType: 'complete', content: [{ type: 'text', text: 'done' }] },
        });
        res.end();
      }, 200);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case 'large':
      json({
        resultType: 'complete',
        content: [
          {
            type: 'text',
            text: 'L'.repeat(
              Number(m.params.arguments && (m.params.arguments as { bytes?: number }).bytes) || 4 * MiB,
            ),
          },
        ],
      });
      return;
    default:
      json({ resultType: 'complete', content: [{ type: 'text', text: `unknown ${name}` }] });
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-answers-'));
  example = await startExampleUpstream({ pollIntervalMs: 100 });
  hostile = await startHostileUpstream({ onRequest: (_req, res, m) => onAttack(res, m) });
  taskUpstream = await startHostileUpstream({
    tasks: true,
    onRequest: (_req, res, m) => {
      const now = new Date().toISOString();
      const task = { taskId: 'up-1', createdAt: now, lastUpdatedAt: now, ttlMs: 600_000, pollIntervalMs: 50 };
      res.writeHead(200, { 'content-type': 'application/json' });
      if (m.method === 'tools/call' && m.params.name === 'huge-first') {
        hugeFirstCalls++;
        // A synchronous answer to the task's first call, far over the project's bound.
        const result = { resultType: 'complete', content: [{ type: 'text', text: 'F'.repeat(2 * MiB) }] };
        res.end(`${resultFrame(m.id)}${JSON.stringify(result)}}`);
        return;
      }
      if (m.method === 'tools/call') {
        res.end(`${resultFrame(m.id)}${JSON.stringify({ resultType: 'task', status: 'working', ...task })}}`);
        return;
      }
      // Every poll answers with the finished task and a result far over the project's bound.
      const result = { content: [{ type: 'text', text: 'T'.repeat(2 * MiB) }] };
      res.end(
        `${resultFrame(m.id)}${JSON.stringify({ resultType: 'complete', status: 'completed', ...task, result })}}`,
      );
    },
  });
  port = await getFreePort();
  const configFile = writeServeConfig(dir, {
    port,
    upstreamUrl: hostile.url,
    store: await testStoreConfig(dir),
    projects: [
      anonymousProject('victim', { alias: 'example', url: example.url }),
      anonymousProject(
        'strict',
        { alias: 'example', url: hostile.url },
        { limits: { maxResultBytes: 10_000, overflow: 'error' } },
      ),
      anonymousProject(
        'tasks',
        { alias: 'slow', url: taskUpstream.url },
        { limits: { maxUpstreamResponseBytes: MiB } },
      ),
    ],
    sections: { admin: { token: ADMIN_TOKEN }, upstreams: { callDeadlineMs: DEADLINE_MS } },
  });
  gateway = await startServeProcess(configFile, port, children);
}, 120_000);

afterAll(async () => {
  await killChildren(children);
  await hostile?.close();
  await taskUpstream?.close();
  await example?.close();
  rmSync(dir, { recursive: true, force: true });
});

const client = (slug: string) => new McpTestClient(`http://127.0.0.1:${port}/v1/mcp/${slug}`);
const ordinary = { tasks: false } as const;

async function admin(method: string, route: string, body?: unknown) {
  const reply = await adminCall(`http://127.0.0.1:${port}`, ADMIN_TOKEN, method, route, body);
  return {
    status: reply.status,
    body: reply.body as Record<string, unknown> & { error?: { message: string } },
  };
}

test('a 300 MB result: the gateway stops reading at its bound, stays small, and serves another project meanwhile', async () => {
  floodPaused = new Promise<void>((resolve) => (resumeFlood = resolve));
  const halfway = new Promise<void>((resolve) => (markFloodPaused = resolve));
  const pid = gateway.pid as number;
  const before = rssBytes(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 50);
  try {
    const attack = client('demo').callTool('flood', {}, ordinary);
    await halfway;
    // 8 MiB of the answer are in; the victim's ordinary call is served while it is.
    const victim = await client('victim').callTool('greet', { name: 'still here' }, ordinary);
    expect(victim.body.result).toMatchObject({ content: [{ type: 'text', text: 'Hello, still here!' }] });
    resumeFlood();
    const reply = await attack;
    expect(reply.status).toBe(502);
    expect(reply.body.error).toEqual({
      code: -31014,
      message: `Upstream "example" sent an answer larger than ${16 * MiB} bytes (upstreams.maxResponseBytes)`,
      data: { upstream: 'example', limit: 'upstreams.maxResponseBytes', limitBytes: 16 * MiB },
    });
  } finally {
    clearInterval(sampler);
    resumeFlood();
  }
  // The upstream noticed: the gateway hung up long before 300 MB were written.
  await waitUntil(() => written['flood'] !== undefined);
  expect(written['flood']).toBeLessThan(64 * MiB);
  expect(peak - before).toBeLessThan(RSS_GROWTH_BOUND);
}, 60_000);

test('an SSE event whose line never ends stops at the bound', async () => {
  const reply = await client('demo').callTool('endless-event', {}, ordinary);
  expect(reply.body.error).toMatchObject({
    code: -31014,
    message: `Upstream "example" sent an SSE event larger than ${16 * MiB} bytes (upstreams.maxResponseBytes)`,
    data: { upstream: 'example', limit: 'upstreams.maxResponseBytes' },
  });
  await waitUntil(() => written['endless-event'] !== undefined);
  expect(written['endless-event']).toBeLessThan(64 * MiB);
}, 60_000);

test('a 50,000-key _meta is refused, naming the bound', async () => {
  const reply = await client('demo').callTool('meta', {}, ordinary);
  expect(reply.body.error).toEqual({
    code: -31014,
    message: 'Upstream "example" sent an answer with more than 5000 distinct keys (upstreams.maxAnswerKeys)',
    data: { upstream: 'example', limit: 'upstreams.maxAnswerKeys', limitKeys: 5000 },
  });
});

test('an upstream dripping a byte at a time is cut at the deadline; one reporting progress is not', async () => {
  const [drip, progress] = await Promise.all([client('demo').callTool('drip', {}, ordinary), progressCall()]);
  expect(drip.status).toBe(504);
  expect(drip.body.error).toEqual({
    code: -31015,
    message: `Upstream "example" did not complete its answer within ${DEADLINE_MS} ms (upstreams.callDeadlineMs)`,
    data: { upstream: 'example', limit: 'upstreams.callDeadlineMs', deadlineMs: DEADLINE_MS },
  });
  // The upstream's side of the dripping call was closed, not left open.
  await waitUntil(() => written['drip'] !== undefined);
  // Progress over twelve seconds, then the result: longer than the deadline, and not cut.
  expect(progress.filter((e) => e.method === 'notifications/progress')).toHaveLength(PROGRESS_STEPS);
  expect(progress.at(-1)).toMatchObject({ result: { content: [{ type: 'text', text: 'done' }] } });
}, 30_000);

test("a large result is cut to the project's response limit where it is parsed", async () => {
  const reply = await client('demo').callTool('large', { bytes: 4 * MiB }, ordinary);
  const result = reply.body.result as Record<string, unknown> & { _meta: Record<string, unknown> };
  expect(JSON.stringify(result).length).toBeLessThanOrEqual(MiB);
  expect(result._meta['com.taskrouter/responseLimit']).toMatchObject({ policy: 'truncate', limitBytes: MiB });
  expect(result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'taskrouter' });
}, 30_000);

test("a large result the project's policy refuses is refused where it is parsed, as -31005", async () => {
  const reply = await client('strict').callTool('large', { bytes: 64 * 1024 }, ordinary);
  expect(reply.body.error).toMatchObject({
    code: -31005,
    message: expect.stringMatching(
      /^Result of \d+ bytes exceeds the project's response limit of 10000 bytes$/,
    ),
    data: { limitBytes: 10_000, resultBytes: expect.any(Number) },
  });
});

test("a project's own bound, set through the admin API, lowers the instance's and may not raise it", async () => {
  expect((await admin('POST', '/teams', { slug: 'bounded', name: 'Bounded' })).status).toBe(201);
  const refused = await admin('POST', '/projects', {
    slug: 'too-high',
    team: 'bounded',
    limits: { maxUpstreamResponseBytes: 32 * MiB },
  });
  expect(refused.status).toBe(400);
  expect(refused.body.error?.message).toBe(
    `limits.maxUpstreamResponseBytes (${32 * MiB}) is above this instance's maximum of ${16 * MiB} bytes (upstreams.maxResponseBytes); a project may only lower it`,
  );
  const created = await admin('POST', '/projects', {
    slug: 'small',
    team: 'bounded',
    authMode: 'anonymous',
    namespacing: false,
    limits: { maxUpstreamResponseBytes: MiB },
  });
  expect(created.status).toBe(201);
  expect((await admin('POST', '/projects/small/upstreams', { alias: 'big', url: hostile.url })).status).toBe(
    201,
  );

  const reply = await waitForProject(() => client('small').callTool('large', { bytes: 2 * MiB }, ordinary));
  expect(reply.body.error).toEqual({
    code: -31014,
    message: `Upstream "big" sent an answer larger than ${MiB} bytes (limits.maxUpstreamResponseBytes)`,
    data: { upstream: 'big', limit: 'limits.maxUpstreamResponseBytes', limitBytes: MiB },
  });
  // Within the project's bound the same tool answers (cut to the response limit as usual).
  const fits = await client('small').callTool('large', { bytes: 512 * 1024 }, ordinary);
  expect(fits.body.result).toMatchObject({ resultType: 'complete' });

  const raised = await admin('PATCH', '/projects/small', { limits: { maxUpstreamResponseBytes: 17 * MiB } });
  expect(raised.status).toBe(400);
  expect(raised.body.error?.message).toContain('limits.maxUpstreamResponseBytes');
  const deadline = await admin('PATCH', '/projects/small', {
    limits: { upstreamCallDeadlineMs: DEADLINE_MS + 1 },
  });
  expect(deadline.status).toBe(400);
  expect(deadline.body.error?.message).toContain('limits.upstreamCallDeadlineMs');
  expect((await admin('GET', '/projects/small')).body).toMatchObject({
    limits: { maxUpstreamResponseBytes: MiB },
  });
}, 60_000);

test('a task whose poll answer is too large fails at once, saying why', async () => {
  const created = await client('tasks').callTool('attack', {});
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = String(created.body.result?.taskId);
  const done = await client('tasks').waitForTask(taskId, undefined, 60_000);
  expect(done).toMatchObject({
    status: 'failed',
    error: {
      code: -31014,
      message: `Upstream "slow" sent an answer larger than ${MiB} bytes (limits.maxUpstreamResponseBytes)`,
      data: { upstream: 'slow', limit: 'limits.maxUpstreamResponseBytes', limitBytes: MiB },
    },
  });
  // Not a retry loop: no poll after the one that met the answer (two, when the workflow enlisted the
  // task itself just as the API's enlistment fell due: each enlistment is polled once).
  const polls = taskUpstream.seen['tasks/get'] ?? 0;
  expect(polls).toBeGreaterThanOrEqual(1);
  expect(polls).toBeLessThanOrEqual(2);
  await sleep(1500);
  expect(taskUpstream.seen['tasks/get']).toBe(polls);
}, 90_000);

/** A `tools/call` with a progress token whose SSE stream is read whole: its events in order. */
async function progressCall(): Promise<StreamedMessage[]> {
  return (await progressToolCall(client('demo').url, 'progress', 1, 'p')).messages;
}

/** A project made through the admin API serves once this replica's control-plane cache has seen it. */
async function waitForProject<T extends { status: number }>(call: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    const reply = await call();
    if (reply.status !== 404 || i > 40) return reply;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; !done(); i++) {
    if (i > 200) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("a task's first answer that is too large is the client's error, not a retried call", async () => {
  const reply = await client('tasks').callTool('huge-first', {});
  expect(reply.body.error).toEqual({
    code: -31014,
    message: `Upstream "slow" sent an answer larger than ${MiB} bytes (limits.maxUpstreamResponseBytes)`,
    data: { upstream: 'slow', limit: 'limits.maxUpstreamResponseBytes', limitBytes: MiB },
  });
  expect(hugeFirstCalls).toBe(1);
}, 60_000);
