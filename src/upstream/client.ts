/**
 * The gateway's MCP client toward upstream servers. The gateway speaks 2026-07-28 to it whatever the
 * upstream speaks: each upstream's era is remembered (src/upstream/eras/switch.ts), 2026-07-28 upstreams
 * get the request as it is (eras/2026-07-28.ts), and 2025-era upstreams get it translated by
 * eras/2025-11-25, which answers as a 2026-07-28 upstream with the Tasks extension would. Both adapters
 * reach the upstream through its transport (src/upstream/transport; HTTP today).
 */
import type { UpstreamAnswerLimits } from '../config/upstream-traffic';
import { DEFAULT_ANSWER_LIMITS } from '../config/upstream-traffic';
import type { StdioConfig } from '../config/stdio';
import { isStdioUrl, StdioConfigSchema } from '../config/stdio';
import type { Implementation, Meta, UpstreamProbe } from '../protocol';
import type { AddressPolicy } from './address-policy';
import { UPSTREAM_METHODS } from '../protocol';
import { inMcpClientSpan } from '../telemetry/mcp-spans';
import { upstreamCallSeconds, upstreamCalls } from '../telemetry/metrics';
import type { AnswerPreparation } from './answer-parse';
import { AnswerThreads } from './answer-threads';
import type { AnswerBounds, AnswerContext } from './answers';
import { AnswerParser } from './answers';
import { CallDeadline } from './deadline';
import type { ResumePoint, UpstreamEndpoint, UpstreamReply, UpstreamRequestOptions } from './endpoint';
import { EraSwitch } from './eras/switch';
import {
  AnswerPreparationRefused,
  UpstreamAnswerTooLarge,
  UpstreamDeadlineExceeded,
  UpstreamTransportError,
} from './errors';
import { Era20251125Upstream } from './eras/2025-11-25';
import type { Era20251125SessionStore } from './eras/2025-11-25/sessions';
import { MemorySessionStore } from './eras/2025-11-25/memory-store';
import { sendEra20260728 } from './eras/2026-07-28';
import { HttpTransport } from './transport/http';
import { StdioTransport } from './transport/stdio';
import type { UpstreamTransport } from './transport/types';

export type { ResumePoint, UpstreamEndpoint, UpstreamReply, UpstreamRequestOptions } from './endpoint';

export interface UpstreamClientOptions {
  timeoutMs?: number;
  /** One connection pool per project upstream (`upstreams.pool*`, src/upstream/pools.ts). */
  pools?: { connections: number; idleMs: number; maxPools: number };
  /** The gateway's identity in a 2025-era `initialize` (`clientInfo`). */
  clientInfo?: Implementation;
  /** Where sessions with 2025-era upstreams are shared between processes; in memory when absent. */
  legacySessions?: Era20251125SessionStore;
  /** Records what probing an upstream found out, under its control-plane id. */
  recordProbe?: (upstreamId: string, probe: UpstreamProbe) => Promise<void>;
  /** Problems nobody is waiting for (a session that could not be ended, a probe not recorded). */
  onWarning?: (message: string, detail: Record<string, unknown>) => void;
  /** Bounds on answers (the `upstreams` section); each absent one has its configuration default. */
  answerLimits?: Partial<UpstreamAnswerLimits>;
  /**
   * The worker-thread script that parses large answers (the gateway's `answer-thread`, which also cuts a
   * `tools/call` result to the project's limit there). Absent: every answer is parsed on the event loop.
   */
  answerThreadScript?: string;
  /**
   * Where upstreams whose address no operator set may connect (address-policy.ts); checked on every
   * connection to them. Absent: no check (unit tests of the client).
   */
  addressPolicy?: AddressPolicy;
  /**
   * Local upstreams (`stdio:` addresses): the operator's catalog and process settings, and where their
   * stderr goes. Absent: an empty catalog (every stdio upstream refused).
   */
  stdio?: { config: StdioConfig; log: (detail: Record<string, unknown>, message: string) => void };
}

const DEFAULT_CLIENT_INFO: Implementation = { name: 'taskrouter', version: '0' };

/** The methods the gateway sends upstream; anything else is counted as `other`, so labels stay bounded. */

/** A closed set: whether the request may have reached the upstream is what an operator acts on. */
function failureOutcome(err: unknown, signal: AbortSignal | undefined): string {
  if (err instanceof UpstreamAnswerTooLarge) return 'too_large';
  // The upstream answered; the gateway's own processing refused the result (e.g. ResultTooLarge).
  if (err instanceof AnswerPreparationRefused) return 'ok';
  if (err instanceof UpstreamDeadlineExceeded) return 'deadline';
  if (signal?.aborted) return 'cancelled';
  if (err instanceof UpstreamTransportError && !err.mayHaveReached) return 'unreachable';
  return 'failed';
}

export class UpstreamClient {
  /** How messages reach upstreams (src/upstream/transport): HTTP, and stdio for local processes. */
  private readonly transport: UpstreamTransport;
  readonly stdio: StdioTransport;
  private readonly era20251125: Era20251125Upstream;
  /** Local processes' sessions live with the process, in this replica only: their own adapter. */
  private readonly era20251125Stdio: Era20251125Upstream;
  private readonly eras: EraSwitch;
  private readonly limits: UpstreamAnswerLimits;
  private readonly threads: AnswerThreads | undefined;
  private readonly parser: AnswerParser;

  constructor(opts: UpstreamClientOptions = {}) {
    this.limits = { ...DEFAULT_ANSWER_LIMITS, ...opts.answerLimits };
    this.threads =
      opts.answerThreadScript !== undefined && this.limits.answerThreads > 0
        ? new AnswerThreads({ script: opts.answerThreadScript, threads: this.limits.answerThreads })
        : undefined;
    this.parser = new AnswerParser({
      offThreadBytes: this.limits.offThreadBytes,
      ...(this.threads && { threads: this.threads }),
    });
    const answers = (endpoint: UpstreamEndpoint, prepare?: AnswerPreparation) =>
      this.answerContext(endpoint, prepare);
    // The address policy is one option of the connection: its lookup refuses before the socket opens.
    this.transport = new HttpTransport({
      timeoutMs: opts.timeoutMs ?? 60_000,
      pools: {
        connections: opts.pools?.connections ?? 128,
        idleMs: opts.pools?.idleMs ?? 60_000,
        maxPools: opts.pools?.maxPools ?? 1_000,
      },
      checkedConnect: opts.addressPolicy?.connector(),
    });
    const warn = opts.onWarning ?? (() => {});
    this.era20251125 = new Era20251125Upstream({
      transport: this.transport,
      store: opts.legacySessions ?? new MemorySessionStore(),
      clientInfo: opts.clientInfo ?? DEFAULT_CLIENT_INFO,
      warn,
      answers,
    });
    this.stdio = new StdioTransport({
      config: opts.stdio?.config ?? StdioConfigSchema.parse({}),
      maxLineBytes: this.limits.maxResponseBytes,
      log: opts.stdio?.log ?? (() => {}),
      timeoutMs: opts.timeoutMs ?? 60_000,
    });
    this.era20251125Stdio = new Era20251125Upstream({
      transport: this.stdio,
      store: new MemorySessionStore(),
      clientInfo: opts.clientInfo ?? DEFAULT_CLIENT_INFO,
      warn,
      answers,
    });
    this.eras = new EraSwitch({
      era20260728: (endpoint, method, params, o) =>
        sendEra20260728(this.transport, endpoint, method, params, { ...o, answers }),
      era20251125: {
        send: (endpoint, method, params, o) => this.era2025Of(endpoint).send(endpoint, method, params, o),
        handshake: (endpoint, signal) => this.era2025Of(endpoint).handshake(endpoint, signal),
      },
      ...(opts.recordProbe && { record: opts.recordProbe }),
      warn,
    });
  }

  /** Ends the sessions this process opened with 2025-era upstreams (unless tasks live in them), then closes. */
  async close(): Promise<void> {
    await this.era20251125.close();
    await this.era20251125Stdio.close();
    await this.transport.close();
    await this.stdio.close();
    await this.threads?.close();
  }

  /**
   * Sends one 2026-07-28 request. `params._meta` must already hold the per-request envelope for this
   * hop. Resolves with the result or the JSON-RPC error; rejects with UpstreamTransportError otherwise:
   * UpstreamAnswerTooLarge when the answer passed its bounds, UpstreamDeadlineExceeded when it did not
   * complete within the call's total deadline (each relayed `notifications/progress` starts it again),
   * or AnswerPreparationRefused when `opts.prepare` refused the result.
   */
  async send(
    endpoint: UpstreamEndpoint,
    method: string,
    params: Record<string, unknown> & { _meta: Meta },
    opts: UpstreamRequestOptions = {},
  ): Promise<UpstreamReply> {
    // Counted here, once per request in 2026-07-28 terms, whichever era's exchanges carry it.
    const labels = {
      project: endpoint.project ?? '',
      upstream: endpoint.alias,
      method: UPSTREAM_METHODS.has(method) ? method : 'other',
    };
    const stopTimer = upstreamCallSeconds.startTimer(labels);
    const { ms, limit } = opts.deadline ?? this.deadlineOf(endpoint);
    const deadline = new CallDeadline(
      ms,
      () => new UpstreamDeadlineExceeded(endpoint.alias, limit, ms),
      opts.signal,
    );
    const relay = opts.onNotification;
    try {
      // One MCP client span per request; its trace context goes upstream in `_meta` and in the headers.
      const reply = await inMcpClientSpan({ method, params }, (_meta, traceHeaders) =>
        deadline.race(
          this.eras.send(
            endpoint,
            method,
            { ...params, _meta },
            {
              ...opts,
              traceHeaders,
              signal: deadline.signal,
              // Progress says the tool is working: its answer gets the whole deadline again.
              onNotification: (message) => {
                if (message.method === 'notifications/progress') deadline.restart();
                // Whatever the relay answers is handed back to the reader (back-pressure may wait on it).
                return relay?.(message);
              },
            },
          ),
        ),
      );
      upstreamCalls.inc({ ...labels, outcome: reply.kind === 'result' ? 'ok' : 'error' });
      return reply;
    } catch (err) {
      const failure = deadline.expired ? deadline.error : err;
      upstreamCalls.inc({ ...labels, outcome: failureOutcome(failure, opts.signal) });
      throw failure;
    } finally {
      deadline.clear();
      stopTimer();
    }
  }

  /**
   * Takes up the answer of a tools/call sent on a 2025-era session by another process (a hosted call's
   * worker that died): undefined when it cannot be (the session is gone or replaced, or the upstream
   * keeps no streams). Rejects like `send` when the upstream cannot be reached.
   */
  async resume(
    endpoint: UpstreamEndpoint,
    point: ResumePoint,
    opts: UpstreamRequestOptions = {},
  ): Promise<UpstreamReply | undefined> {
    return this.era20251125.resumeCall(endpoint, point, opts);
  }

  /**
   * Holds a 2026-07-28 `subscriptions/listen` stream open, handing each notification to `onNotification`,
   * until the upstream ends it (resolves with its final reply) or `signal` aborts (rejects). A 2025-era
   * upstream's list changes are watched on a session of the watch's own (eras/2025-11-25/list-watch.ts), handed
   * over in the same shape.
   */
  async listen(
    endpoint: UpstreamEndpoint,
    params: Record<string, unknown> & { _meta: Meta },
    onNotification: (message: Record<string, unknown>) => void,
    signal: AbortSignal,
  ): Promise<UpstreamReply> {
    if (isStdioUrl(endpoint.url) || this.eras.eraOf(endpoint) === 'legacy') {
      await this.era2025Of(endpoint).watchLists(endpoint, onNotification, signal);
      return { kind: 'result', result: { resultType: 'complete' } };
    }
    return sendEra20260728(this.transport, endpoint, 'subscriptions/listen', params, {
      signal,
      onNotification,
      answers: (e) => this.answerContext(e),
      carries: 'notifications',
    });
  }

  /** How an answer from `endpoint` is read: the instance's bounds, lowered by the project's own. */
  private answerContext(endpoint: UpstreamEndpoint, prepare?: AnswerPreparation): AnswerContext {
    return { parser: this.parser, bounds: this.boundsOf(endpoint), alias: endpoint.alias, prepare };
  }

  private boundsOf(endpoint: UpstreamEndpoint): AnswerBounds {
    const own = endpoint.answerLimits?.maxResponseBytes;
    // A project's value above the instance maximum (stored before it was lowered) counts as the maximum.
    const lower = own !== undefined && own < this.limits.maxResponseBytes;
    return {
      maxBytes: lower ? own : this.limits.maxResponseBytes,
      bytesLimit: lower ? 'limits.maxUpstreamResponseBytes' : 'upstreams.maxResponseBytes',
      maxEventBytes: this.limits.maxSseEventBytes,
      maxAnswerKeys: this.limits.maxAnswerKeys,
    };
  }

  private deadlineOf(endpoint: UpstreamEndpoint): { ms: number; limit: UpstreamDeadlineExceeded['limit'] } {
    const own = endpoint.answerLimits?.callDeadlineMs;
    return own !== undefined && own < this.limits.callDeadlineMs
      ? { ms: own, limit: 'limits.upstreamCallDeadlineMs' }
      : { ms: this.limits.callDeadlineMs, limit: 'upstreams.callDeadlineMs' };
  }

  private era2025Of(endpoint: UpstreamEndpoint): Era20251125Upstream {
    return isStdioUrl(endpoint.url) ? this.era20251125Stdio : this.era20251125;
  }

  /** Finds out (again) which era the upstream speaks, and records it. */
  async probe(endpoint: UpstreamEndpoint): Promise<UpstreamProbe> {
    return this.eras.probe(endpoint);
  }
}
