/**
 * Quick figures for findings 4 and 5 of issue 22 (not the neighbours benchmark): a gateway process
 * (`serve all` from the sources) with two anonymous projects, `noisy` and `victim`, on one hostile
 * upstream address. `node --import tsx bench/quick-fairness.ts [meta|flood|slots|burst]`:
 *   meta:  bodies of costly shapes (the 162,000-key `_meta`, a string of the same size, the costliest
 *          allowed shape, a million empty objects), one and 16 at once; another tenant's longest wait
 *          on `/healthz` meanwhile
 *   flood: 200 concurrent noisy calls held by the upstream; the victim's call on the same address
 *   slots: 210 noisy task creations held in their first call; the victim's creation
 *   burst: 300 quick noisy creations at once; the victim's creation latency
 * FAIR_CONFIG (JSON) is merged into the gateway's configuration (e.g. wide per-caller shares, to see the
 * per-project ones); FAIR_TEMPORAL_DYNAMIC (JSON) is extra dynamic config of the Temporal dev server.
 * One run each, on whatever else the machine is doing: figures for a report, not a regression gate.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent } from 'undici';
import { GATEWAY_NODE_FLAGS } from '../src/config/node-flags';
import { getFreePort } from '../src/tooling/processes';
import { META, PROTOCOL_VERSION } from '../src/protocol';
import { startHostileUpstream } from '../test/helpers/hostile-upstream';
import { resolveTemporalCli } from '../src/tooling/temporal-cli';
import { startDevServer } from '../src/tooling/temporal-dev-server';
import { stopProcessByPid } from '../src/tooling/processes';
import { SEARCH_ATTRIBUTES } from '../src/workflows/search-attributes';
import { gatewayBasics, note, onCleanup, runBench, tempDir } from './env';

/** The dev server, with FAIR_TEMPORAL_DYNAMIC (JSON) as extra dynamic config. */
async function startTemporal() {
  const cliPath = await resolveTemporalCli({ install: true, log: note });
  const temporal = await startDevServer({
    cliPath,
    namespace: 'taskrouter-bench',
    searchAttributes: SEARCH_ATTRIBUTES,
    dynamicConfig: JSON.parse(process.env['FAIR_TEMPORAL_DYNAMIC'] ?? '{}') as Record<string, unknown>,
  });
  onCleanup('temporal dev server', async () => {
    await temporal.stop();
    await stopProcessByPid(temporal.pid);
  });
  note(`temporal dev server pid ${temporal.pid} at ${temporal.address}`);
  return temporal;
}
import { McpHttpClient, sleep } from './support';

const only = process.argv[2];

runBench(async () => {
  const temporal = await startTemporal();
  const dir = tempDir();
  /** Held calls: released by `release()`. Victim calls (arguments.who === 'victim') are answered at once. */
  let held: Array<() => void> = [];
  let seenVictimWhileHeld = false;
  const upstream = await startHostileUpstream({
    tasks: true,
    onRequest: (_req, res, m) => {
      const args = (m.params['arguments'] ?? {}) as Record<string, unknown>;
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: m.id,
            result: { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] },
          }),
        );
      };
      if (args['who'] === 'victim') {
        if (held.length > 0) seenVictimWhileHeld = true;
        answer();
      } else if (args['hold'] === true) held.push(answer);
      else answer();
    },
  });
  onCleanup('upstream', () => upstream.close());
  const release = () => {
    const h = held;
    held = [];
    for (const f of h) f();
  };
  const port = await getFreePort();
  const basics = gatewayBasics(temporal, dir);
  const extra = JSON.parse(process.env['FAIR_CONFIG'] ?? '{}') as Record<string, unknown>;
  const config = {
    ...basics,
    http: { ...basics.http, port },
    projects: ['noisy', 'victim'].map((slug) => ({
      slug,
      authMode: 'anonymous',
      namespacing: false,
      cache: { enabled: false },
      upstreams: [{ alias: 'up', url: upstream.url }],
    })),
    ...extra,
  };
  const configFile = path.join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify(config));
  const child = spawn(
    process.execPath,
    [...GATEWAY_NODE_FLAGS, '--import', 'tsx', 'src/main/serve.ts', 'all'],
    {
      cwd: path.join(__dirname, '..'),
      env: { ...process.env, TASKROUTER_CONFIG: configFile, LOG_LEVEL: 'error' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  onCleanup('gateway', async () => {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) break;
    } catch {
      /* not yet */
    }
    await sleep(200);
  }
  const dispatcher = new Agent({ connections: 1000, headersTimeout: 300_000, bodyTimeout: 300_000 });
  const client = (slug: string, tasks: boolean) =>
    new McpHttpClient(`${base}/v1/mcp/${slug}`, dispatcher, { tasks });
  const victim = client('victim', false);
  const victimTasks = client('victim', true);
  const noisy = client('noisy', false);
  const noisyTasks = client('noisy', true);
  note('gateway ready');
  // Warm both projects (discovery, catalog).
  for (const c of [victim, noisy, victimTasks, noisyTasks]) {
    const r = await c.callTool('attack', { who: 'victim' });
    note(`warm ${r.status} ${JSON.stringify(r.error ?? {})}`);
  }
  const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
    const s = performance.now();
    const r = await f();
    return [r, Math.round(performance.now() - s)];
  };
  const codes = (replies: Array<{ status: number; error?: { code: number } }>) => {
    const m = new Map<string, number>();
    for (const r of replies) {
      const k = `${r.status}${r.error ? ` ${r.error.code}` : ''}`;
      m.set(k, (m.get(k) ?? 0) + 1);
    }
    return JSON.stringify(Object.fromEntries(m));
  };

  if (!only || only === 'meta') {
    const envelope = { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} };
    const wrap = (args: unknown, meta: Record<string, unknown> = {}) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'attack', arguments: args, _meta: { ...envelope, ...meta } },
      });
    const attackMeta: Record<string, unknown> = {};
    for (let i = 0; i < 162_000; i++) attackMeta[`k${String(i).padStart(6, '0')}`] = 'vvvvvvvvv';
    /** The costliest shape the default limits allow: 19,980 members in two objects of distinct names. */
    const allowedKeys = Array.from({ length: 2 }, (_, j) =>
      Object.fromEntries(
        Array.from({ length: 9_990 }, (_, i) => [`k${j}-${String(i).padStart(6, '0')}`, 'vvvvvvvvv']),
      ),
    );
    const bodies: Record<string, string> = {
      'meta 162,000 keys': wrap({}, attackMeta),
      'string, same size': wrap({ s: 'x'.repeat(3_500_000) }),
      'args 19,980 keys (allowed)': wrap({ rows: allowedKeys }),
      'args 1,100,000 empty objects':
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"attack","arguments":{"rows":[' +
        Array(1_100_000).fill('{}').join(',') +
        ']},"_meta":' +
        JSON.stringify(envelope) +
        '}}',
    };
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      'mcp-protocol-version': PROTOCOL_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': 'attack',
    };
    const attack = async (body: string) => {
      try {
        const res = await fetch(`${base}/v1/mcp/noisy`, { method: 'POST', headers, body });
        return { status: res.status, text: (await res.text()).slice(0, 120) };
      } catch (err) {
        return { status: 0, text: String(err) };
      }
    };
    for (const [name, body] of Object.entries(bodies)) {
      for (const n of [1, 16]) {
        note(`${name} x${n}`);
        let stop = false;
        let maxWait = 0;
        let probeErrors = 0;
        const probe = (async () => {
          while (!stop) {
            const [, ms] = await timed(() =>
              fetch(`${base}/healthz`)
                .then((r) => r.text())
                .catch(() => void probeErrors++),
            );
            maxWait = Math.max(maxWait, ms);
            await sleep(5);
          }
        })();
        await sleep(100);
        const [replies, ms] = await timed(() => Promise.all(Array.from({ length: n }, () => attack(body))));
        stop = true;
        await probe;
        console.log(
          `${name} (${(body.length / 1e6).toFixed(1)} MB) x${n}: all answered in ${ms} ms, victim /healthz max wait ${maxWait} ms (${probeErrors} failed); answer ${replies[0]?.status} ${replies[0]?.text.slice(0, 110)}`,
        );
      }
    }
  }

  if (!only || only === 'flood') {
    note('flood');
    seenVictimWhileHeld = false;
    const flood = Array.from({ length: 200 }, () => noisy.callTool('attack', { hold: true }));
    await sleep(3000);
    const heldNow = held.length;
    const [v, ms] = await timed(() => victim.callTool('attack', { who: 'victim' }));
    const heldThen = held.length;
    release();
    const replies = await Promise.all(flood);
    // Refused ones answered early; the rest after release.
    console.log(
      `flood: upstream held ${heldNow} (then ${heldThen}); victim ${v.status}${v.error ? ` ${v.error.code}` : ''} in ${ms} ms, seen upstream while held: ${seenVictimWhileHeld}; noisy answers ${codes(replies)}`,
    );
    release();
  }

  if (!only || only === 'slots') {
    note('slots');
    const creations = Array.from({ length: 210 }, () => noisyTasks.callTool('attack', { hold: true }));
    await sleep(4000);
    const heldNow = held.length;
    const [v, ms] = await timed(() => victimTasks.callTool('attack', { who: 'victim' }));
    release();
    const replies = await Promise.all(creations);
    release();
    console.log(
      `slots: upstream held ${heldNow} first calls; victim creation ${v.status}${v.error ? ` ${v.error.code} ${v.error.message.slice(0, 80)}` : ''} in ${ms} ms; noisy answers ${codes(replies)}`,
    );
  }

  if (!only || only === 'burst') {
    note('burst');
    const [, unloaded] = await timed(() => victimTasks.callTool('attack', { who: 'victim' }));
    const burst = Array.from({ length: 300 }, () => noisyTasks.callTool('attack', {}));
    await sleep(200);
    const lat: number[] = [];
    for (let i = 0; i < 5; i++) {
      const [, ms] = await timed(() => victimTasks.callTool('attack', { who: 'victim' }));
      lat.push(ms);
    }
    const replies = await Promise.all(burst);
    console.log(
      `burst: victim unloaded ${unloaded} ms, during burst ${lat.join(', ')} ms; noisy answers ${codes(replies)}`,
    );
  }
  await dispatcher.close();
});
