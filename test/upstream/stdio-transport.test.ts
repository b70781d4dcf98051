/**
 * Local upstreams over stdio (src/upstream/transport/stdio.ts) through the upstream client, with real
 * processes of `@modelcontextprotocol/server-everything` in stdio mode: calls, one process per
 * credential scope with the catalog's environment only, idle stop, crash and restart, the per-replica
 * cap, bad catalog references; and the catalog's pure parts.
 */
import { readFileSync } from 'node:fs';
import { StdioConfigSchema, checkStdioUrl, StdioReferenceError } from '../../src/config/stdio';
import { META, PROTOCOL_VERSION } from '../../src/protocol';
import type { UpstreamEndpoint } from '../../src/upstream/client';
import { UpstreamClient } from '../../src/upstream/client';
import { launchSpec, redact } from '../../src/upstream/transport/processes';

const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const meta = { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} };

function config(over: Record<string, unknown> = {}) {
  return StdioConfigSchema.parse({
    catalog: {
      everything: {
        command: process.execPath,
        args: [EVERYTHING, 'stdio'],
        env: { FIXED: 'fixed-value' },
        credentialEnv: 'UPSTREAM_TOKEN',
        settable: { root: { pattern: '[a-z0-9/.]+', under: '/srv/projects', required: false, env: 'ROOT' } },
      },
    },
    restartBackoffMs: 0,
    ...over,
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
