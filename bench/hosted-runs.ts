/**
 * The three measurements of bench:hosted (bench/hosted.ts), each against the example upstream with tasks
 * off (`advertiseTasks: false`: its `slow_compute {seconds}` is an ordinary tool that answers after
 * `seconds`), reached under several aliases of one project that differ only in their hosting policy:
 *
 * 1. `quickSync`: `hosted.slow_compute {seconds: 0}` (hosted, default policy: answered synchronously
 *    within the 2 s window) against `direct.slow_compute {seconds: 0}` (the same upstream, no hosting),
 *    ABBA, with the CPU the gateway and Temporal used per call.
 * 2. `promotion`: `promoted<w>.slow_compute {seconds: --promote-seconds}` for each window w of --windows
 *    against an ordinary call that lasts the first window (`direct.slow_compute {seconds: w}`), ABBA:
 *    each latency minus its window is what the gateway adds after it (a CreateTaskResult, or the
 *    ordinary call's answer).
 * 3. `inFlight`: --inflight hosted calls of --seconds (aliases `fleet<k>`, promoteAfterMs 0, at most
 *    --per-upstream each) created by --clients clients, then held: gateway RSS before, with all in flight,
 *    peak and after, and its live heap (after a forced collection) before and with all in flight; the idle CPU they cost; whether every task completes (tasks/get once they are due).
 */
import { performance } from 'node:perf_hooks';
import type { GatewayProcess, UpstreamProcess } from './processes';
import { cpuMs, rssBytes } from './processes';
import { measure } from './measure';
import type { Figures } from './measure';
import { peakInFlight } from './scale-completions';
import { liveHeap, sampleRss } from './scale-memory';
import type { McpHttpClient } from './support';
import { note } from './env';
import { mapLimit, percentile, replyProblem, round, sleep } from './support';
import type { Refusals } from './task-support';
import { createTask, many } from './task-support';
import type { TimedCreation } from './tasks-latency';

export interface HostedOptions {
  n: number;
  block: number;
  concurrency: number;
  promotions: number;
  windows: number[];
  promoteSeconds: number;
  inflight: number;
  seconds: number;
  perUpstream: number;
  clients: number;
  wait: number;
  warmup: number;
}

export interface Pids {
  gateway: number;
  temporal: number;
}

/** A synchronous answer: a result that is not a task and not an error. */
function expectAnswer(reply: Awaited<ReturnType<McpHttpClient['callTool']>>): void {
  const problem = replyProblem(reply);
  if (problem) throw new Error(problem);
  if (reply.result?.resultType === 'task') throw new Error('a task, where a synchronous answer was due');
}

/** 1. A quick hosted tool answered within the window, against the same call unhosted. */
export async function quickSync(
  client: McpHttpClient,
  opts: HostedOptions,
  pids: Pids,
): Promise<Record<'hosted' | 'direct', Figures>> {
  note(`1. quick calls: ${opts.n} per side, hosted and direct, ${opts.concurrency} in flight`);
  return measure(['hosted', 'direct'] as const, opts, { ...pids }, async (side) => {
    expectAnswer(await client.callTool(`${side}.slow_compute`, { seconds: 0 }));
  });
}

export interface PromotionSide {
  /** `promoted<window>` (a hosted call outlasting the window) or `ordinary` (a call lasting the first). */
  side: string;
  window: number;
  /** Latency minus the window: a promoted task's CreateTaskResult, an ordinary call's answer. */
  after: Figures;
  /** Each promoted task with when its call was sent and its CreateTaskResult read (wall clock). */
  timed: TimedCreation[];
}

/**
 * 2. Creation of a promoted task after the window, for each window (alias `promoted<window>`), against an
 * ordinary call lasting the first window, ABBA.
 */
export async function promotion(
  client: McpHttpClient,
  opts: HostedOptions,
  pids: Pids,
): Promise<PromotionSide[]> {
  note(
    `2. promotion: ${opts.promotions} per side, windows ${opts.windows.join(', ')} ms, hosted calls of ${opts.promoteSeconds} s`,
  );
  const [first = 500] = opts.windows;
  const windowOf = new Map<string, number>(opts.windows.map((w) => [`promoted${w}`, w]));
  windowOf.set('ordinary', first);
  const timed = new Map<string, TimedCreation[]>([...windowOf.keys()].map((k) => [k, []]));
  const sides = await measure(
    [...windowOf.keys()],
    { n: opts.promotions, block: Math.min(opts.block, 10), concurrency: 1 },
    { ...pids },
    async (side) => {
      if (side === 'ordinary') {
        expectAnswer(await client.callTool('direct.slow_compute', { seconds: first / 1000 }));
        return;
      }
      const sentAt = Date.now();
      const created = await createTask(client, `${side}.slow_compute`, { seconds: opts.promoteSeconds });
      timed.get(side)?.push({ taskId: created.taskId, sentAt, repliedAt: Date.now() });
    },
  );
  // measure() reports whole latencies; the figure is what comes after the window.
  return [...windowOf.entries()].map(([side, window]) => {
    const f = sides[side] as Figures;
    return {
      side,
      window,
      after: { ...f, p50: round(f.p50 - window, 2), p99: round(f.p99 - window, 2) },
      timed: timed.get(side) ?? [],
    };
  });
}

export interface InFlight {
  requested: number;
  created: number;
  refused: number;
  errors: string[];
  rampSeconds: number;
  createdPerSecond: number;
  creationP50: number;
  creationP99: number;
  /** Calls the upstream had received once the last was created (counted at their start, not their end). */
  upstreamReceived: number;
  peakInFlight: number;
  /** Calls in flight (created, not yet due) when the "in flight" memory was read: the per-call divisor. */
  inFlightAtReading: number;
  rssMB: { before: number; inFlight: number; peak: number; after: number };
  temporalRssMB: { before: number; inFlight: number; peak: number };
  kbPerCall: number;
  /** Live heap after a full collection, before and with the calls in flight, MB; and per call, KB. */
  heapMB: { before: number; inFlight: number };
  heapKbPerCall: number;
  /** Idle CPU with the calls in flight, % of a core, over 3 s. */
  idleCpu: { gateway: number; temporal: number };
  outcomes: Record<string, number>;
  failures: string[];
  /** From the first creation to the last task seen finished, s. */
  wallSeconds: number;
}

const MB = 1024 * 1024;

/** 3. Many hosted calls of --seconds in flight at once: the gateway's memory, and whether all complete. */
export async function inFlight(
  client: McpHttpClient,
  opts: HostedOptions,
  gateway: GatewayProcess,
  temporalPid: number,
  upstream: UpstreamProcess,
  /** The gateway's inspector (loopback), for its live heap after a full collection. */
  inspectPort: number,
): Promise<InFlight> {
  const aliases = Math.ceil(opts.inflight / opts.perUpstream);
  note(
    `3. ${opts.inflight} hosted calls of ${opts.seconds} s over ${aliases} upstream aliases, ${opts.clients} clients`,
  );
  await sleep(3000);
  // Each reading after a full collection (liveHeap forces it), so garbage does not blur the difference.
  const heapBefore = await liveHeap(inspectPort);
  const before = { gateway: gateway.rssBytes(), temporal: rssBytes(temporalPid) };
  const sampler = sampleRss(gateway, temporalPid, 500, before);
  const peak = sampler.peak;
  try {
    const receivedBefore = (await upstream.stats()).toolCalls['slow_compute'] ?? 0;
    const refusals: Refusals = { count: 0 };
    const t0 = performance.now();
    const creation = await many(opts.inflight, opts.clients, (i) =>
      createTask(
        client,
        `fleet${i % aliases}.slow_compute`,
        { seconds: opts.seconds, label: `inflight-${i}` },
        refusals,
      ),
    );
    const rampSeconds = (performance.now() - t0) / 1000;
    // Every call the gateway started has reached the upstream (or is on its way): wait up to 10 s.
    let received = 0;
    for (const until = Date.now() + 10_000; Date.now() < until; await sleep(200)) {
      received = ((await upstream.stats()).toolCalls['slow_compute'] ?? 0) - receivedBefore;
      if (received >= creation.ok.length) break;
    }
    const heapHeld = await liveHeap(inspectPort);
    const held = { gateway: gateway.rssBytes(), temporal: rssBytes(temporalPid) };
    // A ramp longer than the calls (1,000 at the creation rates of a loaded 2-core machine) ends with the
    // first ones already done: the memory is per call still in flight at the reading.
    const readAt = Date.now();
    const inFlightAtReading = creation.ok.filter((c) => c.createdAtMs + opts.seconds * 1000 > readAt).length;
    const perCall = Math.max(1, inFlightAtReading);
    const cpu0 = { gateway: cpuMs(gateway.pid), temporal: cpuMs(temporalPid), at: performance.now() };
    await sleep(3000);
    const span = performance.now() - cpu0.at;
    const idleCpu = {
      gateway: round(((cpuMs(gateway.pid) - cpu0.gateway) / span) * 100, 1),
      temporal: round(((cpuMs(temporalPid) - cpu0.temporal) / span) * 100, 1),
    };

    const lastDue = Math.max(...creation.ok.map((c) => c.createdAtMs)) + opts.seconds * 1000;
    note(`   ${creation.ok.length} created in ${round(rampSeconds, 1)} s; waiting until they are due`);
    await sleep(lastDue - Date.now() + 2000);
    const outcome = new Map<string, string>();
    const failures: string[] = [];
    let pending = creation.ok.map((c) => c.taskId);
    const giveUp = Date.now() + opts.wait * 1000;
    for (;;) {
      const still: string[] = [];
      await mapLimit(pending, 16, async (taskId) => {
        const reply = await client.getTask(taskId);
        const status = reply.result?.status;
        if (typeof status !== 'string') {
          failures.push(`tasks/get: ${JSON.stringify(reply.error ?? reply.result).slice(0, 200)}`);
          outcome.set(taskId, 'unreadable');
        } else if (status === 'working' || status === 'input_required') {
          still.push(taskId);
        } else {
          outcome.set(taskId, status);
          if (status !== 'completed') {
            const why = reply.result?.statusMessage ?? reply.result?.error ?? '';
            failures.push(`${status}: ${JSON.stringify(why).slice(0, 200)}`);
          }
        }
      });
      pending = still;
      if (pending.length === 0 || Date.now() > giveUp) break;
      await sleep(2000);
    }
    for (const taskId of pending) outcome.set(taskId, 'still working');
    const wallSeconds = (performance.now() - t0) / 1000;
    await sleep(2000);
    const after = gateway.rssBytes();

    const outcomes: Record<string, number> = {};
    for (const s of outcome.values()) outcomes[s] = (outcomes[s] ?? 0) + 1;
    const latencies = creation.ok.map((c) => c.latencyMs);
    return {
      requested: opts.inflight,
      created: creation.ok.length,
      refused: refusals.count,
      errors: creation.errors,
      rampSeconds: round(rampSeconds, 1),
      createdPerSecond: round(creation.ok.length / rampSeconds, 1),
      creationP50: round(percentile(latencies, 50), 1),
      creationP99: round(percentile(latencies, 99), 1),
      upstreamReceived: received,
      peakInFlight: peakInFlight(
        creation.ok.map((c) => ({ createdAtMs: c.createdAtMs, seconds: opts.seconds })),
      ),
      rssMB: {
        before: round(before.gateway / MB, 1),
        inFlight: round(held.gateway / MB, 1),
        peak: round(peak.gateway / MB, 1),
        after: round(after / MB, 1),
      },
      temporalRssMB: {
        before: round(before.temporal / MB, 1),
        inFlight: round(held.temporal / MB, 1),
        peak: round(peak.temporal / MB, 1),
      },
      inFlightAtReading,
      kbPerCall: round((held.gateway - before.gateway) / 1024 / perCall, 1),
      heapMB: { before: round(heapBefore / MB, 1), inFlight: round(heapHeld / MB, 1) },
      heapKbPerCall: round((heapHeld - heapBefore) / 1024 / perCall, 1),
      idleCpu,
      outcomes,
      failures,
      wallSeconds: round(wallSeconds, 1),
    };
  } finally {
    sampler.stop();
  }
}

/** The promoted tasks of 2, read once: how many completed. */
export async function promotedOutcomes(client: McpHttpClient, taskIds: readonly string[]) {
  const outcomes: Record<string, number> = {};
  await mapLimit(taskIds, 8, async (taskId) => {
    const status = String((await client.getTask(taskId)).result?.status ?? 'unreadable');
    outcomes[status] = (outcomes[status] ?? 0) + 1;
  });
  return outcomes;
}
