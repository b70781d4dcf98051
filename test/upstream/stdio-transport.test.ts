/**
 * Local upstreams over stdio (src/upstream/transport/stdio.ts) through the upstream client, with real
 * processes of `@modelcontextprotocol/server-everything` in stdio mode: calls, one process per
 * credential scope with the catalog's environment only, idle stop, crash and restart, the per-replica
 * cap, bad catalog references; and the catalog's pure parts.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { StdioConfigSchema, checkStdioUrl, StdioReferenceError } from '../../src/config/stdio';
import { META, PROTOCOL_VERSION } from '../../src/protocol';
import { metricsText } from '../../src/telemetry/metrics';
import type { UpstreamEndpoint } from '../../src/upstream/client';
import { UpstreamClient } from '../../src/upstream/client';
import { launchSpec, redact } from '../../src/upstream/transport/processes';

const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const meta = { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} };

/** A server that is no server: `node -e <script>`. */
const fake = (script: string) => ({
  command: process.execPath,
  args: ['-e', script],
  credentialEnv: 'UPSTREAM_TOKEN',
});

const CATALOG = {
  garbage: fake("process.stdin.on('data', () => process.stdout.write('this is not json\\n'))"),
  silent: fake('process.stdin.resume()'),
  // Answers initialize (in the version asked) and tools/list, then exits in the middle of any tools/call.
  quitter: fake(
    "let buf = ''; process.stdin.on('data', (d) => { buf += d; let i; while ((i = buf.indexOf('\\n')) >= 0) { const m = JSON.parse(buf.slice(0, i)); buf = buf.slice(i + 1); if (m.method === 'initialize') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'quitter', version: '1' } } }) + '\\n'); else if (m.method === 'tools/list') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'quit', inputSchema: { type: 'object' } }] } }) + '\\n'); else if (m.method === 'tools/call') process.exit(3); } })",
  ),
  flood: fake(
    "process.stderr.write('token is ' + process.env.UPSTREAM_TOKEN + '\\n'); for (let i = 0; i < 2000; i++) process.stderr.write('x'.repeat(200) + '\\n'); process.stdin.resume()",
  ),
};

function config(over: Record<string, unknown> = {}) {
  return StdioConfigSchema.parse({
    restartBackoffMs: 0,
    ...over,
    catalog: {
      everything: {
        command: process.execPath,
        args: [EVERYTHING, 'stdio'],
        env: { FIXED: 'fixed-value' },
        credentialEnv: 'UPSTREAM_TOKEN',
        settable: { root: { pattern: '[a-z0-9/.]+', under: '/srv/projects', required: false, env: 'ROOT' } },
      },
      ...CATALOG,
      ...(over.catalog as object | undefined),
    },
  });
}

function endpoint(user: string, token?: string): UpstreamEndpoint {
  return {
    alias: 'local',
    project: 'p',
    url: 'stdio:everything?root=team/a',
    upstreamId: 'ups_1',
    cacheKey: `ups_1#${user}`,
    ...(token && { headers: { authorization: `Bearer ${token}` } }),
  };
}

function envOf(pid: number | undefined): Record<string, string> {
  const raw = readFileSync(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

function text(reply: Awaited<ReturnType<UpstreamClient['send']>>): string {
  if (reply.kind !== 'result') throw new Error(JSON.stringify(reply));
  return ((reply.result.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? '').join('');
}

const alive = (pid: number | undefined) => {
  try {
    process.kill(pid ?? -1, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 50));
}

describe('stdio catalog', () => {
  const catalog = config().catalog;
  it('accepts declared values inside their base, refuses everything else naming the field', () => {
    expect(checkStdioUrl(catalog, 'stdio:everything?root=team/a').values).toEqual({ root: 'team/a' });
    const refused = (url: string) => {
      try {
        checkStdioUrl(catalog, url);
      } catch (err) {
        expect(err).toBeInstanceOf(StdioReferenceError);
        return `${(err as StdioReferenceError).field}: ${(err as Error).message}`;
      }
      throw new Error('accepted');
    };
    expect(refused('stdio:nothing')).toMatch(/^url: .*"nothing" is not in this gateway's catalog/);
    expect(refused('stdio:everything?cmd=sh')).toMatch(/^url\.cmd: .*no settable value "cmd"/);
    expect(refused('stdio:everything?root=A')).toMatch(/^url\.root: .*does not match/);
    expect(refused('stdio:everything?root=../etc')).toMatch(/^url\.root: .*inside \/srv\/projects/);
    expect(refused('stdio:everything?root=a/../../etc')).toMatch(/^url\.root: .*inside \/srv\/projects/);
  });

  it("launches with the catalog's environment only, the credential in its variable", () => {
    process.env.SOME_GATEWAY_SECRET = 'x';
    const spec = catalog.everything!;
    const launch = launchSpec(spec, checkStdioUrl(catalog, 'stdio:everything?root=team/a'), 'tok-1');
    expect(launch.env).toEqual({
      FIXED: 'fixed-value',
      ROOT: '/srv/projects/team/a',
      UPSTREAM_TOKEN: 'tok-1',
    });
    expect(launch.args.slice(-2)).toEqual([EVERYTHING, 'stdio']);
    delete process.env.SOME_GATEWAY_SECRET;
  });

  it('redacts secrets and credential-looking words in stderr lines', () => {
    expect(redact('using tok-secret-1 now', ['tok-secret-1'])).toBe('using [redacted] now');
    expect(redact('Authorization: Bearer abc.def', [])).not.toContain('abc.def');
    expect(redact('api_key=sk-123 rest', [])).toBe('api_key=[redacted] rest');
  });
});

describe('stdio upstreams through the upstream client', () => {
  let client: UpstreamClient;
  const logs: string[] = [];
  afterEach(async () => {
    await client?.close();
  });
  const make = (over: Record<string, unknown> = {}) => {
    client = new UpstreamClient({
      stdio: { config: config(over), log: (_d, m) => logs.push(m) },
      timeoutMs: 20_000,
    });
    return client;
  };

  it('lists and calls tools; one process per credential scope, with its own environment', async () => {
    const c = make();
    const tools = await c.send(endpoint('alice', 'tok-alice'), 'tools/list', { _meta: meta });
    expect(
      tools.kind === 'result' && (tools.result.tools as Array<{ name: string }>).map((t) => t.name),
    ).toEqual(expect.arrayContaining(['echo', 'get-env']));
    const echo = await c.send(endpoint('alice', 'tok-alice'), 'tools/call', {
      name: 'echo',
      arguments: { message: 'hi' },
      _meta: meta,
    });
    expect(text(echo)).toContain('hi');
    await c.send(endpoint('bob', 'tok-bob'), 'tools/list', { _meta: meta });
    const running = c.stdio.running();
    expect(running).toHaveLength(2);
    const [a, b] = running.map((r) => envOf(r.pid));
    expect(new Set([a?.UPSTREAM_TOKEN, b?.UPSTREAM_TOKEN])).toEqual(new Set(['tok-alice', 'tok-bob']));
    for (const env of [a, b]) {
      expect(env?.FIXED).toBe('fixed-value');
      expect(env?.HOME).toBeUndefined();
      expect(env?.PATH).toBeUndefined();
    }
    // The session is reused: a second call of alice's goes to the same process.
    await c.send(endpoint('alice', 'tok-alice'), 'tools/list', { _meta: meta });
    expect(c.stdio.running()).toHaveLength(2);
    expect(await metricsText()).toMatch(/taskrouter_stdio_processes\{project="p",upstream="local"\} 2/);
  });

  it('stops an idle process and starts a fresh one on the next call', async () => {
    const c = make({ idleMs: 200 });
    await c.send(endpoint('alice'), 'tools/list', { _meta: meta });
    const [first] = c.stdio.running();
    await until(() => c.stdio.running().length === 0);
    await until(() => !alive(first?.pid));
    await c.send(endpoint('alice'), 'tools/list', { _meta: meta });
    expect(c.stdio.running()[0]?.pid).not.toBe(first?.pid);
  });

  it('a call arriving while an idle process is being stopped gets a fresh process, not an error', async () => {
    // A server that answers, and takes a second to exit once told to stop (its stdin closed, SIGTERM).
    const slowExit = [
      "require('readline').createInterface({ input: process.stdin }).on('line', (l) => {",
      '  const m = JSON.parse(l); if (m.id === undefined) return;',
      "  const result = m.method === 'initialize' ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'slow-exit', version: '1' } } : { tools: [{ name: 't', inputSchema: { type: 'object' } }] };",
      "  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) + '\\n');",
      '});',
      'setInterval(() => {}, 1000);',
      "process.on('SIGTERM', () => setTimeout(() => process.exit(0), 1000));",
    ].join('\n');
    const c = make({
      idleMs: 200,
      catalog: { slowexit: { command: process.execPath, args: ['-e', slowExit] } },
    });
    const slow = { ...endpoint('alice'), url: 'stdio:slowexit' };
    await c.send(slow, 'tools/list', { _meta: meta });
    const [first] = c.stdio.running();
    const stopped = logs.length;
    await until(() => logs.slice(stopped).some((l) => /idle; stopped/.test(l)));
    expect(alive(first?.pid)).toBe(true);
    // Its session is still the adapter's: the message finds the process stopping, and a new one answers.
    const again = await c.send(slow, 'tools/list', { _meta: meta });
    expect(again.kind === 'result' && again.result.tools).toEqual([expect.objectContaining({ name: 't' })]);
    const pids = c.stdio.running().map((r) => r.pid);
    expect(pids).toHaveLength(1);
    expect(pids[0]).not.toBe(first?.pid);
    await until(() => !alive(first?.pid));
    expect(c.stdio.running().map((r) => r.pid)).toEqual(pids);
  });

  it('restarts a crashed process: the next call gets a fresh session on a fresh process', async () => {
    const c = make();
    await c.send(endpoint('alice'), 'tools/list', { _meta: meta });
    const [first] = c.stdio.running();
    process.kill(first?.pid ?? -1, 'SIGKILL');
    await until(() => c.stdio.running().length === 0);
    const echo = await c.send(endpoint('alice'), 'tools/call', {
      name: 'echo',
      arguments: { message: 'again' },
      _meta: meta,
    });
    expect(text(echo)).toContain('again');
    expect(c.stdio.running()[0]?.pid).not.toBe(first?.pid);
    expect(logs.some((l) => /exited \(SIGKILL\)/.test(l))).toBe(true);
    expect(await metricsText()).toMatch(
      /taskrouter_stdio_restarts_total\{project="p",upstream="local"\} [1-9]/,
    );
  });

  it('refuses a process past the per-replica cap with an error naming the setting', async () => {
    const c = make({ maxProcesses: 1 });
    await c.send(endpoint('alice'), 'tools/list', { _meta: meta });
    await expect(c.send(endpoint('bob'), 'tools/list', { _meta: meta })).rejects.toThrow(
      /maximum of 1 local processes \(stdio\.maxProcesses\)/,
    );
  });

  it('refuses an address the catalog does not have, and stops every process at close', async () => {
    const c = make();
    await expect(
      c.send({ ...endpoint('alice'), url: 'stdio:nothing' }, 'tools/list', { _meta: meta }),
    ).rejects.toThrow(/"nothing" is not in this gateway's catalog/);
    await c.send(endpoint('alice'), 'tools/list', { _meta: meta });
    const [proc] = c.stdio.running();
    await c.close();
    expect(alive(proc?.pid)).toBe(false);
  });
});

describe('faulty local servers', () => {
  let client: UpstreamClient;
  const logs: string[] = [];
  afterEach(async () => {
    await client?.close();
  });
  const make = (over: Record<string, unknown> = {}) => {
    logs.length = 0;
    client = new UpstreamClient({
      stdio: { config: config(over), log: (_d, m) => logs.push(m) },
      timeoutMs: 20_000,
    });
    return client;
  };
  const at = (entry: string): UpstreamEndpoint => ({
    ...endpoint('alice', 'tok-secret-alice'),
    url: `stdio:${entry}`,
  });

  it('garbage on stdout fails the call clearly and stops the process', async () => {
    const c = make();
    await expect(c.send(at('garbage'), 'tools/list', { _meta: meta })).rejects.toThrow(
      /wrote something other than JSON-RPC to stdout/,
    );
    await until(() => c.stdio.running().length === 0);
  });

  it('a process that exits in the middle of a call fails it clearly; the next call gets a fresh process', async () => {
    const c = make();
    await c.send(at('quitter'), 'tools/list', { _meta: meta });
    const [first] = c.stdio.running();
    await expect(
      c.send(at('quitter'), 'tools/call', { name: 'quit', arguments: {}, _meta: meta }),
    ).rejects.toThrow(/exited|gone/);
    await until(() => !alive(first?.pid));
    const listed = await c.send(at('quitter'), 'tools/list', { _meta: meta });
    expect(listed.kind === 'result' && listed.result.tools).toEqual([
      expect.objectContaining({ name: 'quit' }),
    ]);
    expect(c.stdio.running()[0]?.pid).not.toBe(first?.pid);
  });

  it('a server that never answers initialize is given up; the next call gets a fresh process', async () => {
    const c = make({ startTimeoutMs: 300 });
    await expect(c.send(at('silent'), 'tools/list', { _meta: meta })).rejects.toThrow(
      /did not answer within 300 ms/,
    );
    await until(() => c.stdio.running().length === 0);
    const pids = new Set<number | undefined>();
    const next = c.send(at('silent'), 'tools/list', { _meta: meta });
    await until(() => c.stdio.running().length === 1);
    pids.add(c.stdio.running()[0]?.pid);
    await expect(next).rejects.toThrow(/did not answer/);
    expect(pids.size).toBe(1);
  });

  it('a flood of stderr is logged within its budget, the credential redacted', async () => {
    const c = make({ startTimeoutMs: 1_500, stderrBytesPerMinute: 4_096 });
    await expect(c.send(at('flood'), 'tools/list', { _meta: meta })).rejects.toThrow(/did not answer/);
    const logged = logs.filter((l) => l.startsWith('stdio: ') && !/started|exited|idle/.test(l));
    expect(logged.join('').length).toBeLessThan(4_096 + 2_000);
    expect(logs.join('\n')).not.toContain('tok-secret-alice');
    expect(logs.join('\n')).toContain('token is [redacted]');
  });

  it('a process over its memory limit fails clearly, and the gateway goes on', async () => {
    const c = make({
      startTimeoutMs: 300,
      catalog: {
        everything: {
          command: process.execPath,
          args: [EVERYTHING, 'stdio'],
          limits: { memoryBytes: 64 * 1024 * 1024 },
        },
      },
    });
    await expect(c.send(at('everything'), 'tools/list', { _meta: meta })).rejects.toThrow(
      /local process (exited|has gone)/,
    );
    await expect(c.send(at('silent'), 'tools/list', { _meta: meta })).rejects.toThrow(
      /did not answer|has gone|exited/,
    );
  }, 60_000);

  it('no process outlives a gateway killed with SIGKILL (setpriv --pdeathsig)', async () => {
    const spec = config().catalog.everything!;
    const launch = launchSpec(spec, checkStdioUrl(config().catalog, 'stdio:everything'), undefined);
    expect(launch.command).toBe('/usr/bin/setpriv');
    // A stand-in gateway: spawns the launch as the transport does, prints the child's pid, then waits.
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `const c = require('child_process').spawn(${JSON.stringify(launch.command)}, ${JSON.stringify(launch.args)}, { stdio: 'pipe' }); console.log(c.pid); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const pid = await new Promise<number>((resolve) =>
      parent.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
    );
    await until(() => alive(pid));
    parent.kill('SIGKILL');
    await until(() => !alive(pid));
    expect(alive(pid)).toBe(false);
  });
});
