/**
 * `npm run test:cluster`: the production topology on this machine, under fire. The real Temporal server
 * (built from source at the version docker-compose.yml runs) on PostgreSQL, two API and two worker
 * replicas of the compiled gateway behind a round-robin proxy, the example upstream as its own process;
 * a few hundred tasks of every kind pushed through while API and worker replicas are killed with SIGKILL
 * at random and started again. Then every task is compared with the upstream's own records, the
 * gateway's `tasks/get` and the dashboard (checks.ts). Every replica also runs a stdio upstream (the
 * reference memory server as a local process, stdio.ts): calls through each API replica and hosted calls
 * on the workers succeed, and no stdio process outlives its replica's kill -9 or the run. Exits non-zero
 * on any lost, duplicated or orphaned task, any inconsistency, or any stdio finding. Not part of `npm test`; .ci/run runs it after the test suite.
 *
 * Environment: CLUSTER_TASKS (default 300), CLUSTER_CONCURRENCY (12), CLUSTER_NODE (the Node that runs
 * the gateway and the upstream; default this one), CLUSTER_KEEP_LOGS=1 keeps the run directory.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findPostgresBinDir, startPostgresDev, type PostgresDevServer } from '../../src/tooling/postgres';
import type { TemporalServerProcess } from '../../src/tooling/temporal-cluster';
import { ensureTemporalServer } from '../../src/tooling/temporal-server';
import { McpTestClient } from '../helpers/mcp-client';
import { adoptionFigure, type AdoptionFigure } from './adoption';
import { adoptUnanswered, check, type Figures } from './checks';
import type { Replica } from './fleet';
import { killTracked, track } from './fleet';
import { startRoundRobinProxy, type RoundRobinProxy } from './proxy';
import type { UpstreamProcess } from './stack';
import { checkNoneLeft, checkStdioCalm, seedGraph, stdioLane, stdioSetup, StdioRecord } from './stdio';
import {
  createGatewayDatabase,
  prepareGateway,
  PROJECT,
  setupSchema,
  startTemporal,
  startUpstream,
} from './stack';
import { REPO_ROOT } from './topology';
import type { Creation } from './workload';
import { newClient, planCreations, runCreation, runWorkload } from './workload';

const TASKS = Number(process.env['CLUSTER_TASKS'] ?? 300);
const CONCURRENCY = Number(process.env['CLUSTER_CONCURRENCY'] ?? 12);
const NODE = process.env['CLUSTER_NODE'] ?? process.execPath;
/** New creations start for this long once the storm begins; follow-ups and checks have their own limits. */
const START_WINDOW_MS = 210_000;
const FOLLOW_WINDOW_MS = 330_000;
const ADOPT_WINDOW_MS = 60_000;

const log = (msg: string): void => void process.stdout.write(`[cluster] ${msg}\n`);
const seconds = (ms: number): string => (ms / 1000).toFixed(0);

interface Kill {
  replica: string;
  atMs: number;
}

/**
 * Every 5–10 s one replica, API or worker, dies with SIGKILL and is started again 1–3 s later: a dozen
 * kills or more while the workload runs (about two minutes on two cores), often of a replica that is
 * still starting.
 */
async function storm(
  replicas: Replica[],
  kills: Kill[],
  stopped: () => boolean,
  t0: number,
  stdio: StdioRecord,
): Promise<void> {
  while (!stopped()) {
    const wait = 5_000 + Math.random() * 5_000;
    for (const until = Date.now() + wait; Date.now() < until && !stopped();) await sleep(250);
    if (stopped()) return;
    const victim = replicas[Math.floor(Math.random() * replicas.length)] as Replica;
    await stdio.killChecked(victim);
    kills.push({ replica: victim.name, atMs: Date.now() - t0 });
    log(`kill -9 ${victim.name} at ${seconds(Date.now() - t0)} s`);
    await sleep(1000 + Math.random() * 2000);
    await victim.start();
  }
}

/** A first task through the proxy, so the namespace and search attributes are in every cache. */
async function warmUp(client: McpTestClient, creations: Creation[]): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (let n = 0; Date.now() < deadline; n++) {
    const [c] = planCreations(1) as [Creation];
    c.id = `warmup${n}-${c.id}`;
    Object.assign(c, { kind: 'slow', tool: 'slow_compute', args: { seconds: 0, label: c.id } });
    creations.push(c);
    await runCreation(c, { client, deadline: Date.now() + 60_000, pollMs: 500 });
    if (c.outcome === 'task' && c.result?.['status'] === 'completed') return;
    if (c.error && c.error.code !== -31002)
      throw new Error(`warm-up refused: ${c.error.code} ${c.error.message}`);
    const seen = c.error
      ? `${c.error.code} ${c.error.message}`
      : JSON.stringify(c.result ?? {}).slice(0, 300);
    log(`warm-up ${n}: ${c.outcome ?? '?'} ${seen} ${c.problems.join('; ')}`);
    await sleep(2000);
  }
  throw new Error('no task completed through the cluster within 180 s');
}

function ensurePostgres(): void {
  if (findPostgresBinDir() !== undefined) return;
  execFileSync('bash', [path.join(REPO_ROOT, 'scripts/install-postgres.sh')], { stdio: 'inherit' });
}

function printFigures(
  f: Figures,
  kills: Kill[],
  elapsedMs: number,
  proxy: RoundRobinProxy,
  stdio: StdioRecord,
  adoption: AdoptionFigure,
): void {
  const line = (k: string, v: string | number): void => log(`  ${k.padEnd(34)} ${v}`);
  log('figures:');
  line('creations', f.creations);
  line('tasks (gateway task ids)', f.tasks);
  line('  of which found on the dashboard', f.adopted);
  line('told failed, nothing sent', f.toldFailed);
  line('told "may have been sent"', f.mayHaveSent);
  line('no answer (replica died)', f.unknown);
  line('upstream tasks the gateway let go', f.untracked);
  line('502s from the proxy', proxy.failedAfterSend);
  line('kills', `${kills.length} (${kills.map((k) => k.replica).join(', ')})`);
  line('lost', f.lost);
  line('duplicates', f.duplicates);
  line('orphans', f.orphans);
  line('inconsistent', f.inconsistent);
  line('seconds', seconds(elapsedMs));
  line('2 s tasks that adopted the API row', `${adoption.adopted} of ${adoption.sampled} read`);
  const s = stdio.storm;
  line('stdio calls in the storm', `${s.ok}/${s.calls} ordinary, ${s.hostedCompleted}/${s.hosted} hosted ok`);
  line('stdio calls after it, per API', JSON.stringify(stdio.apiCalls));
  line('stdio hosted calls after it', stdio.hostedCalm);
  line(
    'kills of a replica with stdio',
    `${stdio.killsWithProcesses} (${stdio.processesKilledWithReplica} processes)`,
  );
  line('stdio orphans', stdio.orphans.length);
  if (adoption.adopted === 0) log('  ! no 2 s task adopted the API row: the storm did not cover adoption');
  for (const finding of f.findings) log(`  ! ${finding}`);
  for (const finding of stdio.findings) log(`  ! stdio: ${finding}`);
  if (s.notes.length > 0) log(`  stdio notes during the storm:\n    ${s.notes.join('\n    ')}`);
}

async function main(): Promise<number> {
  const started = Date.now();
  log('building the gateway (if needed)');
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-needed'], { cwd: REPO_ROOT, stdio: 'inherit' });
  const tools = await ensureTemporalServer({ dir: path.join(REPO_ROOT, '.tools', 'temporal-server'), log });
  ensurePostgres();
  const t0 = Date.now();
  log(`tools ready in ${seconds(t0 - started)} s`);
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-cluster-'));
  const stdio = stdioSetup(runDir, NODE);
  const stdioRecord = new StdioRecord(stdio.marker);
  let postgres: PostgresDevServer | undefined;
  let temporal: TemporalServerProcess | undefined;
  let upstream: UpstreamProcess | undefined;
  let proxy: RoundRobinProxy | undefined;
  let replicas: Replica[] = [];
  let failed = true;
  try {
    postgres = await startPostgresDev({ settings: { max_connections: 400 } });
    await setupSchema(tools, postgres);
    log(`PostgreSQL on ${postgres.port}, Temporal schema set up (twice) at ${seconds(Date.now() - t0)} s`);
    const server = await startTemporal(tools, postgres);
    temporal = server.server;
    track(temporal.child);
    log(`Temporal ${server.address} serving at ${seconds(Date.now() - t0)} s`);
    const postgresUrl = await createGatewayDatabase(postgres);
    upstream = await startUpstream(NODE);
    // Read at each request: a replica that found its port taken at start listens on another.
    proxy = await startRoundRobinProxy(() => replicas.flatMap((r) => (r.port === undefined ? [] : [r.port])));
    const gateway = await prepareGateway({
      runDir,
      temporalAddress: server.address,
      postgresUrl,
      upstreamUrl: upstream.url,
      node: NODE,
      publicHost: new URL(proxy.url).host,
      stdio,
    });
    replicas = gateway.replicas;
    await Promise.all(replicas.map((r) => r.start()));
    log(
      `${replicas.map((r) => r.name).join(', ')} ready at ${seconds(Date.now() - t0)} s; proxy ${proxy.url}`,
    );

    const client = newClient(proxy.url, PROJECT, gateway.token);
    const creations: Creation[] = [];
    await warmUp(client, creations);
    await seedGraph(proxy.url, gateway.token);
    log(`first task completed at ${seconds(Date.now() - t0)} s; the storm begins`);

    const planned = planCreations(TASKS);
    creations.push(...planned);
    const kills: Kill[] = [];
    let calm = false;
    const stormEnds = storm(replicas, kills, () => calm, t0, stdioRecord);
    const laneEnds = stdioLane(stdioRecord, proxy.url, gateway.token, () => calm);
    const begun = Date.now();
    await runWorkload(planned, {
      client,
      concurrency: CONCURRENCY,
      startUntil: begun + START_WINDOW_MS,
      deadline: begun + FOLLOW_WINDOW_MS,
    });
    calm = true;
    await stormEnds;
    await laneEnds;
    const notStarted = planned.filter((c) => c.outcome === undefined).length;
    log(
      `workload done at ${seconds(Date.now() - t0)} s (${notStarted} planned creations not started in time)`,
    );

    const dashboard = { baseUrl: proxy.url, project: PROJECT, token: gateway.token };
    const attempted = creations.filter((c) => c.outcome !== undefined);
    const { adopted, unexplained } = await adoptUnanswered(
      dashboard,
      attempted,
      Date.now() + ADOPT_WINDOW_MS,
    );
    const stats = (await (await fetch(upstream.statsUrl)).json()) as { calls: [] };
    const figures = await check({
      creations: attempted,
      adopted,
      unexplained,
      upstreamCalls: stats.calls,
      upstream: new McpTestClient(upstream.url),
      gateway: client,
      dashboard,
    });
    const adoption = await adoptionFigure(server.address, attempted);
    await checkStdioCalm(stdioRecord, replicas, proxy.url, gateway.token);
    // Every replica stopped (SIGTERM): nothing of the stdio upstream may be left running.
    await Promise.allSettled(replicas.map((r) => r.stop()));
    checkNoneLeft(stdioRecord);
    printFigures(figures, kills, Date.now() - t0, proxy, stdioRecord, adoption);
    failed =
      figures.lost + figures.duplicates + figures.orphans + figures.inconsistent > 0 ||
      stdioRecord.findings.length > 0 ||
      adoption.adopted === 0;
    const problems = attempted.flatMap((c) => c.problems.map((p) => `${c.id}: ${p}`));
    if (problems.length > 0)
      log(`client-side notes (${problems.length}):\n  ${problems.slice(0, 40).join('\n  ')}`);
    log(failed ? 'FAILED' : 'passed');
    return failed ? 1 : 0;
  } finally {
    await Promise.allSettled(replicas.map((r) => r.stop()));
    for (const r of replicas) r.close();
    await proxy?.close();
    upstream?.child.kill('SIGTERM');
    await temporal?.stop();
    await postgres?.stop();
    if (failed || process.env['CLUSTER_KEEP_LOGS'] === '1') log(`logs kept in ${runDir}`);
    else rmSync(runDir, { recursive: true, force: true });
  }
}

// Interrupted: everything this run started goes at once (PostgreSQL stops through its own exit hook).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killTracked();
    process.exit(130);
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[cluster] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
