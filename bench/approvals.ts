/**
 * `npm run bench:approvals [-- --waiting 10000 --approve 200 --concurrency 1,4 ...]` (`--help` lists all)
 *
 * Durable approvals (issue 27, docs/approvals.md): a call the project's approval policy names becomes a
 * task whose workflow waits for a person's approval with nothing sent upstream. Measured on what users
 * run: an in-memory Temporal dev server, the example upstream with tasks off (`advertiseTasks: false`, so
 * `slow_compute {seconds: 0}` is an ordinary tool that answers at once) as a process of its own, and the
 * gateway as its own process through the production entry point (`node dist/src/main/serve.js all`,
 * built first when stale) with default settings (token auth, namespacing on, log at info) plus an
 * administrator token (the approver: the default policy lets the project's managers approve, the
 * administrator included). One project `bench` reaches that upstream as `guarded` (its policy:
 * `{ rules: [{ upstream: 'guarded', tools: ['slow_compute'] }] }`, defaults otherwise: one approval,
 * 24 h expiry, managers approve, no self-approval) and as `direct` (an ordinary call). The caller is a
 * 2026-07-28 client declaring Tasks (bench/support.ts). In order (bench/approvals-runs.ts):
 *
 * 1. **Waiting approvals**: --waiting calls of `guarded.slow_compute`, created by --clients clients (a
 *    `-31013` fair-share refusal is retried after its delay, as bench:hosted does), for at most
 *    --create-seconds (then it reports how many it reached). Gateway RSS and live heap before and with
 *    all waiting, each read after a forced full collection (the gateway runs with `--inspect` on
 *    loopback, as in bench:hosted and bench:scale), so KB per waiting request; its RSS during the ramp;
 *    Temporal's RSS; the creation rate; that the upstream received nothing; and the Temporal history of
 *    --history of the waiting workflows spread over the creation order (events, and bytes of the history
 *    encoded as protobuf, as `fetchHistory` returns it). Then every pending approval is listed through the
 *    admin API (200 a page) to find their ids.
 * 2. **Approve → upstream call**: for each concurrency of --concurrency, --approve of them (spread over
 *    the creation order, so both long-waiting workflows the worker has evicted from its cache and recent
 *    ones; the approve -> upstream latency is also split by whether the workflow was among the last
 *    `maxCachedWorkflows` created, the SDK's default here) are approved through
 *    `POST /v1/admin/approvals/:id/approve`, that many at once. Per approval:
 *    from the approve request's send to the moment the upstream received the `tools/call` (the upstream
 *    process, still a process of its own, notes each call's arrival by its label through the example
 *    upstream's `onRequest` hook; both processes read the wall clock as `performance.timeOrigin +
 *    performance.now()` on the same machine), to the admin API's answer, and to the `notifications/tasks`
 *    push saying `completed` on a `subscriptions/listen` stream the client opened for that task before
 *    the approval (the completion as the client sees it); p50/p99 of each. Beside them, for scale,
 *    --direct ordinary calls of `direct.slow_compute {seconds: 0}` one at a time, with the others still
 *    waiting.
 *
 * No targets are stated (issue 27 asks for the figures): no PASS/FAIL. Prints tables and, last, one JSON
 * line with every figure. Leaves no processes behind.
 */
import os from 'node:os';
import v8 from 'node:v8';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { getFreePort } from '../src/tooling/processes';
import { note, runBench } from './env';
import type { GatewayProject } from './processes';
import {
  benchClient,
  benchUsers,
  gatewayTemporalClient,
  startBench,
  startGatewayProcess,
  startUpstreamProcess,
} from './processes';
import type { ApprovalFigures } from './approvals-runs';
import { AdminApi, approveAll, listPending, waiting } from './approvals-runs';
import { percentile, replyProblem, round, table } from './support';
import { many } from './task-support';
import { readFlags } from './options';

interface Options {
  waiting: number;
  clients: number;
  createSeconds: number;
  history: number;
  approve: number;
  concurrency: number[];
  direct: number;
  warmup: number;
}

function parseOptions(argv: string[]): Options {
  const flags = readFlags(
    argv,
    {
      waiting: '10000',
      clients: '32',
      'create-seconds': '300',
      history: '20',
      approve: '200',
      concurrency: '1,4',
      direct: '200',
      warmup: '10',
    },
    'usage: npm run bench:approvals -- [options]\n' +
      '  --waiting 10000        1: calls left waiting for approval\n' +
      '  --clients 32           1: clients creating them at once\n' +
      '  --create-seconds 300   1: stop creating after this long (reports how many were reached)\n' +
      '  --history 20           1: waiting workflows whose Temporal history is read\n' +
      '  --approve 200          2: approvals per concurrency (spread over the waiting ones)\n' +
      '  --concurrency 1,4      2: approvals sent at once, one run each\n' +
      '  --direct 200           2: ordinary calls of the same tool, one at a time, for scale\n' +
      '  --warmup 10            unmeasured approved calls and ordinary calls first\n',
  );
  const { int } = flags;
  const opts: Options = {
    waiting: int('waiting', 1),
    clients: int('clients', 1),
    createSeconds: int('create-seconds', 1),
    history: int('history', 0),
    approve: int('approve', 0),
    concurrency: flags.ints('concurrency', 1),
    direct: int('direct', 1),
    warmup: int('warmup', 0),
  };
  if (opts.concurrency.length === 0) throw new Error('--concurrency names at least one value');
  return opts;
}

/** The Temporal SDK's default `maxCachedWorkflows` for a process with this one's heap limit (worker-options.js). */
function sdkDefaultCachedWorkflows(): number {
  const heapMiB = v8.getHeapStatistics().heap_size_limit / (1024 * 1024);
  return Math.max(Math.floor((Math.max(heapMiB - 200, 0) * 600) / 1024), 10);
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const { t0, temporal, dir } = await startBench(opts);
  const upstream = await startUpstreamProcess('bench-upstream-approvals', {
    advertiseTasks: false,
    recordCallTimes: true,
  });
  const project: GatewayProject = {
    slug: 'bench',
    upstreams: [
      { alias: 'direct', url: upstream.url },
      { alias: 'guarded', url: upstream.url },
    ],
    approvals: { rules: [{ upstream: 'guarded', tools: ['slow_compute'] }] },
  };
  const users = benchUsers(1);
  const adminToken = `bench-admin-${randomBytes(24).toString('base64url')}`;
  const inspectPort = await getFreePort();
  process.env['BENCH_GATEWAY_NODE_ARGS'] =
    `${process.env['BENCH_GATEWAY_NODE_ARGS'] ?? ''} --inspect=127.0.0.1:${inspectPort}`;
  const gateway = await startGatewayProcess({
    temporal,
    dir,
    users,
    projects: [project],
    sections: { admin: { token: adminToken } },
  });
  note(`gateway up after ${Math.round(performance.now() - t0)} ms`);

  const { agent, client } = benchClient(gateway, users);
  const admin = new AdminApi(gateway.url, adminToken, agent);
  const temporalClient = await gatewayTemporalClient(temporal, gateway);

  const direct = async () => {
    const problem = replyProblem(await client.callTool('direct.slow_compute', { seconds: 0 }));
    if (problem) throw new Error(problem);
  };
  // Warm-up: discovery, connections, workflow isolate, JIT, the whole approve path. Not measured.
  if (opts.warmup > 0) {
    note(`warm-up: ${opts.warmup} ordinary calls, ${opts.warmup} approved calls`);
    const warm = await many(opts.warmup, 4, direct);
    if (warm.errors.length > 0) throw new Error(`warm-up failed: ${warm.errors[0]}`);
    const w = await waiting(
      client,
      { waiting: opts.warmup, clients: 4, createSeconds: 60, history: 0, prefix: 'warm' },
      gateway,
      temporal.pid,
      upstream,
      inspectPort,
      temporalClient,
    );
    const listed = await listPending(admin, 'bench');
    const approved = await approveAll(
      admin,
      client,
      upstream,
      w.tasks.map((t) => ({ ...t, recent: true, approvalId: listed.ids.get(t.taskKey) ?? '' })),
      2,
    );
    if (approved.errors.length > 0) throw new Error(`warm-up approvals failed: ${approved.errors[0]}`);
  }

  // 1. Waiting approvals.
  const held = await waiting(client, opts, gateway, temporal.pid, upstream, inspectPort, temporalClient);
  const listed = await listPending(admin, 'bench');
  note(`   listed ${listed.listed} pending in ${listed.pages} pages`);

  // 2. Approvals, spread over the creation order; each concurrency gets its own share.
  const cache = sdkDefaultCachedWorkflows();
  const approvable = held.tasks
    .filter((t) => listed.ids.has(t.taskKey))
    .sort((a, b) => a.createdAtMs - b.createdAtMs)
    .map((t, i, all) => ({ ...t, recent: i >= all.length - cache }));
  const runs = opts.concurrency.length;
  const per = Math.min(opts.approve, Math.floor(approvable.length / runs));
  const step = Math.max(1, Math.floor(approvable.length / Math.max(1, per * runs)));
  const picked = approvable.filter((_, i) => i % step === 0).slice(0, per * runs);
  const approvals: ApprovalFigures[] = [];
  for (const [k, c] of opts.concurrency.entries()) {
    const share = picked
      .filter((_, i) => i % runs === k)
      .map((t) => ({ ...t, approvalId: listed.ids.get(t.taskKey) ?? '' }));
    approvals.push(await approveAll(admin, client, upstream, share, c));
  }
  note(`   ${opts.direct} ordinary calls of the same tool`);
  const directTimes: number[] = [];
  const directErrors: string[] = [];
  for (let i = 0; i < opts.direct; i++) {
    const s = performance.now();
    try {
      await direct();
      directTimes.push(performance.now() - s);
    } catch (err) {
      directErrors.push(err instanceof Error ? err.message : String(err));
    }
  }
  const directFigures = {
    count: directTimes.length,
    p50: round(percentile(directTimes, 50), 2),
    p99: round(percentile(directTimes, 99), 2),
    errors: directErrors,
  };
  const stillPending = (await listPending(admin, 'bench')).listed;
  const log = gateway.log();

  const h = held.figures;
  const out: string[] = [];
  out.push(
    `\napprovals, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${round((performance.now() - t0) / 1000, 0)} s\n`,
  );
  out.push(`1. calls waiting for approval (${opts.clients} clients)`);
  out.push(
    table([
      ['', 'value'],
      [
        'requested / created',
        `${h.requested} / ${h.created}${h.cut ? ` (stopped at ${opts.createSeconds} s)` : ''}`,
      ],
      ['refused early (-31013, retried)', h.refused],
      ['creation errors', h.errors.length],
      ['ramp s, created/s', `${h.rampSeconds}, ${h.createdPerSecond}`],
      ['creation p50 / p99 ms', `${h.creationP50} / ${h.creationP99}`],
      ['calls at the upstream while waiting', h.upstreamCallsWhileWaiting],
      [
        'gateway RSS before / all waiting / peak MB',
        `${h.rssMB.before} / ${h.rssMB.waiting} / ${h.rssMB.peak}`,
      ],
      ['KB of gateway RSS per waiting request', h.kbPerWaiting],
      ['gateway live heap before / all waiting MB', `${h.heapMB.before} / ${h.heapMB.waiting}`],
      ['KB of live heap per waiting request', h.heapKbPerWaiting],
      ['Temporal RSS before / all waiting MB', `${h.temporalRssMB.before} / ${h.temporalRssMB.waiting}`],
      ['KB of Temporal RSS per waiting request', h.temporalKbPerWaiting],
      [
        'history events p50 / max',
        `${h.history.eventsP50} / ${h.history.eventsMax} (${h.history.sampled} sampled)`,
      ],
      ['history bytes p50 / max', `${h.history.bytesP50} / ${h.history.bytesMax}`],
      ['pending listed (admin API, 200 a page)', `${listed.listed} in ${listed.pages} pages`],
      ['list page p50 / p99 ms', `${listed.pageP50} / ${listed.pageP99}`],
      ["worker's workflow cache (SDK default here)", cache],
    ]),
  );
  out.push('   gateway RSS during the ramp (waiting, MB):');
  out.push(`   ${h.ramp.map(([n, mb]) => `${n}: ${mb}`).join(', ')}`);
  for (const e of [...new Set(h.errors)].slice(0, 5)) out.push(`   ${e}`);
  out.push('');
  out.push('2. approve -> upstream call, -> admin API answer, -> completed push (ms)');
  out.push(
    table([
      ['', 'approved', 'per s', 'upstream p50', 'p99', 'answer p50', 'p99', 'completed p50', 'p99', 'errors'],
      ...approvals.map((a) => [
        `${a.concurrency} at once`,
        a.approved,
        a.perSecond,
        a.upstream.p50,
        a.upstream.p99,
        a.answer.p50,
        a.answer.p99,
        a.completed.p50,
        a.completed.p99,
        a.errors.length,
      ]),
      [
        'ordinary call (direct)',
        directFigures.count,
        '',
        '',
        '',
        directFigures.p50,
        directFigures.p99,
        '',
        '',
        directErrors.length,
      ],
    ]),
  );
  out.push(
    `   approve -> upstream by the workflow's age: among the last ${cache} created (likely in the worker's cache) / older (evicted, replayed)`,
  );
  out.push(
    table([
      ['', 'recent n', 'p50', 'p99', 'older n', 'p50', 'p99'],
      ...approvals.map((a) => [
        `   ${a.concurrency} at once`,
        a.byCache.recent.count,
        a.byCache.recent.p50,
        a.byCache.recent.p99,
        a.byCache.older.count,
        a.byCache.older.p50,
        a.byCache.older.p99,
      ]),
    ]),
  );
  for (const e of [...new Set(approvals.flatMap((a) => a.errors))].slice(0, 5)) out.push(`   ${e}`);
  out.push(`   still pending at the end: ${stillPending}`);
  out.push('');
  out.push(`gateway log: ${log.warnings} warnings, ${log.errors} errors`);
  for (const s of log.samples) out.push(`   ${s}`);
  process.stdout.write(`${out.join('\n')}\n`);
  process.stdout.write(
    `${JSON.stringify({
      opts,
      waiting: h,
      listing: { ...listed, ids: undefined },
      cachedWorkflowsDefault: cache,
      approvals,
      direct: directFigures,
      stillPending,
      log,
    })}\n`,
  );
}

runBench(main);
