/**
 * `npm start` keeps its promise: on an empty data directory it starts everything and prints a curl
 * sequence that, pasted into a shell, creates a task and reads its result.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getFreePort } from '../../src/tooling/processes';

const root = path.join(__dirname, '../..');
let child: ChildProcess | undefined;
let dataDir: string;

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

test('the printed curl sequence creates a task and reads its completed result', async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-demo-'));
  const env = {
    ...process.env,
    PORT: String(await getFreePort()),
    HEALTH_PORT: String(await getFreePort()),
    UPSTREAM_PORT: String(await getFreePort()),
    TEMPORAL_PORT: String(await getFreePort()),
    TASKROUTER_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  };
  child = spawn(process.execPath, ['--import', 'tsx', 'src/main/start.ts'], {
    cwd: root,
    env,
    stdio: 'pipe',
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 90_000;
  while (!out.includes('Press Ctrl+C to stop.')) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`npm start did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  // The printed shell lines, as a user would paste them.
  const create = out.slice(out.indexOf('TR_TOKEN='), out.indexOf('echo "$TASK"') + 'echo "$TASK"'.length);
  const pollStart = out.indexOf('curl', out.indexOf('Poll it'));
  const poll = out.slice(pollStart, out.indexOf("}}}}'", pollStart) + 5);
  const script = `set -e\n${create}\nfor i in $(seq 1 60); do R=$(${poll}); case "$R" in *'"status":"completed"'*) echo "$R"; exit 0;; esac; sleep 0.5; done; echo "$R"; exit 1`;
  const result = execFileSync('bash', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
  expect(result).toContain('"status":"completed"');
  expect(result).toContain('Computed demo in 10s');

  // The printed dashboard address and token open a session that shows the task.
  const dashboard = /Dashboard: +(\S+)/.exec(out)?.[1] ?? '';
  const token = /TR_TOKEN=(\S+)/.exec(out)?.[1] ?? '';
  const page = await fetch(dashboard);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('TaskRouter dashboard');
  const origin = new URL(dashboard).origin;
  const session = await fetch(`${origin}/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  expect(session.status).toBe(200);
  const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const tasks = await fetch(`${origin}/v1/projects/demo/tasks?group=completed`, { headers: { cookie } });
  const body = (await tasks.json()) as { tasks: Array<{ tool: string; status: string }> };
  expect(body.tasks).toEqual([expect.objectContaining({ tool: 'slow_compute', status: 'completed' })]);
}, 180_000);
