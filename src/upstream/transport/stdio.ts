/**
 * The stdio transport (MCP stdio) behind the transport seam (types.ts): newline-delimited JSON-RPC over
 * a local process's stdin and stdout. A stdio server speaks the 2025 session protocol, and one process
 * is one session: the session id the era adapter sees names the process (a fresh one after a restart,
 * so the adapter finds its session lost and initializes the new process), `initialize` is sent to a
 * process once (a second session opened on it is answered from the first), `end` leaves it running.
 *
 * Processes: one per (replica, upstream, credential scope): the key is the endpoint's `cacheKey` (the
 * upstream and whose credential, src/store/control-plane/endpoints.ts), its address and the credential itself, so
 * two users of a `per_user` upstream never share one. Spawned on first use from the operator's catalog
 * (src/config/stdio.ts, processes.ts), stopped after `idleMs` without a request, started again after a
 * crash with back-off, at most `maxProcesses` per replica, all stopped by `close`.
 *
 * Messages: responses are matched to requests by id; `notifications/progress` goes to the request whose
 * progress token it names; a request the server sends goes to the one request in flight (as on an HTTP
 * answer's stream), else to listeners; everything else goes to listeners (`listen`: the session's
 * standalone stream). Lines are bounded by the instance's answer bound, each answer by its request's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StdioConfig } from '../../config/stdio';
import { checkStdioUrl, StdioReferenceError } from '../../config/stdio';
import { stdioProcesses, stdioRestarts } from '../../telemetry/metrics';
import type { AnswerContext } from '../answers';
import type { UpstreamEndpoint } from '../endpoint';
import { UpstreamAnswerTooLarge, UpstreamTransportError } from '../errors';
import type { JsonObject } from '../http';
import { addressOf } from '../identity';
import { credentialOf, launchSpec, StdioProcess } from './processes';
import { Slot } from './stdio-slot';
import type {
  MessageStream,
  TransportAnswer,
  TransportSendOptions,
  TransportTarget,
  UpstreamTransport,
} from './types';
import { STATUS } from './types';

export interface StdioTransportOptions {
  config: StdioConfig;
  /** The instance's largest answer (`upstreams.maxResponseBytes`): no stdout line may be longer. */
  maxLineBytes: number;
  /** Where a process's stderr and life events go (the gateway's logger). */
  log: (detail: Record<string, unknown>, message: string) => void;
  /** Longest silence of a call's answer when the request gives none (ms). */
  timeoutMs: number;
}

const MAX_BACKOFF_MS = 30_000;

export class StdioTransport implements UpstreamTransport {
  private readonly slots = new Map<string, Slot>();
  private readonly starting = new Map<string, Promise<Slot>>();
  private readonly crashes = new Map<string, { count: number; at: number }>();
  /** Names this replica's processes in session ids, so another replica's session is never taken for one. */
  private readonly replica = randomBytes(6).toString('hex');
  private generation = 0;
  private closed = false;

  constructor(private readonly opts: StdioTransportOptions) {}

  /** Processes running now (for tests and diagnostics): key → pid. */
  running(): Array<{ alias: string; pid: number | undefined; key: string }> {
    return [...this.slots.values()].map((s) => ({ alias: s.endpoint.alias, pid: s.process.pid, key: s.key }));
  }

  async send(
    target: TransportTarget,
    message: JsonObject,
    opts: TransportSendOptions,
  ): Promise<TransportAnswer> {
    const { endpoint } = target;
    if (!target.session) {
      throw new UpstreamTransportError(
        `Upstream "${endpoint.alias}" is a local process, which speaks the 2025 session protocol only`,
        false,
      );
    }
    const method = typeof message.method === 'string' ? message.method : undefined;
    const sessionId = target.session.id;
    // Only a new session (`initialize`) starts a process; a message of a session whose process has gone
    // or is being stopped (idle; its stdin is closed) or of another replica's is answered "unknown
    // session", and the adapter opens a new one, on a fresh process.
    const slot = sessionId ? this.slots.get(this.keyOf(endpoint)) : await this.acquire(endpoint, opts.signal);
    if (!slot?.process.serving || (sessionId && sessionId !== slot.token)) {
      return {
        kind: 'message',
        message: undefined,
        status: STATUS.unknown,
        what: 'an unknown session',
        format: '',
      };
    }
    return slot.exchange(message, method, opts, this.opts.timeoutMs);
  }

  async listen(
    target: TransportTarget,
    signal: AbortSignal,
    answer: AnswerContext,
  ): Promise<MessageStream | undefined> {
    void answer;
    const slot = this.slots.get(this.keyOf(target.endpoint));
    if (!slot || (target.session?.id && target.session.id !== slot.token)) return undefined;
    return slot.stream(signal);
  }

  /** A session is its process: it stays up for the next session until it is idle. */
  /** A process keeps no stream's events: an answer lost with its reader cannot be taken up again. */
  async resume(): Promise<TransportAnswer> {
    return { kind: 'ended' };
  }

  async end(): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true;
    const slots = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(slots.map((s) => s.process.stop()));
  }

  /** The upstream's process, started when there is none (after the back-off of a crash). */
  private async acquire(endpoint: UpstreamEndpoint, signal: AbortSignal | undefined): Promise<Slot> {
    const key = this.keyOf(endpoint);
    const live = this.slots.get(key);
    if (live?.process.serving) {
      live.touch();
      return live;
    }
    let pending = this.starting.get(key);
    if (!pending) {
      pending = this.start(key, endpoint, signal).finally(() => this.starting.delete(key));
      this.starting.set(key, pending);
    }
    return pending;
  }

  private async start(
    key: string,
    endpoint: UpstreamEndpoint,
    signal: AbortSignal | undefined,
  ): Promise<Slot> {
    const { alias } = endpoint;
    if (this.closed)
      throw new UpstreamTransportError(`Upstream "${alias}": the gateway is shutting down`, false);
    let checked;
    try {
      checked = checkStdioUrl(this.opts.config.catalog, endpoint.url);
    } catch (err) {
      if (!(err instanceof StdioReferenceError)) throw err;
      throw new UpstreamTransportError(`Upstream "${alias}": ${err.message}`, false);
    }
    // Those starting count too (this one is not among them yet): a burst cannot pass the cap.
    if (this.slots.size + this.starting.size >= this.opts.config.maxProcesses) {
      throw new UpstreamTransportError(
        `Upstream "${alias}": this gateway replica already runs its maximum of ${this.opts.config.maxProcesses} local processes (stdio.maxProcesses); try again later`,
        false,
      );
    }
    const crash = this.crashes.get(key);
    if (crash) {
      const wait =
        Math.min(this.opts.config.restartBackoffMs * 2 ** (crash.count - 1), MAX_BACKOFF_MS) -
        (Date.now() - crash.at);
      if (wait > 0) await sleep(wait, undefined, signal ? { signal } : {});
    }
    const labels = { project: endpoint.project ?? '', upstream: alias };
    const launch = launchSpec(checked.spec, checked, credentialOf(endpoint.headers));
    const token = `stdio-${this.replica}-${++this.generation}`;
    const log = (line: string) =>
      this.opts.log({ project: endpoint.project, upstream: alias }, `stdio: ${line}`);
    // The process reports to its slot, made once the process is (its callbacks run later).
    const ref: { slot?: Slot } = {};
    const proc = new StdioProcess(launch, {
      maxLineBytes: this.opts.maxLineBytes,
      stderrBytesPerMinute: this.opts.config.stderrBytesPerMinute,
      log,
      onLine: (line) => ref.slot?.onLine(line),
      onOverflow: () => {
        log(`wrote a line longer than ${this.opts.maxLineBytes} bytes (upstreams.maxResponseBytes); stopped`);
        ref.slot?.failAll(
          new UpstreamAnswerTooLarge(alias, 'upstreams.maxResponseBytes', this.opts.maxLineBytes),
        );
        void proc.stop();
      },
      onExit: (code, sig) => {
        const crashed = !proc.stopRequested;
        if (this.slots.get(key) === ref.slot) this.slots.delete(key);
        stdioProcesses.dec(labels);
        ref.slot?.exited(
          new UpstreamTransportError(
            `Upstream "${alias}": its local process exited (${sig ?? `code ${code}`}) before answering`,
            true,
          ),
        );
        if (crashed) {
          const prev = this.crashes.get(key);
          this.crashes.set(key, { count: (prev?.count ?? 0) + 1, at: Date.now() });
          log(`exited (${sig ?? `code ${code}`}); started again on the next request`);
        }
      },
    });
    const slot = new Slot(key, token, endpoint, proc, {
      idleMs: this.opts.config.idleMs,
      startTimeoutMs: this.opts.config.startTimeoutMs,
      onIdle: () => {
        log('idle; stopped');
        void proc.stop();
      },
      onServed: () => this.crashes.delete(key),
    });
    ref.slot = slot;
    if (!proc.alive)
      throw new UpstreamTransportError(`Upstream "${alias}": its local process could not be started`, false);
    this.slots.set(key, slot);
    stdioProcesses.inc(labels);
    if (crash) stdioRestarts.inc(labels);
    log(`started (pid ${proc.pid})`);
    return slot;
  }

  /** One process per upstream identity, credential scope and credential. */
  private keyOf(endpoint: UpstreamEndpoint): string {
    const credential = credentialOf(endpoint.headers);
    const secret = credential ? createHash('sha256').update(credential).digest('hex').slice(0, 16) : '-';
    return `${endpoint.cacheKey ?? endpoint.upstreamId ?? ''}|${addressOf(endpoint)}|${secret}`;
  }
}
