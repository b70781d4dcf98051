/**
 * A task-capable example upstream MCP server (2026-07-28, Streamable HTTP) on raw Node `http`.
 * Used by the gateway demo, the integration tests and the conformance suite run through the gateway.
 *
 * This module does the HTTP and JSON-RPC framing; envelope.ts checks `_meta` and headers, handlers.ts
 * answers the methods, tools.ts holds the tasks tools, fixtures/ the conformance suite's other fixtures
 * (tools, resources, prompts, completion, subscriptions) and task-store.ts the tasks.
 *
 * Responses are JSON, or SSE when the client accepts it and either `responseMode` is `sse` or the
 * request emits notifications (progress, log messages) before its response. `subscriptions/listen`
 * is always a long-lived SSE stream.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Implementation, JsonRpcRequest, RequestId } from '../../src/protocol';
import { ERROR, JsonRpcClientMessageSchema, META, ParamsSchema, ProtocolError } from '../../src/protocol';
import { checkEnvelope } from './envelope';
import type { HandlerConfig, HandlerContext, ResultBody, ToolCallRecord } from './handlers';
import type { SubscriptionFilter } from './fixtures/subscriptions';
import { SubscriptionHub, agreedFilter } from './fixtures/subscriptions';
import { FIXTURE_METHOD, handle, knownMethods } from './handlers';
import type { Notify } from './kit';
import { InputCollector } from './mrtr';
import { TaskStore } from './task-store';

export type ResponseMode = 'json' | 'sse';

export interface ExampleUpstreamOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  host?: string;
  /** `sse` answers each request with a one-event `text/event-stream` (if the client accepts it). */
  responseMode?: ResponseMode;
  /** `pollIntervalMs` suggested on tasks. Default 1000. */
  pollIntervalMs?: number;
  /** Task lifetime from `createdAt`. Default 3 600 000 (1 h). */
  ttlMs?: number;
  /** Cache hint `ttlMs` on `server/discover` and `tools/list`. Default 60 000. */
  discoverTtlMs?: number;
  /** Advertise `io.modelcontextprotocol/tasks` in `server/discover`. Default true. */
  advertiseTasks?: boolean;
  /** How long `failing_job`, `protocol_error_job` and `test_tool_with_task` run as tasks. Default 1000. */
  jobDurationMs?: number;
  /** `serverInfo.name` on every result. Default `example-upstream`. */
  name?: string;
  /**
   * Serve the conformance suite's "everything server" fixtures (content/MRTR/diagnostic tools,
   * resources, prompts, completion, subscriptions/listen) besides the tasks tools. Default true.
   */
  conformanceFixtures?: boolean;
  /**
   * Sees every well-formed JSON-RPC request with its HTTP headers, before any check (tests count what
   * reached the upstream, and read what a gateway forwarded).
   */
  onRequest?: (request: JsonRpcRequest, headers: IncomingHttpHeaders) => void;
  /**
   * Answer `GET /stats` with the stats as JSON (calls with their arguments included), for tests that
   * run the upstream as a separate process. Default false.
   */
  exposeStats?: boolean;
}

export interface ExampleUpstreamStats {
  /** `tools/call` requests that passed the envelope checks, per tool name. */
  toolCalls: Record<string, number>;
  tasksGet: number;
  tasksUpdate: number;
  tasksCancel: number;
  /** Every task id minted, in order. */
  taskIds: string[];
  /** Every `tools/call` that reached a tool, in order (name, arguments, task id). */
  calls: ToolCallRecord[];
  /** Every well-formed JSON-RPC request, per method, counted before any envelope or header check. */
  requests: Record<string, number>;
  /** Headers of the last POST, as Node exposes them (lower-case names). */
  lastHeaders: IncomingHttpHeaders | undefined;
  /** `params._meta` of the last request that had one, to check what a gateway forwarded. */
  lastMeta: Record<string, unknown> | undefined;
}

export interface ExampleUpstream {
  /** The MCP endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  url: string;
  port: number;
  stats: ExampleUpstreamStats;
  setAdvertiseTasks(advertise: boolean): void;
  setResponseMode(mode: ResponseMode): void;
  /** While offline, every connection is dropped unanswered (an outage that keeps the tasks). */
  setOffline(offline: boolean): void;
  resetStats(): void;
  /** Lists one more tool (listed only, not callable) and announces it on open listen streams. */
  addTool(definition: Record<string, unknown>): void;
  /** Open `subscriptions/listen` streams (tests wait for a gateway's watcher before changing a list). */
  listenStreams(): number;
  close(): Promise<void>;
}

const MCP_PATH = '/mcp';
const STATS_PATH = '/stats';
const MAX_BODY_BYTES = 1024 * 1024;
const SERVER_VERSION = '0.1.0';

interface Reply {
  status: number;
  /** Undefined for the 202 of a notification. */
  body?: Record<string, unknown>;
  /** Set for an accepted `subscriptions/listen`: serve() holds the stream open. */
  listen?: { id: RequestId; filter: SubscriptionFilter };
}

/**
 * A request's response stream: JSON by default, switched to SSE on the first notification (when the
 * client accepts SSE; otherwise notifications are dropped, as JSON has room for one message only).
 */
class ResponseChannel {
  private sse = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly sseAllowed: boolean,
  ) {}

  readonly notify: Notify = (method, params) => {
    if (!this.sseAllowed || this.res.destroyed || this.res.writableEnded) return;
    this.startSse();
    this.res.write(sseEvent({ jsonrpc: '2.0', method, params }));
  };

  /** Writes a message on an SSE stream, starting it if needed; false once the client has gone. */
  write(message: Record<string, unknown>): boolean {
    if (this.res.destroyed || this.res.writableEnded) return false;
    this.startSse();
    this.res.write(sseEvent(message));
    return true;
  }

  /** The final response: an SSE event when streaming (or preferred), else a JSON body. */
  end(status: number, body: Record<string, unknown>, preferSse: boolean): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    if (this.sse || (preferSse && status === 200 && this.sseAllowed)) {
      this.startSse();
      this.res.end(sseEvent(body));
    } else {
      writeJson(this.res, status, body);
    }
  }

  private startSse(): void {
    if (this.sse) return;
    this.sse = true;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
  }
}

function emptyStats(): ExampleUpstreamStats {
  return {
    toolCalls: {},
    tasksGet: 0,
    tasksUpdate: 0,
    tasksCancel: 0,
    taskIds: [],
    calls: [],
    requests: {},
    lastHeaders: undefined,
    lastMeta: undefined,
  };
}

export async function startExampleUpstream(options: ExampleUpstreamOptions = {}): Promise<ExampleUpstream> {
  const serverInfo: Implementation = { name: options.name ?? 'example-upstream', version: SERVER_VERSION };
  let responseMode: ResponseMode = options.responseMode ?? 'json';
  const host = options.host ?? '127.0.0.1';
  const config: HandlerConfig = {
    advertiseTasks: options.advertiseTasks ?? true,
    conformanceFixtures: options.conformanceFixtures ?? true,
    discoverTtlMs: options.discoverTtlMs ?? 60_000,
    jobDurationMs: options.jobDurationMs ?? 1000,
    addedTools: [],
  };
  const stats = emptyStats();
  const store = new TaskStore({
    ttlMs: options.ttlMs ?? 3_600_000,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
  });
  // Aborted by close(): synchronous `slow_compute` calls stop sleeping instead of holding the process.
  const shutdown = new AbortController();

  const hub = new SubscriptionHub();
  const collector = new InputCollector();
  const handlerContext = (
    requestSignal: AbortSignal,
    notify: Notify,
    headers: IncomingHttpHeaders,
  ): HandlerContext => ({
    config,
    stats,
    store,
    collector,
    sleep: (ms) => sleep(ms, [requestSignal, shutdown.signal]),
    notify,
    listChanged: (kind) => hub.listChanged(kind),
    resourceUpdated: (uri) => hub.resourceUpdated(uri),
    headers,
  });

  let offline = false;
  const server = createServer((req, res) => {
    if (offline) {
      req.socket.destroy();
      return;
    }
    serve(req, res).catch((err: unknown) => {
      // Only reachable if writing the response itself failed; the socket is the best we can close.
      if (!res.headersSent) writeJson(res, 500, errorBody(null, -32603, String(err)));
      else res.destroy();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (path === STATS_PATH && options.exposeStats === true && req.method === 'GET') {
      writeJson(res, 200, { ...stats });
      return;
    }
    if (path !== MCP_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    if (req.method !== 'POST') {
      // Streamable HTTP 2026-07-28 has no GET stream and no DELETE (no sessions).
      res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' }).end('Method not allowed');
      return;
    }
    stats.lastHeaders = { ...req.headers };
    if (!isAllowedOrigin(req.headers.origin)) {
      writeJson(res, 403, errorBody(null, -32600, 'Forbidden origin'));
      return;
    }
    if (isLoopback(host) && !isLoopbackHostHeader(req.headers.host)) {
      // DNS rebinding: a browser tricked into resolving evil.example.com to 127.0.0.1 still sends that Host.
      writeJson(res, 403, errorBody(null, -32600, 'Forbidden host'));
      return;
    }
    const raw = await readBody(req);
    if (raw === undefined) {
      writeJson(res, 413, errorBody(null, -32600, 'Request body too large'));
      return;
    }
    // The request is cancelled when the client goes away before we answered (HTTP has no cancel message).
    const requestAbort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) requestAbort.abort();
    });
    const channel = new ResponseChannel(res, accepts(req, 'text/event-stream'));
    const reply = await processMessage(raw, req.headers, requestAbort.signal, channel.notify);
    if (reply.listen) {
      listen(res, channel, reply.listen.id, reply.listen.filter);
      return;
    }
    if (reply.body === undefined) {
      res.writeHead(reply.status).end();
      return;
    }
    channel.end(reply.status, reply.body, responseMode === 'sse');
  }

  /** Holds a `subscriptions/listen` stream open until the client closes it or the server shuts down. */
  function listen(res: ServerResponse, channel: ResponseChannel, id: RequestId, filter: SubscriptionFilter) {
    const unsubscribe = hub.open({
      id,
      filter,
      send: (message) => void channel.write(message),
      finish: () => {
        channel.end(
          200,
          {
            jsonrpc: '2.0',
            id,
            result: withServerInfo({ resultType: 'complete' }, { [META.subscriptionId]: id }),
          },
          true,
        );
      },
    });
    res.on('close', unsubscribe);
  }

  async function processMessage(
    raw: string,
    headers: IncomingHttpHeaders,
    signal: AbortSignal,
    notify: Notify,
  ): Promise<Reply> {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return { status: 400, body: errorBody(null, ERROR.ParseError.code, 'Parse error') };
    }
    const message = JsonRpcClientMessageSchema.safeParse(json);
    if (!message.success) {
      const id = requestIdOf(json);
      return { status: 400, body: errorBody(id, ERROR.InvalidRequest.code, 'Invalid JSON-RPC request') };
    }
    if (!('id' in message.data)) {
      // The core defines no client notifications over HTTP; accept and ignore any, as the spec allows.
      return { status: 202 };
    }
    const request: JsonRpcRequest = message.data;
    stats.requests[request.method] = (stats.requests[request.method] ?? 0) + 1;
    options.onRequest?.(request, headers);
    const params = ParamsSchema.parse(request.params ?? {});
    const metaValue = params._meta;
    if (typeof metaValue === 'object' && metaValue !== null) stats.lastMeta = { ...metaValue };
    try {
      // Unknown methods first: the suite expects -32601 whatever else is wrong with the request.
      if (!knownMethods(config).has(request.method)) {
        throw new ProtocolError('MethodNotFound', `Method not found: ${request.method}`);
      }
      const meta = checkEnvelope(request.method, params, headers);
      if (request.method === FIXTURE_METHOD.subscriptionsListen) {
        if (!accepts({ headers }, 'text/event-stream')) {
          throw new ProtocolError('InvalidRequest', 'subscriptions/listen needs Accept: text/event-stream');
        }
        return { status: 200, listen: { id: request.id, filter: agreedFilter(params.notifications) } };
      }
      const result = await handle(handlerContext(signal, notify, headers), request.method, params, meta);
      return { status: 200, body: { jsonrpc: '2.0', id: request.id, result: withServerInfo(result) } };
    } catch (err) {
      return errorReply(request.id, err);
    }
  }

  function withServerInfo(result: ResultBody, extraMeta: Record<string, unknown> = {}): ResultBody {
    const own = (result._meta ?? {}) as Record<string, unknown>;
    return { ...result, _meta: { ...own, ...extraMeta, [META.serverInfo]: serverInfo } };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${urlHost}:${address.port}${MCP_PATH}`,
    port: address.port,
    stats,
    setAdvertiseTasks(advertise) {
      config.advertiseTasks = advertise;
    },
    setResponseMode(mode) {
      responseMode = mode;
    },
    setOffline(value) {
      offline = value;
    },
    resetStats() {
      Object.assign(stats, emptyStats());
    },
    addTool(definition) {
      config.addedTools.push(definition);
      hub.listChanged('tools');
    },
    listenStreams() {
      return hub.size;
    },
    async close() {
      shutdown.abort();
      hub.closeAll();
      store.dispose();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function errorReply(id: RequestId, err: unknown): Reply {
  if (err instanceof ProtocolError) {
    const body = errorBody(id, err.code, err.message, err.data);
    return { status: err.httpStatus, body };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { status: ERROR.InternalError.httpStatus, body: errorBody(id, ERROR.InternalError.code, message) };
}

function errorBody(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/** Echo the id of a malformed request when one can be read, as errors must carry the request id. */
function requestIdOf(json: unknown): RequestId | null {
  if (typeof json !== 'object' || json === null || !('id' in json)) return null;
  const id = json.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null;
}

function writeJson(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** One SSE `message` event carrying a JSON-RPC message. */
function sseEvent(message: Record<string, unknown>): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

function accepts(req: Pick<IncomingMessage, 'headers'>, type: string): boolean {
  const accept = req.headers.accept;
  return accept === undefined || accept.includes(type) || accept.includes('*/*');
}

/** DNS-rebinding guard for a server bound to localhost: browsers send Origin, local tools do not. */
function isAllowedOrigin(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    const { hostname } = new URL(origin);
    return hostname === 'localhost' || hostname === '127.0.0.1' || hostname === '[::1]';
  } catch {
    return false;
  }
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function isLoopback(hostname: string): boolean {
  return LOOPBACK_NAMES.has(hostname.toLowerCase());
}

/** Whether a Host header names this machine by a loopback name (any port); absent counts as fine. */
function isLoopbackHostHeader(hostHeader: string | undefined): boolean {
  if (hostHeader === undefined) return true;
  try {
    return isLoopback(new URL(`http://${hostHeader}`).hostname);
  } catch {
    return false;
  }
}

/** The body as text, or undefined when it exceeds MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sleep(ms: number, signals: AbortSignal[]): Promise<void> {
  const signal = AbortSignal.any(signals);
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Error('Request aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    timer.unref();
    function onAbort(): void {
      clearTimeout(timer);
      reject(new Error('Request aborted'));
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
