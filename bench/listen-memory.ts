/**
 * `npm run bench:listen-memory [-- --streams 4000]`
 *
 * Idle `subscriptions/listen` streams one API process holds per GiB of memory (issue "protocol
 * completeness and hostile input", figures). Starts its own Temporal dev server, an example upstream and
 * `serve api` as a separate process (its memory is the only one measured) with a project of as many API
 * keys as the per-caller cap (16 streams) requires; opens `--streams` listens, one connection each, waits
 * for every acknowledgement, and reads the process's resident memory (VmRSS) before and after. Prints the
 * figures and, last, one JSON line. Linux only (/proc).
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startExampleUpstream } from '../examples/upstream/server';
import { GATEWAY_NODE_FLAGS } from '../src/config/node-flags';
import { findRepoRoot } from '../src/config/paths';
import { META, PROTOCOL_VERSION } from '../src/protocol';
import { getFreePort } from '../src/tooling/processes';
import { gatewayBasics, note, onCleanup, runBench, startTemporal, tempDir } from './env';
import { round, sleep } from './support';

const ROOT = findRepoRoot(__dirname);
const PER_CALLER = 16;

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (kb === undefined) throw new Error('no VmRSS');
  return Number(kb) * 1024;
}

/** Opens one listen stream as `key`; resolves once its acknowledgement arrived, with a close function. */
function listen(port: number, key: string): Promise<() => void> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'subscriptions/listen',
    params: {
      notifications: {},
      _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} },
    },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/mcp/listen',
        agent: false,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': PROTOCOL_VERSION,
          'mcp-method': 'subscriptions/listen',
          'content-length': String(Buffer.byteLength(body)),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          if (text.includes('notifications/subscriptions/acknowledged')) resolve(() => req.destroy());
          else if (text.includes('"error"')) reject(new Error(`listen refused: ${text}`));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { streams: { type: 'string', default: '4000' } } });
  const streams = Number(values.streams);
  const temporal = await startTemporal();
  const dir = tempDir();
  const upstream = await startExampleUpstream({ name: 'bench-listen-upstream' });
  onCleanup('upstream', () => upstream.close());
  const keys = Array.from(
    { length: Math.ceil(streams / PER_CALLER) },
    (_, i) => `trk_bench-listen-${String(i).padStart(24, '0')}`,
  );
  const bootstrap = path.join(dir, 'bootstrap.json');
  writeFileSync(
    bootstrap,
    JSON.stringify({
      teams: [{ slug: 'bench' }],
      projects: [
        {
          slug: 'listen',
          team: 'bench',
          namespacing: false,
          apiKeys: keys.map((key, i) => ({ name: `k${i}`, key })),
          upstreams: [{ alias: 'example', url: upstream.url }],
        },
      ],
    }),
  );
  const port = await getFreePort();
  const basics = gatewayBasics(temporal, dir);
  const configFile = path.join(dir, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      ...basics,
      http: { ...basics.http, port },
      bootstrapFile: bootstrap,
      // Thousands of streams on one project are the point here: above the per-project default (256).
      streams: { maxPerProject: streams },
    }),
  );
  // The gateway's Node flags, as production runs it: they size the young generation, and so the RSS measured.
  const child: ChildProcess = spawn(
    process.execPath,
    [...GATEWAY_NODE_FLAGS, '--import', 'tsx', 'src/main/serve.ts', 'api'],
    {
      cwd: ROOT,
      env: { ...process.env, TASKROUTER_CONFIG: configFile, LOG_LEVEL: 'error' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  onCleanup('gateway', async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error('gateway exited');
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await sleep(200);
  }
  const pid = child.pid as number;
  // Warm up the code paths (and the serving cache for every key), then let the heap settle.
  const warm = await Promise.all(keys.map((k) => listen(port, k)));
  for (const close of warm) close();
  await sleep(3000);
  const before = rssBytes(pid);
  const closes: Array<() => void> = [];
  for (let i = 0; i < streams; i += 200) {
    const batch = Array.from({ length: Math.min(200, streams - i) }, (_, j) =>
      listen(port, keys[Math.floor((i + j) / PER_CALLER)] as string),
    );
    closes.push(...(await Promise.all(batch)));
  }
  await sleep(3000);
  const after = rssBytes(pid);
  for (const close of closes) close();
  const perStream = (after - before) / streams;
  const perGiB = Math.floor(2 ** 30 / perStream);
  note(
    `${streams} idle listen streams: RSS ${round(before / 2 ** 20, 1)} MiB -> ${round(after / 2 ** 20, 1)} MiB, ` +
      `${round(perStream / 1024, 1)} KiB per stream, about ${perGiB} streams per GiB`,
  );
  process.stdout.write(
    `${JSON.stringify({ streams, rssBeforeBytes: before, rssAfterBytes: after, bytesPerStream: Math.round(perStream), streamsPerGiB: perGiB })}\n`,
  );
}

runBench(main);
