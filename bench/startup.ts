/**
 * `npm run bench:startup [-- --runs 5 --old-root DIR]`
 *
 * Process start to ready, for the production entry point (`node dist/src/main/serve.js`, built first
 * when dist/ is missing or stale) and, side by side in the same run, the way it ran before the build
 * (`node --import tsx src/main/serve.ts`: TypeScript through tsx, workflow code bundled by webpack at
 * start). Starts its own in-memory Temporal dev server; each start gets a fresh task queue, a free port
 * and its own SQLite file, migrated by an untimed warm-up start, as on a restart. Scenarios:
 *
 * - `serve worker`: spawn until the worker polls (a workflow poller on its task queue in
 *   DescribeTaskQueue, asked every 20 ms);
 * - `serve api`: spawn until `GET /healthz` answers 200;
 * - `serve all`: both;
 * - invalid config: spawn until the process has exited (non-zero, naming the file and the field);
 *
 * then, for the first three, SIGTERM until exit (a graceful stop with nothing running). Each figure is
 * the median of --runs starts; old and new alternate, so machine load hits both alike. Prints a table,
 * the start-up phases the new entry point logs (`startupMs`, medians), and, last, one JSON line.
 * Leaves no processes behind.
 *
 * By default both sides run this checkout's code, so the comparison isolates the entry point (compiled
 * code and the prebuilt workflow bundle). `--old-root DIR` runs the old side from another checkout with
 * its own node_modules, e.g. the commit before the build existed, for a before/after of the whole change.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { GATEWAY_NODE_FLAGS } from '../src/config/node-flags';
import { findRepoRoot } from '../src/config/paths';
import { getFreePort } from '../src/tooling/processes';
import type { DevServer } from '../src/tooling/temporal-dev-server';
import { gatewayBasics, note, onCleanup, runBench, startTemporal, tempDir } from './env';
import { percentile, ratio, round, sleep, table } from './support';

const ROOT = findRepoRoot(__dirname);
const MODES = {
  old: ['--import', 'tsx', 'src/main/serve.ts'],
  new: [...GATEWAY_NODE_FLAGS, 'dist/src/main/serve.js'],
} as const;
type Mode = keyof typeof MODES;
interface Options {
  runs: number;
  /** Where each side runs from. */
  roots: Record<Mode, string>;
}
const SCENARIOS = ['worker', 'api', 'all', 'invalid config'] as const;
type Scenario = (typeof SCENARIOS)[number];
/** The targets for the new entry point, in ms. */
const TARGET: Record<Scenario, number> = { worker: 2000, api: 1000, all: 2000, 'invalid config': 1000 };
const POLL_MS = 20;

interface Sample {
  readyMs: number;
  stopMs?: number;
  phases?: Record<string, number>;
}

interface Ctx {
  temporal: DevServer;
  connection: Connection;
  dir: string;
  roots: Record<Mode, string>;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string', default: '5' },
      'old-root': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write('usage: npm run bench:startup -- [--runs 5] [--old-root DIR]\n');
    process.exit(0);
  }
  const old = values['old-root'] === undefined ? ROOT : path.resolve(values['old-root']);
  return { runs: Number(values.runs), roots: { old, new: ROOT } };
}

/** A configuration file for one start: its own task queue, port and SQLite file (`db` names it). */
async function configFile(ctx: Ctx, scenario: Scenario, db: string) {
  const port = await getFreePort();
  const basics = gatewayBasics(ctx.temporal, ctx.dir);
  const config = {
    ...basics,
    http: { host: '127.0.0.1', port: scenario === 'invalid config' ? 'eighty' : port },
    store: { sqliteFile: path.join(ctx.dir, `${db}.db`) },
  };
  const file = path.join(ctx.dir, `config-${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify(config));
  return { file, port, taskQueue: basics.temporal.taskQueue };
}

async function workerPolls(ctx: Ctx, taskQueue: string): Promise<boolean> {
  const { pollers } = await ctx.connection.workflowService.describeTaskQueue({
    namespace: ctx.temporal.namespace,
    taskQueue: { name: taskQueue, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return pollers.length > 0;
}

async function apiAnswers(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
  } catch {
    return false;
  }
}

/** One start of `serve` in `mode`: spawn → ready (→ SIGTERM → exit). */
async function measure(ctx: Ctx, mode: Mode, scenario: Scenario): Promise<Sample> {
  const role = scenario === 'invalid config' ? 'all' : scenario;
  const { file, port, taskQueue } = await configFile(ctx, scenario, `${mode}-${role}`);
  const env: NodeJS.ProcessEnv = { ...process.env, TASKROUTER_CONFIG: file, LOG_LEVEL: 'info' };
  delete env['TASKROUTER_ENCRYPTION_KEYS'];
  delete env['TASKROUTER_ADMIN_TOKEN'];
  const start = performance.now();
  const child = spawn(process.execPath, [...MODES[mode], role], {
    cwd: ctx.roots[mode],
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stopChild = () => stopProcess(child);
  onCleanup(`serve ${role} (${mode})`, stopChild);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  if (scenario === 'invalid config') {
    const code = await exited;
    const readyMs = performance.now() - start;
    // The file name in the message is new; a checkout from before (--old-root) only names the field.
    if (code === 0 || !out.includes('http.port') || (mode === 'new' && !out.includes(file)))
      throw new Error(`invalid config (${mode}): exit ${code}, output:\n${out}`);
    return { readyMs };
  }
  let api = role === 'worker';
  let worker = role === 'api';
  const deadline = Date.now() + 120_000;
  while (!(api && worker)) {
    if (child.exitCode !== null) throw new Error(`serve ${role} (${mode}) exited:\n${out}`);
    if (Date.now() > deadline) throw new Error(`serve ${role} (${mode}) not ready after 120 s:\n${out}`);
    [api, worker] = await Promise.all([api || apiAnswers(port), worker || workerPolls(ctx, taskQueue)]);
    if (!(api && worker)) await sleep(POLL_MS);
  }
  const readyMs = performance.now() - start;
  const stopping = performance.now();
  child.kill('SIGTERM');
  const code = await exited;
  const stopMs = performance.now() - stopping;
  if (code !== 0) throw new Error(`serve ${role} (${mode}) exited ${code} on SIGTERM:\n${out}`);
  const started = out.split('\n').find((l) => l.includes('"taskrouter started"'));
  const phases = started ? (JSON.parse(started) as { startupMs?: Record<string, number> }).startupMs : {};
  return { readyMs, stopMs, ...(phases && { phases }) };
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

const median = (xs: number[]): number => round(percentile(xs, 50), 0);

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  note('building dist/ if missing or stale (npm run build)');
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-needed'], { cwd: ROOT, stdio: 'inherit' });
  const temporal = await startTemporal();
  const connection = await Connection.connect({ address: temporal.address });
  onCleanup('temporal client', () => connection.close());
  const ctx: Ctx = { temporal, connection, dir: tempDir(), roots: opts.roots };
  if (opts.roots.old !== ROOT) note(`old side runs from ${opts.roots.old}`);

  // Untimed: migrates each mode's SQLite files and warms the file cache (and tsx's transform cache).
  for (const mode of ['old', 'new'] as const) {
    for (const scenario of ['worker', 'api', 'all'] as const) await measure(ctx, mode, scenario);
  }
  const samples: Record<Mode, Record<Scenario, Sample[]>> = {
    old: { worker: [], api: [], all: [], 'invalid config': [] },
    new: { worker: [], api: [], all: [], 'invalid config': [] },
  };
  for (let run = 0; run < opts.runs; run++) {
    for (const scenario of SCENARIOS) {
      // Alternate which side goes first, so neither always runs right after the other.
      const order: Mode[] = run % 2 === 0 ? ['old', 'new'] : ['new', 'old'];
      for (const mode of order) samples[mode][scenario].push(await measure(ctx, mode, scenario));
    }
    note(`run ${run + 1}/${opts.runs} done`);
  }

  const results = SCENARIOS.map((scenario) => {
    const pick = (mode: Mode, key: 'readyMs' | 'stopMs') =>
      median(samples[mode][scenario].map((s) => s[key] ?? Number.NaN));
    const oldMs = pick('old', 'readyMs');
    const newMs = pick('new', 'readyMs');
    return {
      scenario,
      oldMs,
      newMs,
      speedup: ratio(oldMs, newMs, 1),
      targetMs: TARGET[scenario],
      pass: newMs <= TARGET[scenario],
      oldStopMs: pick('old', 'stopMs'),
      newStopMs: pick('new', 'stopMs'),
      readyMs: {
        old: samples.old[scenario].map((s) => round(s.readyMs, 0)),
        new: samples.new[scenario].map((s) => round(s.readyMs, 0)),
      },
    };
  });

  const out: string[] = [''];
  out.push(
    `bench:startup  median of ${opts.runs} starts each, old (tsx + webpack at start) and new (node dist/) ` +
      `alternating  node ${process.version}, ${os.cpus().length} cpus, load ${os.loadavg()[0]?.toFixed(1)}`,
  );
  out.push('');
  const rows: Array<Array<string | number>> = [
    ['start → ready (ms)', 'old', 'new', 'old/new', 'target', '', 'stop old', 'stop new'],
  ];
  for (const r of results) {
    const stop = r.scenario === 'invalid config' ? ['', ''] : [r.oldStopMs, r.newStopMs];
    rows.push([
      `serve ${r.scenario}`,
      r.oldMs,
      r.newMs,
      r.speedup,
      `<= ${r.targetMs}`,
      r.pass ? 'PASS' : 'FAIL',
      ...stop,
    ]);
  }
  out.push(table(rows));
  out.push('');
  // What the new entry point reports about itself (ms; `configured` counts from process start).
  const roles = ['worker', 'api', 'all'] as const;
  const phases: Record<string, Record<string, number>> = {};
  for (const role of roles) {
    for (const name of new Set(samples.new[role].flatMap((x) => Object.keys(x.phases ?? {})))) {
      const xs = samples.new[role].flatMap((x) => x.phases?.[name] ?? []);
      (phases[name] ??= {})[role] = median(xs);
    }
  }
  out.push(
    table([
      ['phases, new (median ms)', ...roles],
      ...Object.entries(phases).map(([name, byRole]) => [name, ...roles.map((r) => byRole[r] ?? '')]),
    ]),
  );
  process.stdout.write(`${out.join('\n')}\n`);
  process.stdout.write(
    `${JSON.stringify({ bench: 'startup', runs: opts.runs, oldRoot: opts.roots.old, loadavg: os.loadavg(), results, phases })}\n`,
  );
}

runBench(main);
