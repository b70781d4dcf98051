/**
 * Small helpers for the benchmarks: the one bare MCP HTTP client of the benchmarks (2026-07-28, or a
 * 2025-11-25 session client; the same code path for the gateway and for the upstream, so client overhead
 * cancels out of the ratios, which a heavier client such as the SDK's would blur) with
 * `subscriptions/listen` streams, percentiles, ABBA interleaving and a plain-text table.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { META, PROTOCOL_VERSION, requestHeaders, TASKS_EXTENSION } from '../src/protocol';
import { readSseMessages } from '../src/upstream/http';
import pLimit from 'p-limit';

export interface RpcReply {
  status: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

const TASKS_CAPS = { extensions: { [TASKS_EXTENSION]: {} } };

/** The 2025-11-25 protocol version (`era: 'legacy'`). */
export const LEGACY_VERSION = '2025-11-25';

export interface McpClientOptions {
  /** `false` leaves the Tasks extension out of the client capabilities (ordinary calls only). */
  tasks?: boolean;
  /** Sent as `Authorization: Bearer <token>` (a function: a token per request). */
  token?: string | (() => string);
  /** Client capabilities beside Tasks (e.g. `{ elicitation: { form: {} } }` to be asked for input). */
  capabilities?: Record<string, unknown>;
  /**
   * `legacy`: a 2025-11-25 Streamable HTTP client: connect() sends `initialize` (no 2026 envelope) and
   * `notifications/initialized` and keeps the `Mcp-Session-Id` it is given, which every request then
   * carries with `MCP-Protocol-Version: 2025-11-25`. Default `modern`: 2026-07-28, stateless.
   */
  era?: 'modern' | 'legacy';
}

/**
 * One JSON-RPC request per POST: in 2026-07-28 with the `_meta` envelope and mirrored headers the spec
 * requires, in 2025-11-25 within the session. Answers may be JSON or SSE (the SDK's stateful servers
 * answer as SSE); an SSE answer is read to its end, its JSON-RPC response picked by id.
 */
export class McpHttpClient {
  private readonly capabilities: Record<string, unknown>;
  private readonly token: string | (() => string) | undefined;
  private readonly legacy: boolean;
  private sessionId: string | undefined;

  constructor(
    readonly url: string,
    private readonly dispatcher: Dispatcher,
    opts: McpClientOptions = {},
  ) {
    this.capabilities = { ...(opts.tasks === false ? {} : TASKS_CAPS), ...opts.capabilities };
    this.token = opts.token;
    this.legacy = opts.era === 'legacy';
  }

  /** `id` null: a notification. */
  private message(method: string, params: Record<string, unknown>, id: string | null = randomUUID()) {
    const token = typeof this.token === 'function' ? this.token() : this.token;
    const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    if (this.legacy) {
      return {
        body: JSON.stringify({ jsonrpc: '2.0', ...(id !== null && { id }), method, params }),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...auth,
          ...(this.sessionId !== undefined && {
            'mcp-session-id': this.sessionId,
            'mcp-protocol-version': LEGACY_VERSION,
          }),
        },
      };
    }
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          [META.protocolVersion]: PROTOCOL_VERSION,
          [META.clientCapabilities]: this.capabilities,
          [META.clientInfo]: { name: 'taskrouter-bench', version: '1.0.0' },
        },
      },
    });
    return { body, headers: { ...requestHeaders(method, params, PROTOCOL_VERSION), ...auth } };
  }

  private async post(method: string, params: Record<string, unknown>, id: string) {
    const { body, headers } = this.message(method, params, id);
    return request(this.url, { method: 'POST', headers, body, dispatcher: this.dispatcher });
  }

  /**
   * 2025-11-25 only: `initialize` and `notifications/initialized`; the session id (if the server gave
   * one) is kept. Answers the server's `initialize` result.
   */
  async connect(): Promise<Record<string, unknown>> {
    if (!this.legacy) throw new Error('connect() is for a 2025-11-25 client (era: legacy)');
    const id = randomUUID();
    const res = await this.post(
      'initialize',
      {
        protocolVersion: LEGACY_VERSION,
        capabilities: {},
        clientInfo: { name: 'taskrouter-bench-2025', version: '1.0.0' },
      },
      id,
    );
    const reply = await replyOf(res, id);
    if (!reply.result) throw new Error(`initialize: HTTP ${reply.status} ${JSON.stringify(reply.error)}`);
    const sid = res.headers['mcp-session-id'];
    if (typeof sid === 'string') this.sessionId = sid;
    const note = await request(this.url, {
      method: 'POST',
      ...this.message('notifications/initialized', {}, null),
      dispatcher: this.dispatcher,
    });
    await note.body.text();
    if (note.statusCode >= 300) throw new Error(`notifications/initialized: HTTP ${note.statusCode}`);
    return reply.result;
  }

  async request(method: string, params: Record<string, unknown>): Promise<RpcReply> {
    const id = randomUUID();
    return replyOf(await this.post(method, params, id), id);
  }

  callTool(name: string, args: Record<string, unknown>): Promise<RpcReply> {
    return this.request('tools/call', { name, arguments: args });
  }

  getTask(taskId: string): Promise<RpcReply> {
    return this.request('tasks/get', { taskId });
  }

  /**
   * Opens `subscriptions/listen` with this filter and reads its SSE stream in the background; each
   * message goes to `onMessage` with `Date.now()` when its event was read. Resolves once the stream is
   * acknowledged, with the filter the server honours. The dispatcher should have no body timeout.
   */
  async listen(
    notifications: Record<string, unknown>,
    onMessage: (message: Record<string, unknown>, receivedAt: number) => void = () => undefined,
  ): Promise<ListenStream> {
    const id = `listen-${randomUUID()}`;
    const { body, headers } = this.message('subscriptions/listen', { notifications }, id);
    const controller = new AbortController();
    const res = await request(this.url, {
      method: 'POST',
      headers,
      body,
      dispatcher: this.dispatcher,
      signal: controller.signal,
    });
    if (!String(res.headers['content-type']).startsWith('text/event-stream')) {
      throw new Error(
        `subscriptions/listen: HTTP ${res.statusCode} ${(await res.body.text()).slice(0, 300)}`,
      );
    }
    let acknowledge!: (filter: Record<string, unknown>) => void;
    let refuse!: (err: Error) => void;
    const acknowledged = new Promise<Record<string, unknown>>((resolve, reject) => {
      acknowledge = resolve;
      refuse = reject;
    });
    const reading = (async () => {
      await readSseMessages(res.body as unknown as AsyncIterable<Buffer>, (m) => {
        if (m.method === 'notifications/subscriptions/acknowledged') {
          acknowledge(((m.params as Record<string, unknown>).notifications ?? {}) as Record<string, unknown>);
        }
        // The parser calls back while the chunk that completed the event is fed: its arrival time.
        onMessage(m, Date.now());
      });
    })().then(
      () => refuse(new Error('subscriptions/listen: the stream ended before it was acknowledged')),
      (err: unknown) => refuse(err instanceof Error ? err : new Error(String(err))),
    );
    const stream: ListenStream = {
      acknowledged: await acknowledged,
      ended: reading,
      close() {
        controller.abort();
        return reading;
      },
    };
    return stream;
  }
}

export interface ListenStream {
  /** The filter the server honours (its acknowledgement). */
  acknowledged: Record<string, unknown>;
  /** Settles when the stream has ended, whoever ended it. */
  ended: Promise<void>;
  /** Aborts the request; resolves once the stream is done. */
  close(): Promise<void>;
}

/** The JSON-RPC response with `id` in a reply, JSON or SSE (read to its end with the gateway's reader). */
async function replyOf(res: Dispatcher.ResponseData, id: string): Promise<RpcReply> {
  let m: Omit<RpcReply, 'status'> | undefined;
  if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    await readSseMessages(res.body as unknown as AsyncIterable<Buffer>, (message) => {
      if (message.id === id) m = message as Omit<RpcReply, 'status'>;
    });
  } else {
    const text = await res.body.text();
    m = text ? (JSON.parse(text) as Omit<RpcReply, 'status'>) : undefined;
  }
  return {
    status: res.statusCode,
    ...(m?.result !== undefined && { result: m.result }),
    ...(m?.error !== undefined && { error: m.error }),
  };
}

/** Nearest-rank percentile of an unsorted sample; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export interface Summary {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

export function summarize(values: readonly number[]): Summary {
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    count: values.length,
    p50: round(percentile(values, 50)),
    p99: round(percentile(values, 99)),
    mean: round(values.length ? sum / values.length : Number.NaN),
    max: round(values.length ? Math.max(...values) : Number.NaN),
  };
}

export function round(value: number, digits = 1): number {
  if (!Number.isFinite(value)) return Number.NaN;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function ratio(a: number, b: number, digits = 2): number {
  return b > 0 ? round(a / b, digits) : Number.NaN;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  return pLimit(limit).map(items, fn);
}

export interface SideSample {
  /** Per successful operation, ms. */
  latencies: number[];
  /** Summed wall time of this side's blocks, ms. */
  wallMs: number;
  errors: string[];
}

/**
 * `n` operations per side in alternating blocks of `block` (ABBA: a b b a a b ...; with more sides, each
 * round in the reverse order of the last: a b c c b a ...), each block with
 * `concurrency` in flight, so a slow stretch of the shared machine lands on both sides alike. `op` throws
 * (or rejects) to count as an error; its latency is measured here. `i` counts each side's operations.
 */
export async function abba<S extends string>(
  sides: readonly S[],
  opts: { n: number; block: number; concurrency: number },
  op: (side: S, i: number) => Promise<void>,
  hooks: { blockStart?(side: S): void; blockEnd?(side: S): void } = {},
): Promise<Record<S, SideSample>> {
  const samples = Object.fromEntries(
    sides.map((s): [S, SideSample] => [s, { latencies: [], wallMs: 0, errors: [] }]),
  ) as Record<S, SideSample>;
  const done = Object.fromEntries(sides.map((s) => [s, 0])) as Record<S, number>;
  for (let b = 0; sides.some((s) => done[s] < opts.n); b++) {
    const order = b % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const count = Math.min(opts.block, opts.n - done[side]);
      if (count <= 0) continue;
      const offset = done[side];
      const into = samples[side];
      hooks.blockStart?.(side);
      const started = performance.now();
      await mapLimit(
        Array.from({ length: count }, (_, i) => offset + i),
        opts.concurrency,
        async (i) => {
          const t0 = performance.now();
          try {
            await op(side, i);
            into.latencies.push(performance.now() - t0);
          } catch (err) {
            into.errors.push(err instanceof Error ? err.message : String(err));
          }
        },
      );
      into.wallMs += performance.now() - started;
      hooks.blockEnd?.(side);
      done[side] += count;
    }
  }
  return samples;
}

/** Why a reply is not a successful result, or undefined when it is one. */
export function replyProblem(reply: RpcReply): string | undefined {
  if (reply.error) return `HTTP ${reply.status} error ${reply.error.code}: ${reply.error.message}`;
  if (reply.status !== 200 || !reply.result) return `HTTP ${reply.status} without a result`;
  if (reply.result.isError === true)
    return `tool error: ${JSON.stringify(reply.result.content).slice(0, 200)}`;
  return undefined;
}

/** Left-aligned first column, right-aligned others. */
export function table(rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? formatNumber(c) : c)));
  const widths: number[] = [];
  for (const r of cells) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return cells
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  '))
    .join('\n');
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return '-';
  return Number.isInteger(n) ? String(n) : n.toFixed(Math.abs(n) < 10 ? 2 : 1);
}

/** What a bench's JSON line says about the machine it ran on. */
export function machine(): { cpus: number; node: string; loadavg: number[] } {
  return { cpus: os.cpus().length, node: process.version, loadavg: os.loadavg() };
}

/**
 * The last lines of a bench's text report (errors, up to five of them, the gateway log's samples, the total
 * time since `t0`), and the report written to stdout; returns the total seconds for the JSON line.
 */
export function finishReport(
  out: string[],
  errors: { count: number; examples: readonly string[] },
  log: { warnings: number; errors: number; samples: string[] },
  t0: number,
): number {
  out.push(`errors: ${errors.count}; gateway log: ${log.warnings} warnings, ${log.errors} errors`);
  for (const e of errors.examples.slice(0, 5)) out.push(`  e.g. ${e}`);
  for (const s of log.samples) out.push(`  log: ${s}`);
  const totalSeconds = round((performance.now() - t0) / 1000, 1);
  out.push(`total ${totalSeconds} s`, '');
  process.stdout.write(`${out.join('\n')}\n`);
  return totalSeconds;
}

/** One sample of a Prometheus text exposition, summed over its series (undefined when absent). */
export function metricSum(text: string, name: string, reduce: 'sum' | 'max' = 'sum'): number | undefined {
  const values = text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
  if (values.length === 0) return undefined;
  return reduce === 'sum' ? values.reduce((a, b) => a + b, 0) : Math.max(...values);
}

/** A gateway process's `/metrics`, from its health port. */
export async function metricsOf(p: { healthPort: number }): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${p.healthPort}/metrics`, { signal: AbortSignal.timeout(5000) });
  return res.text();
}
