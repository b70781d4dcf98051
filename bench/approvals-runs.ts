/**
 * The two measurements of bench:approvals (bench/approvals.ts), against the example upstream with tasks
 * off (`slow_compute {seconds: 0}` is an ordinary tool that answers at once), reached as `guarded` (the
 * project's approval policy names `slow_compute` there) and as `direct` (no policy: an ordinary call):
 *
 * 1. `waiting`: --waiting calls of `guarded.slow_compute`, each labelled `wait-<i>` (the upstream's key
 *    for its arrival time), created by --clients
 *    clients (a `-31013` refusal retried after its delay): each becomes a task whose workflow waits for
 *    approval. Gateway RSS and live heap (after a forced full collection, through its inspector) before
 *    and with all waiting, RSS sampled during the ramp, Temporal's RSS, and the history of a sample of the
 *    waiting workflows (events and encoded bytes).
 * 2. `approveAll`: approvals taken from the admin API's pending list approved one by one (or a few at
 *    once) by the administrator; per approval, from the approve request's send to the upstream receiving
 *    the `tools/call` (the upstream process notes each label's arrival), to the admin API's answer, and
 *    to the client's `notifications/tasks` push saying `completed` (a `subscriptions/listen` stream opened
 *    for that task before the approval).
 */
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { taskKeyOf } from '../src/store/tasks/task-store';
import { taskWorkflowId } from '../src/workflows/messages';
import { note } from './env';
import type { GatewayProcess, UpstreamProcess } from './processes';
import { rssBytes } from './processes';
import { liveHeap } from './scale-memory';
import type { McpHttpClient } from './support';
import { mapLimit, percentile, round, sleep } from './support';
import type { Refusals } from './task-support';
import { createTask, many } from './task-support';

const MB = 1024 * 1024;

/** Wall clock with sub-millisecond resolution, comparable with the upstream process's (same machine). */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

export interface Waiting {
  taskId: string;
  taskKey: string;
  label: string;
  createdAtMs: number;
  latencyMs: number;
}

export interface WaitingFigures {
  requested: number;
  created: number;
  refused: number;
  errors: string[];
  /** Whether creation stopped at --create-seconds before --waiting were made. */
  cut: boolean;
  rampSeconds: number;
  createdPerSecond: number;
  creationP50: number;
  creationP99: number;
  /** tools/call requests the upstream received for `guarded` while they waited (should be 0). */
  upstreamCallsWhileWaiting: number;
  rssMB: { before: number; waiting: number; peak: number };
  kbPerWaiting: number;
  heapMB: { before: number; waiting: number };
  heapKbPerWaiting: number;
  temporalRssMB: { before: number; waiting: number };
  temporalKbPerWaiting: number;
  /** Gateway RSS during the ramp: [created so far, MB]. */
  ramp: Array<[number, number]>;
  history: { sampled: number; eventsP50: number; eventsMax: number; bytesP50: number; bytesMax: number };
}

/** 1. --waiting calls that each wait for approval, and what they cost while they wait. */
export async function waiting(
  client: McpHttpClient,
  opts: { waiting: number; clients: number; createSeconds: number; history: number; prefix?: string },
  gateway: GatewayProcess,
  temporalPid: number,
  upstream: UpstreamProcess,
  inspectPort: number,
  temporal: Client,
): Promise<{ figures: WaitingFigures; tasks: Waiting[] }> {
  note(
    `1. ${opts.waiting} calls waiting for approval, ${opts.clients} clients (at most ${opts.createSeconds} s)`,
  );
  await sleep(3000);
  const heapBefore = await liveHeap(inspectPort);
  const before = { gateway: gateway.rssBytes(), temporal: rssBytes(temporalPid) };
  const callsBefore = (await upstream.stats()).toolCalls['slow_compute'] ?? 0;
  let peak = before.gateway;
  let made = 0;
  const ramp: Array<[number, number]> = [[0, round(before.gateway / MB, 1)]];
  const sampler = setInterval(() => {
    const rss = gateway.rssBytes();
    peak = Math.max(peak, rss);
    ramp.push([made, round(rss / MB, 1)]);
  }, 10_000);
  const refusals: Refusals = { count: 0 };
  const t0 = performance.now();
  let creation: Awaited<ReturnType<typeof many<Waiting>>>;
  try {
    creation = await many(
      opts.waiting,
      opts.clients,
      async (i) => {
        const label = `${opts.prefix ?? 'wait'}-${i}`;
        const c = await createTask(client, 'guarded.slow_compute', { seconds: 0, label }, refusals);
        made++;
        if (made % 1000 === 0)
          note(`   ${made} waiting after ${round((performance.now() - t0) / 1000, 0)} s`);
        return { ...c, label, taskKey: taskKeyOf(c.taskId) };
      },
      opts.createSeconds,
    );
  } finally {
    clearInterval(sampler);
  }
  const rampSeconds = (performance.now() - t0) / 1000;
  note(`   ${creation.ok.length} waiting after ${round(rampSeconds, 1)} s; reading memory`);
  await sleep(3000);
  const heapHeld = await liveHeap(inspectPort);
  const held = { gateway: gateway.rssBytes(), temporal: rssBytes(temporalPid) };
  ramp.push([creation.ok.length, round(held.gateway / MB, 1)]);
  const callsWhileWaiting = ((await upstream.stats()).toolCalls['slow_compute'] ?? 0) - callsBefore;
  const n = Math.max(1, creation.ok.length);

  // History of a sample spread over the creation order (the first ones are the longest waiting).
  const step = Math.max(1, Math.floor(creation.ok.length / Math.max(1, opts.history)));
  const sample = creation.ok.filter((_, i) => i % step === 0).slice(0, opts.history);
  const events: number[] = [];
  const bytes: number[] = [];
  for (const w of sample) {
    const history = await temporal.workflow.getHandle(taskWorkflowId(w.taskKey)).fetchHistory();
    events.push(history.events?.length ?? 0);
    bytes.push(proto.api.history.v1.History.encode(history).finish().length);
  }
  const latencies = creation.ok.map((c) => c.latencyMs);
  return {
    tasks: creation.ok,
    figures: {
      requested: opts.waiting,
      created: creation.ok.length,
      refused: refusals.count,
      errors: creation.errors,
      cut: creation.cut,
      rampSeconds: round(rampSeconds, 1),
      createdPerSecond: round(creation.ok.length / rampSeconds, 1),
      creationP50: round(percentile(latencies, 50), 1),
      creationP99: round(percentile(latencies, 99), 1),
      upstreamCallsWhileWaiting: callsWhileWaiting,
      rssMB: {
        before: round(before.gateway / MB, 1),
        waiting: round(held.gateway / MB, 1),
        peak: round(Math.max(peak, held.gateway) / MB, 1),
      },
      kbPerWaiting: round((held.gateway - before.gateway) / 1024 / n, 1),
      heapMB: { before: round(heapBefore / MB, 1), waiting: round(heapHeld / MB, 1) },
      heapKbPerWaiting: round((heapHeld - heapBefore) / 1024 / n, 1),
      temporalRssMB: { before: round(before.temporal / MB, 1), waiting: round(held.temporal / MB, 1) },
      temporalKbPerWaiting: round((held.temporal - before.temporal) / 1024 / n, 1),
      ramp,
      history: {
        sampled: sample.length,
        eventsP50: percentile(events, 50),
        eventsMax: Math.max(0, ...events),
        bytesP50: percentile(bytes, 50),
        bytesMax: Math.max(0, ...bytes),
      },
    },
  };
}

/** The administrator's side of the admin API. */
export class AdminApi {
  constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly dispatcher: Dispatcher,
  ) {}

  async call(method: 'GET' | 'POST', route: string, body?: unknown) {
    const res = await request(`${this.base}/v1/admin${route}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      dispatcher: this.dispatcher,
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  }
}

export interface PendingListing {
  listed: number;
  pages: number;
  pageP50: number;
  pageP99: number;
  ids: Map<string, string>;
}

/** Every pending approval of the project, 200 a page (`before` = the last row's createdAt): taskKey -> id. */
export async function listPending(admin: AdminApi, project: string): Promise<PendingListing> {
  const ids = new Map<string, string>();
  const times: number[] = [];
  let before: string | undefined;
  for (;;) {
    const q = `project=${project}&status=pending&limit=200${before ? `&before=${encodeURIComponent(before)}` : ''}`;
    const t0 = performance.now();
    const res = await admin.call('GET', `/approvals?${q}`);
    times.push(performance.now() - t0);
    if (res.status !== 200)
      throw new Error(`GET /approvals: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    const rows = res.body['approvals'] as Array<{ id: string; taskKey: string; createdAt: string }>;
    for (const r of rows) ids.set(r.taskKey, r.id);
    if (rows.length < 200) break;
    before = rows.at(-1)?.createdAt;
  }
  return {
    listed: ids.size,
    pages: times.length,
    pageP50: round(percentile(times, 50), 1),
    pageP99: round(percentile(times, 99), 1),
    ids,
  };
}

export interface ApprovalTiming {
  /** Approve sent -> the upstream received the tools/call, ms. */
  toUpstream: number[];
  /** Approve sent -> the admin API's answer, ms. */
  toAnswer: number[];
  /** Approve sent -> the client's push saying `completed`, ms. */
  toCompleted: number[];
  errors: string[];
}

export interface ApprovalFigures {
  concurrency: number;
  /**
   * Approve -> upstream split by whether the workflow was among the last `cached` created (likely still
   * in the worker's workflow cache) or older (evicted: replayed from its history when approved).
   */
  byCache: {
    recent: { p50: number; p99: number; count: number };
    older: { p50: number; p99: number; count: number };
  };
  approved: number;
  wallSeconds: number;
  perSecond: number;
  upstream: { p50: number; p99: number; count: number };
  answer: { p50: number; p99: number };
  completed: { p50: number; p99: number; count: number };
  errors: string[];
}

/** 2. Approves `tasks` (concurrency at once), each with the client's listen stream open on its task. */
export async function approveAll(
  admin: AdminApi,
  client: McpHttpClient,
  upstream: UpstreamProcess,
  tasks: ReadonlyArray<Waiting & { approvalId: string; recent: boolean }>,
  concurrency: number,
): Promise<ApprovalFigures> {
  note(`2. approving ${tasks.length}, ${concurrency} at once`);
  const sentAt = new Map<string, number>();
  const t: ApprovalTiming = { toUpstream: [], toAnswer: [], toCompleted: [], errors: [] };
  const t0 = performance.now();
  await mapLimit(tasks, concurrency, async (w) => {
    let done!: (at: number) => void;
    const completed = new Promise<number>((resolve) => (done = resolve));
    try {
      const stream = await client.listen({ taskIds: [w.taskId] }, (m) => {
        const p = m.params as { taskId?: string; status?: string } | undefined;
        if (m.method === 'notifications/tasks' && p?.taskId === w.taskId && p.status === 'completed')
          done(wallNow());
      });
      try {
        const sent = wallNow();
        sentAt.set(w.label, sent);
        const res = await admin.call('POST', `/approvals/${w.approvalId}/approve`, { comment: 'bench' });
        if (res.status !== 200)
          throw new Error(`approve: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        t.toAnswer.push(wallNow() - sent);
        const at = await Promise.race([completed, sleep(30_000).then(() => undefined)]);
        if (at === undefined) throw new Error(`no completed push within 30 s for ${w.taskId}`);
        t.toCompleted.push(at - sent);
      } finally {
        await stream.close();
      }
    } catch (err) {
      t.errors.push(err instanceof Error ? err.message : String(err));
    }
  });
  const wallSeconds = (performance.now() - t0) / 1000;
  const times = await upstream.callTimes([...sentAt.keys()]);
  const recentLabels = new Set(tasks.filter((w) => w.recent).map((w) => w.label));
  const split = { recent: [] as number[], older: [] as number[] };
  for (const [label, sent] of sentAt) {
    const at = times[label];
    if (at === undefined) t.errors.push(`the upstream never received ${label}`);
    else {
      t.toUpstream.push(at - sent);
      split[recentLabels.has(label) ? 'recent' : 'older'].push(at - sent);
    }
  }
  const pct = (xs: number[], p: number) => round(percentile(xs, p), 1);
  const fig = (xs: number[]) => ({ p50: pct(xs, 50), p99: pct(xs, 99), count: xs.length });
  return {
    concurrency,
    approved: t.toAnswer.length,
    wallSeconds: round(wallSeconds, 1),
    perSecond: round(t.toAnswer.length / wallSeconds, 1),
    upstream: fig(t.toUpstream),
    byCache: { recent: fig(split.recent), older: fig(split.older) },
    answer: { p50: pct(t.toAnswer, 50), p99: pct(t.toAnswer, 99) },
    completed: { p50: pct(t.toCompleted, 50), p99: pct(t.toCompleted, 99), count: t.toCompleted.length },
    errors: t.errors,
  };
}
