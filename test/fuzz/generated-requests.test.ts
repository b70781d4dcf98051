/**
 * Hostile input, generated (issue "protocol completeness and hostile input"): ten thousand requests from
 * test/fuzz/requests.ts, seeded and reproducible, against the gateway as a real process (`serve all`, its
 * own SQLite file, the shared Temporal dev server) in front of the example upstream. Properties:
 *
 * - the process never crashes: it is alive and `/healthz` answers 200 at the end;
 * - no answer is a 5xx, and every answer is what its case must get: a spec-shaped JSON-RPC result or
 *   error with the expected HTTP status and code, or a documented empty answer (202, 405);
 * - no upstream ever sees a request the gateway had to refuse: every request carries its case number,
 *   and the case numbers the upstream saw are exactly the valid, forwarded requests (each once); the
 *   gateway's own requests (discovery, catalog) carry none.
 *
 * FUZZ_SEED and FUZZ_CASES override the seed and the number of cases (a failure prints both, and the case
 * number to replay). Then fixed cases: invalid UTF-8, duplicate names, huge ids, a thousand idle listens,
 * and an admin API answer given before the body was read (413, 401) that must close the connection.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { META, PROTOCOL_VERSION } from '../../src/protocol';
import { getFreePort } from '../../src/tooling/processes';
import { killChildren, startServeProcess, writeServeConfig } from '../helpers/serve-process';
import { testStoreConfig } from '../helpers/store';
import type { FuzzCase, Session } from './requests';
import { caseArbitrary } from './mutations';
import { isValid, render } from './oracle';
import { CASE_META_KEY, CASE_PARAM, JSON_LIMITS, MAX_BODY_BYTES } from './requests';
import type { RawReply } from './wire';
import { answerOf, closeAgent, send } from './wire';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20261203);
const CASES = Number(process.env['FUZZ_CASES'] ?? 10_000);
const CONCURRENCY = 8;
const ADMIN_TOKEN = 'fuzz-admin-token-0123456789abcdef';
/** Errors a valid request may get: an unknown task id, tool, prompt or resource (the upstream's -32602). */
const VALID_ERRORS = new Set([-32602]);
/** The gateway's own upstream requests (no case number): discovery and the catalog, cached. */
const OWN_METHODS = new Set(['server/discover', 'tools/list', 'prompts/list']);

let dir: string;
let upstream: ExampleUpstream;
let port: number;
let gateway: ChildProcess;
const children: ChildProcess[] = [];
/** Every request the upstream received: its method and the case number it carried, if any. */
const reached: Array<{ method: string; n: number | undefined }> = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-fuzz-'));
  upstream = await startExampleUpstream({
    pollIntervalMs: 100,
    onRequest: (r) => {
      const params = (r.params ?? {}) as Record<string, unknown>;
      const meta = (params._meta ?? {}) as Record<string, unknown>;
      const n = meta[CASE_META_KEY] ?? params[CASE_PARAM];
      reached.push({ method: r.method, n: typeof n === 'number' ? n : undefined });
    },
  });
  port = await getFreePort();
  const configFile = writeServeConfig(dir, {
    port,
    upstreamUrl: upstream.url,
    store: await testStoreConfig(dir),
    http: { maxBodyBytes: MAX_BODY_BYTES, ...JSON_LIMITS },
    projects: [{ slug: 'locked', namespacing: false, upstreams: [{ alias: 'example', url: upstream.url }] }],
  });
  gateway = await startServeProcess(configFile, port, children, 'error', {
    TASKROUTER_ADMIN_TOKEN: ADMIN_TOKEN,
  });
}, 90_000);

afterAll(async () => {
  closeAgent();
  await killChildren(children);
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Opens a 2025-era session of each version the gateway serves. */
async function openSessions(): Promise<Session[]> {
  const sessions: Session[] = [];
  for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
    const init = await send(port, {
      method: 'POST',
      path: '/v1/mcp/demo',
      headers: JSON_HEADERS,
      body: Buffer.from(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: {
            protocolVersion: version,
            // 2025-11-25 clients that declare tasks get the era's task methods.
            capabilities: version === '2025-11-25' ? { tasks: { list: {}, cancel: {} } } : {},
            clientInfo: { name: 'fuzz', version: '1' },
          },
        }),
      ),
    });
    const id = String(init.headers['mcp-session-id'] ?? '');
    expect(id).not.toBe('');
    sessions.push({ id, version });
  }
  return sessions;
}

/**
 * A valid call the task engine could not start in time (no worker free within tasks.startTimeoutMs, as on
 * a machine this busy): 503 with -31002 saying nothing was sent. Not a client mistake, and retryable; it
 * is counted in the outcomes, and the case is then not expected upstream.
 */
function overloaded(reply: RawReply): boolean {
  if (reply.status !== 503) return false;
  try {
    const error = answerOf(reply)?.error;
    return error?.code === -31002 && /nothing was sent/.test(error.message);
  } catch {
    return false;
  }
}

/** Why a reply is wrong for its case, or undefined when it is right. */
function judge(c: FuzzCase, reply: RawReply): string | undefined {
  if (reply.status >= 500 && !(c.expect === undefined && overloaded(reply))) return `HTTP ${reply.status}`;
  let answer;
  try {
    answer = answerOf(reply);
  } catch (err) {
    return `not spec-shaped: ${(err as Error).message}`;
  }
  const code = answer?.error?.code ?? (answer ? 'result' : null);
  if (c.expect) {
    if (!c.expect.status.includes(reply.status))
      return `HTTP ${reply.status}, expected ${c.expect.status.join('|')}`;
    if (!c.expect.codes.includes(code as number | null))
      return `answer ${String(code)}, expected ${c.expect.codes.join('|')}`;
  } else {
    if (overloaded(reply)) return undefined;
    if (reply.status !== 200) return `HTTP ${reply.status} for a valid request`;
    if (!answer) return 'no answer for a valid request';
    if (answer.error && !VALID_ERRORS.has(answer.error.code))
      return `error ${answer.error.code} for a valid request`;
    if (answer.result && c.era === '2026' && typeof answer.result.resultType !== 'string')
      return 'a result without resultType';
  }
  if (answer && c.echoesId && JSON.stringify(answer.id) !== JSON.stringify(c.id))
    return 'the answer does not carry the request id';
  return undefined;
}

function outcomeKey(reply: RawReply): string {
  let code: string;
  try {
    const a = answerOf(reply);
    code = a === undefined ? '(no body)' : a.error ? String(a.error.code) : 'result';
  } catch {
    code = '(unreadable)';
  }
  return `HTTP ${reply.status} ${code}`;
}

function table(counts: Map<string, number>): string {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `  ${String(v).padStart(6)}  ${k}`)
    .join('\n');
}

test(`${CASES} generated requests: no crash, no 5xx, spec-shaped answers, nothing refused reaches the upstream`, async () => {
  const started = Date.now();
  // Generated first: on a loaded machine this takes seconds, longer than the sessions' connections idle.
  const generated = fc.sample(caseArbitrary, { seed: SEED, numRuns: CASES });
  const sessions = await openSessions();
  const cases: FuzzCase[] = generated.map((g, n) => render(n, g, sessions, 'demo'));
  const replies = new Array<RawReply | undefined>(cases.length);
  const failures: string[] = [];
  const outcomes = new Map<string, number>();
  const byMutation = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < cases.length; i = next++) {
      const c = cases[i] as FuzzCase;
      let reply: RawReply;
      try {
        reply = await send(port, c.request);
      } catch (err) {
        failures.push(`case ${c.n} (${c.method}, ${c.mutation}): ${(err as Error).message}`);
        continue;
      }
      replies[i] = reply;
      const key = outcomeKey(reply);
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      byMutation.set(c.mutation, (byMutation.get(c.mutation) ?? 0) + 1);
      const wrong = judge(c, reply);
      if (wrong) {
        const sent = c.request.body.subarray(0, 400).toString('utf8');
        const got = reply.body.subarray(0, 300).toString('utf8');
        failures.push(
          `case ${c.n} (${c.method}, ${c.mutation}): ${wrong}\n    sent ${sent}\n    got  ${got}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));

  // What reached the upstream: only valid requests, each forwarded one exactly once.
  const seen = new Map<number, number>();
  const own = new Map<string, number>();
  for (const r of reached) {
    if (r.n === undefined) own.set(r.method, (own.get(r.method) ?? 0) + 1);
    else seen.set(r.n, (seen.get(r.n) ?? 0) + 1);
  }
  for (const [n, count] of seen) {
    const c = cases[n];
    if (!c || !isValid(c.mutation))
      failures.push(`case ${n} (${c?.method}, ${c?.mutation}) reached the upstream`);
    else if (count !== 1) failures.push(`case ${n} (${c.method}) reached the upstream ${count} times`);
  }
  const accepted = cases.filter((c, i) => c.forwardsOnce && replies[i]?.status === 200);
  for (const c of accepted)
    if (!seen.has(c.n)) failures.push(`case ${c.n} (${c.method}) answered but never forwarded`);
  for (const [method, count] of own) {
    if (!OWN_METHODS.has(method))
      failures.push(`the upstream got ${count} ${method} requests without a case number`);
  }
  const ownTotal = [...own.values()].reduce((a, b) => a + b, 0);
  if (ownTotal > 200)
    failures.push(`the upstream got ${ownTotal} requests of the gateway's own (expected a few)`);

  // Alive and well.
  expect(gateway.exitCode).toBeNull();
  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  expect(health.status).toBe(200);

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `hostile-input fuzz: seed ${SEED}, ${cases.length} cases in ${seconds} s, ` +
      `${cases.filter((c) => isValid(c.mutation)).length} valid (${accepted.length} forwarded, ${seen.size} seen upstream), ` +
      `${ownTotal} of the gateway's own upstream requests, ${failures.length} failures\n` +
      `by answer:\n${table(outcomes)}\nby mutation:\n${table(byMutation)}`,
  );
  if (failures.length > 0) {
    throw new Error(
      `${failures.length} failing cases (seed ${SEED}, FUZZ_SEED=${SEED} FUZZ_CASES=${CASES} to replay):\n` +
        failures.slice(0, 20).join('\n'),
    );
  }
}, 240_000);

describe('fixed cases', () => {
  const meta = { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} };
  const headers = { ...JSON_HEADERS, 'mcp-protocol-version': PROTOCOL_VERSION, 'mcp-method': 'tools/list' };
  const post = (body: Buffer | string, extra: Record<string, string> = {}) =>
    send(port, {
      method: 'POST',
      path: '/v1/mcp/demo',
      headers: { ...headers, ...extra },
      body: Buffer.from(body),
    });

  test('invalid UTF-8 is a parse error, not a name with U+FFFD in it', async () => {
    const before = reached.length;
    for (const bytes of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      const body = Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gr'),
        Buffer.from(bytes),
        Buffer.from(`eet","arguments":{},"_meta":${JSON.stringify(meta)}}}`),
      ]);
      const reply = await post(body, { 'mcp-method': 'tools/call', 'mcp-name': 'greet' });
      expect(reply.status).toBe(400);
      expect(answerOf(reply)?.error?.code).toBe(-32700);
    }
    expect(reached.length).toBe(before);
  });

  test('a name repeated in one object is refused wherever it is; one body, one meaning', async () => {
    const m = JSON.stringify(meta);
    for (const [body, name] of [
      [
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{"_meta":${m}}}`,
        'method',
      ],
      [`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":${m},"_meta":${m}}}`, '_meta'],
      [
        `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"a\\u0062":1,"ab":2,${m.slice(1)}}}`,
        'ab',
      ],
      [
        `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":[{"k":1},{"k":2,"k":3}],"_meta":${m}}}`,
        'k',
      ],
    ] as const) {
      const reply = await post(body);
      expect(reply.status).toBe(400);
      expect(answerOf(reply)?.error).toMatchObject({
        code: -32600,
        message: expect.stringContaining(`"${name}"`),
      });
    }
    // The same names in different objects, and braces or quotes inside strings, are fine.
    const fine = await post(
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":{"k":"}\\"{"},"b":{"k":1},"_meta":${m}}}`,
    );
    expect(fine.status).toBe(200);
  });

  test('huge ids: numbers that cannot be echoed exactly are refused, long strings are echoed', async () => {
    const m = JSON.stringify(meta);
    for (const id of ['1e300', '9007199254740993', '-9007199254740993', '123456789012345678901234567890']) {
      const reply = await post(`{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{"_meta":${m}}}`);
      expect(reply.status).toBe(400);
      expect(answerOf(reply)).toMatchObject({ id: null, error: { code: -32600 } });
    }
    for (const id of [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 'x'.repeat(60_000)]) {
      const reply = await post(
        JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: meta } }),
      );
      expect(reply.status).toBe(200);
      expect(answerOf(reply)?.id).toEqual(id);
    }
  });

  test('a thousand idle listen streams from one caller: 16 open, the rest refused clearly, the gateway serves on', async () => {
    const open: Array<() => void> = [];
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: { _meta: meta },
    });
    const listen = () =>
      new Promise<{ status: number; first: string; close: () => void }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/v1/mcp/demo',
            // A connection each, as a thousand separate clients would.
            agent: false,
            headers: {
              ...headers,
              'mcp-method': 'subscriptions/listen',
              'content-length': String(Buffer.byteLength(body)),
            },
          },
          (res) => {
            res.once('data', (chunk: Buffer) =>
              resolve({
                status: res.statusCode ?? 0,
                first: chunk.toString('utf8'),
                close: () => req.destroy(),
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    try {
      const replies = await Promise.all(Array.from({ length: 1000 }, listen));
      for (const r of replies) open.push(r.close);
      const streams = replies.filter((r) => r.first.includes('notifications/subscriptions/acknowledged'));
      const refused = replies.filter((r) => r.first.includes('"error"'));
      expect(streams).toHaveLength(16);
      expect(refused).toHaveLength(984);
      for (const r of refused) {
        // Retryable: RateLimited (HTTP 429) with the delay in data.retryAfterMs and Retry-After.
        expect(r.status).toBe(429);
        expect(JSON.parse(r.first)).toMatchObject({
          error: {
            code: -31013,
            message: expect.stringMatching(/at most 16/i),
            data: { limit: 'caller', retryAfterMs: 5000 },
          },
        });
      }
      // Meanwhile everything else is served.
      const list = await post(
        JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta } }),
      );
      expect(list.status).toBe(200);
    } finally {
      for (const close of open) close();
    }
    // Once closed, the caller may listen again.
    const deadline = Date.now() + 5_000;
    let again: Awaited<ReturnType<typeof listen>> | undefined;
    while (Date.now() < deadline) {
      again = await listen();
      again.close();
      if (again.first.includes('acknowledged')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(again?.first).toContain('acknowledged');
    expect(gateway.exitCode).toBeNull();
  }, 60_000);

  test('a body over the admin API limit, or sent without a token, is not read on: 413 or 401 closes the connection, the next request is answered', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const admin = (method: string, body: Buffer | undefined, token: string | undefined) =>
      new Promise<{ status: number; connection?: string }>((resolve) => {
        let settled = false;
        const done = (v: { status: number; connection?: string }) => {
          if (!settled) resolve(v);
          settled = true;
        };
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method,
            path: '/v1/admin/projects',
            agent,
            headers: {
              'content-type': 'application/json',
              ...(token !== undefined && { authorization: `Bearer ${token}` }),
              ...(body && { 'content-length': String(body.length) }),
            },
          },
          (res) => {
            const head = { status: res.statusCode ?? 0, connection: res.headers.connection };
            res.resume();
            res.on('end', () => done(head));
            res.on('close', () => done(head));
          },
        );
        // The server closed while the body was still coming (a reset can beat the answer to the
        // client): closed, not read on, which is the point. Status 0 says so.
        req.on('error', () => done({ status: 0 }));
        req.end(body);
      });
    try {
      // 5 MB of JSON (a string member), far over the 64 KiB limit.
      const big = Buffer.from(`{"slug":"x","padding":"${'p'.repeat(5 * 1024 * 1024)}"}`);
      for (const token of [ADMIN_TOKEN, undefined]) {
        const refused = await admin('POST', big, token);
        expect([token ? 413 : 401, 0]).toContain(refused.status);
        if (refused.status !== 0) expect(refused.connection).toBe('close');
        const next = await admin('GET', undefined, ADMIN_TOKEN);
        expect(next.status).toBe(200);
      }
    } finally {
      agent.destroy();
    }
  });
});
