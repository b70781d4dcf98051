/**
 * `serve.ts` as a real child process: a configuration it cannot use ends it at once with the file and the
 * offending fields on stderr; SIGTERM lets a running request finish, refuses new connections meanwhile,
 * and exits 0. The store is a SQLite file (the database plays no part here). And the API role's modules
 * never load the Temporal worker.
 */
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { generateKey } from '../../src/store/cipher';
import { getFreePort } from '../../src/tooling/processes';
import { McpTestClient } from '../helpers/mcp-client';
import { killChildren, REPO_ROOT, spawnServe, waitFor, writeServeConfig } from '../helpers/serve-process';

let dir: string;
let upstream: ExampleUpstream;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-serve-'));
  upstream = await startExampleUpstream({ pollIntervalMs: 100 });
});

afterAll(async () => {
  await killChildren(children);
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `serve.ts all` to its exit with TASKROUTER_CONFIG=file. */
function serveUntilExit(file: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'src/main/serve.ts', 'all'],
      { cwd: REPO_ROOT, env: { ...process.env, TASKROUTER_CONFIG: file }, timeout: 60_000 },
      (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
    );
  });
}

test('a configuration it cannot use ends serve at once, naming the file and each offending field', async () => {
  const missing = path.join(dir, 'missing.json');
  const notJson = path.join(dir, 'not-json.json');
  writeFileSync(notJson, '{ "http": { "port": 8080, } }');
  const invalid = path.join(dir, 'invalid.json');
  writeFileSync(
    invalid,
    JSON.stringify({
      // Nothing listens here: validation must come before any connection attempt.
      temporal: { address: '127.0.0.1:1' },
      http: { port: 'eighty' },
      encryption: { activeKeyId: 'k1', keys: { k1: generateKey() } },
      projects: [{ slug: 'Bad Slug!', upstreams: [{ alias: 'x', url: 'http://h/mcp' }] }],
    }),
  );
  const [a, b, c] = await Promise.all([missing, notJson, invalid].map(serveUntilExit));

  expect(a?.code).toBe(1);
  expect(a?.stderr).toContain(missing);
  expect(b?.code).toBe(1);
  expect(b?.stderr).toContain(notJson);
  expect(b?.stderr).toMatch(/not valid JSON/);
  expect(c?.code).toBe(1);
  expect(c?.stderr).toContain(invalid);
  expect(c?.stderr).toMatch(/→ at http\.port/);
  expect(c?.stderr).toMatch(/→ at projects\[0\]\.slug/);
}, 120_000);

test('SIGTERM lets a running request finish, refuses new connections meanwhile, and exits 0', async () => {
  const port = await getFreePort();
  const store = { sqliteFile: path.join(dir, 'taskrouter.db') };
  const configFile = writeServeConfig(dir, { port, upstreamUrl: upstream.url, store });
  const child = spawnServe(configFile, 'info', ['ignore', 'pipe', 'pipe']);
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitFor(
    () => out.includes('taskrouter started'),
    () => `serve did not start:\n${out}`,
  );

  const client = new McpTestClient(`http://127.0.0.1:${port}/v1/mcp/demo`);
  // A task keeps a watch activity running on the worker while the process stops.
  const task = await client.callTool('slow_compute', { seconds: 30, label: 'background' });
  expect(task.body.result?.resultType).toBe('task');
  // An ordinary call the upstream answers after 3 s.
  const calls = () => upstream.stats.requests['tools/call'] ?? 0;
  const before = calls();
  const slow = client.callTool('slow_compute', { seconds: 3, label: 'drained' }, { tasks: false });
  await waitFor(
    () => calls() > before,
    () => 'the slow call did not reach the upstream',
  );

  child.kill('SIGTERM');
  await waitFor(
    () => out.includes('shutting down'),
    () => `no shutdown logged:\n${out}`,
  );
  await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  const reply = await slow;
  expect(reply.status).toBe(200);
  expect(JSON.stringify(reply.body.result)).toContain('drained');
  expect(await exited).toBe(0);
}, 120_000);

test('the API role loads no Temporal worker code', async () => {
  const script =
    "require('./src/main/runtime'); require('./src/main/api-role'); " +
    'const loaded = Object.keys(require.cache).filter((m) => /node_modules.@temporalio.(worker|core-bridge)/.test(m)); ' +
    "require('./src/main/worker-role'); " +
    'const worker = Object.keys(require.cache).some((m) => /node_modules.@temporalio.worker/.test(m)); ' +
    'process.stdout.write(JSON.stringify({ loaded, worker }));';
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', '-e', script], { cwd: REPO_ROOT }, (err, out) =>
      err ? reject(err) : resolve(out),
    ),
  );
  // The check itself works: the worker role does load it.
  expect(JSON.parse(stdout)).toEqual({ loaded: [], worker: true });
}, 60_000);
