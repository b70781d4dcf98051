/**
 * Issue 22, findings 1 and 6, against a real gateway process and a hostile upstream of the test's own
 * (project `hostile`, next to `demo` on the example upstream):
 *
 * - a tool that streams 64 KB progress events (or 60 KB log messages) without end to a client that
 *   stops reading: the gateway stops reading the upstream (whose writes back up: the mechanism), its RSS
 *   stays within a bound, and another project's ordinary call still succeeds meanwhile;
 * - a listen client that stops reading while its resources change without end is ended at the stream's
 *   bound with StreamOverflow, and its upstream listen closed;
 * - 50 concurrent listens of one caller: exactly `maxPerCaller` open, the rest refused with -31013;
 *   the per-project cap likewise across two callers.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { META, PROTOCOL_VERSION, requestHeaders } from '../../src/protocol';
import { getFreePort } from '../../src/tooling/processes';
import type { HostileUpstream } from '../helpers/hostile-upstream';
import { rssBytes, stalledClient, startHostileUpstream, writeSse } from '../helpers/hostile-upstream';
import { McpTestClient } from '../helpers/mcp-client';
import {
  anonymousProject,
  killChildren,
  startServeProcess,
  waitFor,
  writeServeConfig,
} from '../helpers/serve-process';
import { testStoreConfig } from '../helpers/store';

const METRICS_TOKEN = 'stream-isolation-metrics-token';
const KEY1 = 'trk_stream-cap-key-one-0000000000000000';
const KEY2 = 'trk_stream-cap-key-two-0000000000000000';
/** The per-project cap of this gateway (the per-caller one stays 16). */
const MAX_PER_PROJECT = 20;
/**
 * What an attack may add to the gateway's RSS. Measured: at most a few MB once the gateway has stopped
 * reading (progress flood: 235 MB read before the client's socket buffers were full, then nothing; log
 * flood: 8 MB), against +45 MB/s (progress) and +75 MB/s (log) without back-pressure before this change.
 * The margin is for GC timing on a loaded machine.
 */
const RSS_BOUND = 150e6;
/** 32 URIs (the most one listen follows) of 10 000 characters: more distinct updates than the bound. */
const URIS = Array.from({ length: 32 }, (_, i) => `hostile://r/${i}/${'u'.repeat(10_000)}`);

/** What the hostile upstream's current flood did. */
interface Flood {
  written: number;
  /** Its last write answered false and it is waiting for `drain`. */
  paused: boolean;
  /** The gateway closed the request (aborted the call or the listen). */
  closed: boolean;
}

const children: ChildProcess[] = [];
let dir: string;
let example: ExampleUpstream;
let hostile: HostileUpstream;
let taskUpstream: HostileUpstream;
let gateway: ChildProcess;
let base: string;
let flood: Flood = { written: 0, paused: false, closed: false };
let idleRss: number;

/** Writes `event(n)` for n = 1, 2, … until the gateway closes the response, honouring its own drain. */
function pump(res: ServerResponse, event: (n: number) => unknown): void {
  const state: Flood = { written: 0, paused: false, closed: false };
  flood = state;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.on('close', () => (state.closed = true));
  const next = () => {
    state.paused = false;
    while (!res.destroyed) {
      state.written++;
      if (!writeSse(res, event(state.written))) {
        state.paused = true;
        res.once('drain', next);
        return;
      }
    }
  };
  next();
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-streams-'));
  example = await startExampleUpstream({ pollIntervalMs: 100 });
  const pad64k = 'x'.repeat(64 * 1024);
  hostile = await startHostileUpstream({
    tools: [
      { name: 'attack', inputSchema: { type: 'object' } },
      { name: 'chatter', inputSchema: { type: 'object' } },
    ],
    capabilities: { resources: { subscribe: true } },
    onRequest: (_req, res, message) => {
      const answer = (result: Record<string, unknown>) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      };
      const params = message.params;
      if (message.method === 'tools/call' && params.name === 'attack') {
        const token = (params._meta as Record<string, unknown>).progressToken;
        pump(res, (n) => ({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: token, progress: n, message: pad64k },
        }));
      } else if (message.method === 'tools/call') {
        pump(res, (n) => ({
          jsonrpc: '2.0',
          method: 'notifications/message',
          params: { level: 'info', data: `${n} ${pad64k.slice(0, 60_000)}` },
        }));
      } else if (message.method === 'resources/read') {
        answer({ resultType: 'complete', contents: [{ uri: params.uri, text: 'r' }] });
      } else if (message.method === 'subscriptions/listen') {
        const uris = (params.notifications as { resourceSubscriptions: string[] }).resourceSubscriptions;
        pump(res, (n) =>
          n === 1
            ? {
                jsonrpc: '2.0',
                method: 'notifications/subscriptions/acknowledged',
                params: { notifications: { resourceSubscriptions: uris } },
              }
            : {
                jsonrpc: '2.0',
                method: 'notifications/resources/updated',
                params: { uri: uris[n % uris.length] },
              },
        );
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no' } }));
      }
    },
  });
  // A task whose status message is 100 000 characters long, on creation and on every poll.
  const longTask = () => ({
    taskId: 'upstream-task-1',
    status: 'working',
    statusMessage: 's'.repeat(100_000),
    createdAt: new Date().toISOString(),
    lastUpdatedAt: new Date().toISOString(),
    ttlMs: 3_600_000,
    pollIntervalMs: 1000,
  });
  taskUpstream = await startHostileUpstream({
    tasks: true,
    tools: [{ name: 'long_status', inputSchema: { type: 'object' }, execution: { taskSupport: 'optional' } }],
    onRequest: (_req, res, message) => {
      const result =
        message.method === 'tools/call'
          ? { resultType: 'task', ...longTask() }
          : message.method === 'tasks/get'
            ? { resultType: 'complete', ...longTask() }
            : { resultType: 'complete' };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    },
  });
  const bootstrapFile = path.join(dir, 'bootstrap.json');
  writeFileSync(
    bootstrapFile,
    JSON.stringify({
      teams: [{ slug: 'streams' }],
      projects: [
        {
          slug: 'shared',
          team: 'streams',
          namespacing: false,
          apiKeys: [
            { name: 'one', key: KEY1 },
            { name: 'two', key: KEY2 },
          ],
          upstreams: [{ alias: 'example', url: example.url }],
        },
      ],
    }),
  );
  const port = await getFreePort();
  base = `http://127.0.0.1:${port}`;
  const configFile = writeServeConfig(dir, {
    port,
    upstreamUrl: example.url,
    store: await testStoreConfig(dir),
    projects: [
      anonymousProject('hostile', { alias: 'hostile', url: hostile.url }),
      anonymousProject('hostile-tasks', { alias: 'tasks', url: taskUpstream.url }),
    ],
    sections: {
      streams: { maxPerProject: MAX_PER_PROJECT },
      health: { metricsToken: METRICS_TOKEN },
      bootstrapFile,
    },
  });
  gateway = await startServeProcess(configFile, port, children);
  idleRss = await settledRss(gateway.pid as number);
}, 120_000);

afterAll(async () => {
  await killChildren(children);
  await hostile?.close();
  await taskUpstream?.close();
  await example?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The process's RSS once it has stopped growing (its worker warms up for a few seconds after start). */
async function settledRss(pid: number): Promise<number> {
  let previous = rssBytes(pid);
  for (let calm = 0, i = 0; calm < 3 && i < 60; i++) {
    await sleep(1000);
    const now = rssBytes(pid);
    calm = Math.abs(now - previous) < 3e6 ? calm + 1 : 0;
    previous = now;
  }
  return previous;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const envelope = (extra: Record<string, unknown> = {}) => ({
  [META.protocolVersion]: PROTOCOL_VERSION,
  [META.clientCapabilities]: {},
  [META.clientInfo]: { name: 'stream-isolation', version: '1.0.0' },
  ...extra,
});

/** A `tools/call` from a client that sends it and never reads its socket. */
function stalledCall(tool: string) {
  const params = { name: tool, arguments: {}, _meta: envelope({ progressToken: 'p1' }) };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 'attack-1', method: 'tools/call', params });
  return stalledClient(
    `${base}/v1/mcp/hostile`,
    body,
    requestHeaders('tools/call', params, PROTOCOL_VERSION),
  );
}

async function metric(name: string, labels: string): Promise<number> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/**
 * Runs an attack for `seconds`: samples the gateway's RSS every second and has another project's
 * ordinary call answered every 5 s. Answers the largest RSS growth over idle, the victim's answers and
 * what the upstream had written 5 s before the end.
 */
async function underAttack(seconds: number) {
  const victim = new McpTestClient(`${base}/v1/mcp/demo`);
  let peak = 0;
  const answers: unknown[] = [];
  let writtenBeforeEnd = -1;
  for (let s = 1; s <= seconds; s++) {
    await sleep(1000);
    peak = Math.max(peak, rssBytes(gateway.pid as number) - idleRss);
    if (s % 5 === 0) {
      const reply = await victim.callTool('greet', { name: `victim-${s}` }, { tasks: false });
      answers.push(reply.body.result);
    }
    if (s === seconds - 5) writtenBeforeEnd = flood.written;
  }
  return { peak, answers, writtenBeforeEnd };
}

async function expectGatewayServes(): Promise<void> {
  expect(gateway.exitCode).toBeNull();
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
}

test.each([
  ['64 KB progress events', 'attack', 20],
  ['60 KB log messages', 'chatter', 10],
])(
  'a tool streaming %s without end to a client that stops reading: the upstream is held back, RSS bounded, neighbours served',
  async (_what, tool, seconds) => {
    const client = await stalledCall(tool);
    try {
      const { peak, answers, writtenBeforeEnd } = await underAttack(seconds);
      // The mechanism: the gateway stopped reading, so the upstream's writes backed up and it waits.
      expect(flood.paused).toBe(true);
      expect(flood.written).toBe(writtenBeforeEnd);
      expect(peak).toBeLessThan(RSS_BOUND);
      expect(answers).toHaveLength(seconds / 5);
      for (const [i, a] of answers.entries()) expect(JSON.stringify(a)).toContain(`victim-${(i + 1) * 5}`);
      await expectGatewayServes();
      // Held back, not ended: the stream stays within its bound while the upstream waits.
      expect(await metric('taskrouter_stream_overflows_total', 'project="hostile"')).toBe(0);
    } finally {
      client.close();
    }
    // The client gone, the gateway aborts the upstream call (a waiting relay does not hold it).
    const state = flood;
    await waitFor(
      () => state.closed,
      () => 'the upstream call was not closed after the client left',
      30_000,
    );
  },
  120_000,
);

test('a listen client that stops reading while its resources change without end is ended at the bound', async () => {
  const params = { notifications: { resourceSubscriptions: URIS }, _meta: envelope() };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen', params });
  const client = await stalledClient(
    `${base}/v1/mcp/hostile`,
    body,
    requestHeaders('subscriptions/listen', params, PROTOCOL_VERSION),
  );
  try {
    await waitFor(
      () => flood.written > 1,
      () => 'the upstream listen was never opened',
      30_000,
    );
    const listen = flood;
    let overflows = 0;
    let peak = 0;
    for (let i = 0; i < 120 && overflows === 0; i++) {
      await sleep(500);
      peak = Math.max(peak, rssBytes(gateway.pid as number) - idleRss);
      overflows = await metric('taskrouter_stream_overflows_total', 'project="hostile"');
    }
    expect(overflows).toBe(1);
    expect(peak).toBeLessThan(RSS_BOUND);
    // Ended at once: its upstream listen is closed too, before the client reads anything.
    await waitFor(
      () => listen.closed,
      () => 'the upstream listen stayed open',
      30_000,
    );
    // The client reads again: what the socket held, then the StreamOverflow error, then the end.
    const text = await readToEnd(client.socket);
    const error = text.lastIndexOf('"code":-31016');
    expect(error).toBeGreaterThan(text.lastIndexOf('notifications/resources/updated'));
    expect(text.slice(error - 200, error)).toContain('"id":"listen-1"');
    await expectGatewayServes();
  } finally {
    client.close();
  }
}, 120_000);

/** Reads a paused raw socket to its end (the gateway closing it); answers what came, as text. */
function readToEnd(socket: net.Socket): Promise<string> {
  socket.removeAllListeners('data');
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the stream did not end')), 30_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    socket.resume();
  });
}

/** Opens a listen (`toolsListChanged`, so it awaits the upstreams' discovery before it is held). */
async function openListen(slug: string, token?: string) {
  const controller = new AbortController();
  const params = { notifications: { toolsListChanged: true }, _meta: envelope() };
  const res = await fetch(`${base}/v1/mcp/${slug}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...requestHeaders('subscriptions/listen', params, PROTOCOL_VERSION),
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params }),
    signal: controller.signal,
  });
  const open = res.headers.get('content-type')?.startsWith('text/event-stream') === true;
  const error = open
    ? undefined
    : ((await res.json()) as { error: { code: number; data: Record<string, unknown> } }).error;
  return {
    status: res.status,
    open,
    error,
    retryAfter: res.headers.get('retry-after'),
    close: () => controller.abort(),
  };
}

test('50 concurrent listens of one caller: exactly 16 open, the rest refused with RateLimited; slots come back', async () => {
  const all = await Promise.all(Array.from({ length: 50 }, () => openListen('demo')));
  try {
    const open = all.filter((l) => l.open);
    const refused = all.filter((l) => !l.open);
    expect(open).toHaveLength(16);
    expect(refused).toHaveLength(34);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.retryAfter).toBe('5');
      expect(r.error).toMatchObject({ code: -31013, data: { limit: 'caller', max: 16, retryAfterMs: 5000 } });
    }
  } finally {
    for (const l of all) l.close();
  }
  // Every slot is given back, closed streams' and refusals' alike (closing takes a moment to be seen).
  let again: Awaited<ReturnType<typeof openListen>>[] = [];
  for (let i = 0; i < 100; i++) {
    for (const l of again) l.close();
    await sleep(100);
    again = await Promise.all(Array.from({ length: 16 }, () => openListen('demo')));
    if (again.every((l) => l.open)) break;
  }
  try {
    expect(again.filter((l) => l.open)).toHaveLength(16);
  } finally {
    for (const l of again) l.close();
  }
}, 120_000);

test('the per-project cap holds across callers: the second caller gets what the first left of it', async () => {
  const first = await Promise.all(Array.from({ length: 16 }, () => openListen('shared', KEY1)));
  const second = await Promise.all(Array.from({ length: 10 }, () => openListen('shared', KEY2)));
  try {
    expect(first.filter((l) => l.open)).toHaveLength(16);
    expect(second.filter((l) => l.open)).toHaveLength(MAX_PER_PROJECT - 16);
    for (const r of second.filter((l) => !l.open)) {
      expect(r.error).toMatchObject({ code: -31013, data: { limit: 'project', max: MAX_PER_PROJECT } });
    }
    // Another project is not affected.
    const elsewhere = await openListen('demo');
    expect(elsewhere.open).toBe(true);
    elsewhere.close();
  } finally {
    for (const l of [...first, ...second]) l.close();
  }
}, 60_000);

test("an upstream task's 100 000-character status message is cut to 4096 before it is stored and returned", async () => {
  const client = new McpTestClient(`${base}/v1/mcp/hostile-tasks`);
  const created = await client.callTool('long_status');
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const cut = `${'s'.repeat(4095)}…`;
  expect(created.body.result?.statusMessage).toBe(cut);
  const got = await client.getTask(String(created.body.result?.taskId));
  expect(got.body.result).toMatchObject({ status: 'working', statusMessage: cut });
}, 60_000);
