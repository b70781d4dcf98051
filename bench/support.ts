/**
 * Small helpers for the benchmarks: a bare MCP 2026-07-28 HTTP client (the same code path for the
 * gateway and for the upstream, so client overhead cancels out of the ratios), percentiles, a FIFO
 * semaphore and a log sink that counts the gateway's warnings instead of printing them.
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { META, PROTOCOL_VERSION, requestHeaders, TASKS_EXTENSION } from '../src/protocol';

export interface RpcReply {
  status: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

const TASKS_CAPS = { extensions: { [TASKS_EXTENSION]: {} } };

/** One JSON-RPC request per POST, with the `_meta` envelope and mirrored headers the spec requires. */
export class McpHttpClient {
  private readonly capabilities: Record<string, unknown>;

  /**
   * `tasks: false` leaves the Tasks extension out of the client capabilities (ordinary calls only);
   * `token` is sent as a bearer token (a function: a token per request).
   */
  constructor(
    readonly url: string,
    private readonly dispatcher: Dispatcher,
    opts: { tasks?: boolean; token?: string | (() => string) } = {},
  ) {
    this.capabilities = opts.tasks === false ? {} : TASKS_CAPS;
    this.token = opts.token;
  }

  private readonly token: string | (() => string) | undefined;

  async request(method: string, params: Record<string, unknown>): Promise<RpcReply> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: randomUUID(),
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
    const headers: Record<string, string> = { ...requestHeaders(method, params, PROTOCOL_VERSION) };
    if (this.token !== undefined) {
      headers['authorization'] = `Bearer ${typeof this.token === 'string' ? this.token : this.token()}`;
    }
    const res = await request(this.url, { method: 'POST', headers, body, dispatcher: this.dispatcher });
    const text = await res.body.text();
    const parsed = (text ? JSON.parse(text) : {}) as Omit<RpcReply, 'status'>;
    return {
      status: res.statusCode,
      ...(parsed.result !== undefined && { result: parsed.result }),
      ...(parsed.error !== undefined && { error: parsed.error }),
    };
  }

  callTool(name: string, args: Record<string, unknown>): Promise<RpcReply> {
    return this.request('tools/call', { name, arguments: args });
  }

  getTask(taskId: string): Promise<RpcReply> {
    return this.request('tasks/get', { taskId });
  }
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

/** FIFO semaphore: bounds the polls in flight so the measuring client does not dominate the box. */
export class Semaphore {
  private waiting: Array<() => void> = [];
  private free: number;

  constructor(size: number) {
    this.free = size;
  }

  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
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
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T, i);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/** A pino destination that counts warnings and errors and keeps a few samples for the report. */
export class CountingLogSink {
  warnings = 0;
  errors = 0;
  readonly samples: string[] = [];

  write(line: string): void {
    let level = 0;
    let msg = line.trim();
    try {
      const parsed = JSON.parse(line) as { level?: number; msg?: string; err?: unknown };
      level = parsed.level ?? 0;
      msg = `${parsed.msg ?? ''}${parsed.err === undefined ? '' : ` ${JSON.stringify(parsed.err)}`}`;
    } catch {
      // not JSON: keep the raw line
    }
    if (level >= 50) this.errors++;
    else if (level >= 40) this.warnings++;
    if (level >= 40 && this.samples.length < 5) this.samples.push(msg.slice(0, 300));
  }
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
