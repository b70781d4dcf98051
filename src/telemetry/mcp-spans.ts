/**
 * Trace context in MCP `_meta` (SEP-414: `traceparent`, `tracestate` and `baggage`, in the W3C formats,
 * the only unprefixed reserved keys) and the MCP spans of the OpenTelemetry conventions for MCP: one
 * SERVER span per request the gateway answers, whose parent is the context the client put in `_meta`
 * (the HTTP request's own context, if any, becomes a link: one HTTP request is not one MCP request), and
 * one CLIENT span per request the gateway sends upstream, whose context travels on in that request's
 * `_meta` and, through the HTTP instrumentation, in its `traceparent` header. Everything that runs
 * inside, the task workflow's start included, continues the client's trace.
 *
 * When this process does not trace (src/telemetry/tracing.ts) it makes no spans and stays out of the
 * way: the client's keys are relayed in `_meta` unchanged, and copied into the upstream request's
 * headers, so an upstream that traces still joins the client's trace. A malformed key is ignored (never
 * an error), and never copied into a header.
 */
import type { Attributes, Link, Span } from '@opentelemetry/api';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { tracingEnabled } from './tracing';

export const TRACE_META_KEYS = ['traceparent', 'tracestate', 'baggage'] as const;
type TraceKey = (typeof TRACE_META_KEYS)[number];

/** W3C Trace Context: version-traceid-parentid-flags, lower-case hex; version ff is invalid. */
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
/** Visible ASCII and spaces only: what a header value may hold (no CR/LF, nothing to smuggle). */
const HEADER_SAFE = /^[\x20-\x7e]*$/;
/** The W3C limits: 32 list members of at most 256 characters; baggage at most 8192 bytes. */
const MAX_LENGTH: Record<TraceKey, number> = { traceparent: 55, tracestate: 8192, baggage: 8192 };

const tracer = () => trace.getTracer('taskrouter');

/** The well-formed trace keys of a `_meta` (an invalid `traceparent` voids its `tracestate`). */
export function traceCarrierOf(meta: Record<string, unknown> | undefined): Partial<Record<TraceKey, string>> {
  const out: Partial<Record<TraceKey, string>> = {};
  for (const key of TRACE_META_KEYS) {
    const value = meta?.[key];
    if (typeof value === 'string' && value.length <= MAX_LENGTH[key] && HEADER_SAFE.test(value))
      out[key] = value.trim();
  }
  if (out.traceparent !== undefined && !TRACEPARENT.test(out.traceparent)) delete out.traceparent;
  if (out.traceparent === undefined) delete out.tracestate;
  return out;
}

/**
 * The active trace context as W3C keys (empty when this process does not trace): saved where the work
 * goes on later in another context (a task's watch-hub row, whose polls continue the task's trace).
 */
export function activeTraceCarrier(): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (tracingEnabled()) propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * Runs `work` under the context a carrier saved by activeTraceCarrier holds; without one, under no trace
 * (not whatever is active where it was called: the hub starts one task's poll from the end of another's).
 */
export function withTraceCarrier<T>(carrier: Record<string, unknown> | undefined, work: () => T): T {
  if (!tracingEnabled()) return work();
  const keys = traceCarrierOf(carrier);
  if (keys.traceparent === undefined) return context.with(ROOT_CONTEXT, work);
  return context.with(propagation.extract(ROOT_CONTEXT, keys), work);
}

export interface McpOperation {
  /** `mcp.method.name`. */
  method: string;
  /** The request's `params` (its `_meta` carries the client's context; `name` names tools and prompts). */
  params: Record<string, unknown>;
  /** `mcp.protocol.version`, when known. */
  protocolVersion?: string;
}

/**
 * Runs `work` as the SERVER span of one MCP request the gateway answers, under the client's `_meta`
 * context (when valid) linked to the ambient (HTTP) one, else under the ambient context.
 */
export async function inMcpServerSpan<T>(op: McpOperation, work: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return work();
  const ambient = context.active();
  const carrier = traceCarrierOf(metaOf(op.params));
  const fromMeta = propagation.extract(ROOT_CONTEXT, carrier);
  const metaParent = trace.getSpanContext(fromMeta);
  const ambientSpan = trace.getSpanContext(ambient);
  const parent = metaParent && trace.isSpanContextValid(metaParent) ? fromMeta : ambient;
  const links: Link[] =
    parent === fromMeta && ambientSpan && trace.isSpanContextValid(ambientSpan)
      ? [{ context: ambientSpan }]
      : [];
  const span = tracer().startSpan(
    spanName(op),
    { kind: SpanKind.SERVER, attributes: attributesOf(op), links },
    parent,
  );
  return finish(span, () => context.with(trace.setSpan(parent, span), work));
}

/**
 * Runs one upstream request as a CLIENT span and hands `work` the `_meta` and extra headers to send:
 * the span's context in both (the headers come from the HTTP instrumentation, which writes them itself);
 * without tracing, the client's relayed keys in `_meta` and copied into the headers.
 */
export async function inMcpClientSpan<T>(
  op: McpOperation & { params: { _meta: Record<string, unknown> } },
  work: (meta: Record<string, unknown>, headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  if (!tracingEnabled()) return work(op.params._meta, traceCarrierOf(op.params._meta));
  const span = tracer().startSpan(spanName(op), { kind: SpanKind.CLIENT, attributes: attributesOf(op) });
  const active = trace.setSpan(context.active(), span);
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  const meta: Record<string, unknown> = { ...op.params._meta };
  for (const key of TRACE_META_KEYS) delete meta[key];
  Object.assign(meta, carrier);
  return finish(span, () => context.with(active, () => work(meta, {})));
}

/** `{method} {target}`: the tool or prompt name is the target; task ids and URIs never are. */
function spanName(op: McpOperation): string {
  const target = targetOf(op);
  return target === undefined ? op.method : `${op.method} ${target}`;
}

/** Tool and prompt names SHOULD be at most 128 characters; a longer one (a client's guess) names no span. */
const MAX_TARGET_LENGTH = 128;

function targetOf(op: McpOperation): string | undefined {
  const name = op.params.name;
  return (op.method === 'tools/call' || op.method === 'prompts/get') &&
    typeof name === 'string' &&
    name.length <= MAX_TARGET_LENGTH
    ? name
    : undefined;
}

function attributesOf(op: McpOperation): Attributes {
  const target = targetOf(op);
  return {
    'mcp.method.name': op.method,
    ...(op.protocolVersion !== undefined && { 'mcp.protocol.version': op.protocolVersion }),
    ...(op.method === 'tools/call' && { 'gen_ai.operation.name': 'execute_tool' }),
    ...(target !== undefined && {
      [op.method === 'tools/call' ? 'gen_ai.tool.name' : 'gen_ai.prompt.name']: target,
    }),
  };
}

function metaOf(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const meta = params._meta;
  return typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : undefined;
}

/**
 * Ends the span with the outcome: a JSON-RPC error's code, a tool's `isError`, or success. Only codes and
 * error names are recorded, never messages: an upstream's message may quote arguments or results.
 */
async function finish<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    const result = await work();
    const failure = failureOf(result);
    if (failure !== undefined) failed(span, failure);
    return result;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    failed(span, typeof code === 'number' ? code : errorName(err));
    throw err;
  } finally {
    span.end();
  }
}

function failed(span: Span, failure: number | string): void {
  span.setAttribute('error.type', String(failure));
  if (typeof failure === 'number') span.setAttribute('rpc.response.status_code', String(failure));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** An upstream reply carrying a JSON-RPC error (its code), or a tool result with `isError`. */
function failureOf(result: unknown): number | string | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const r = result as { kind?: unknown; error?: { code?: unknown }; result?: unknown };
  if (r.kind === 'error' && typeof r.error?.code === 'number') return r.error.code;
  const toolResult = r.kind === 'result' ? r.result : result;
  return (toolResult as { isError?: unknown } | undefined)?.isError === true ? 'tool_error' : undefined;
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : 'Error';
}
