/**
 * One running stdio process as the stdio transport (stdio.ts) uses it: its requests in flight (matched
 * to responses by id), its one `initialize` (answered again from memory to a later session), its
 * listeners (the session's standalone stream) and its idle timer.
 */
import type { UpstreamEndpoint } from '../endpoint';
import { UpstreamAnswerTooLarge, UpstreamTransportError } from '../errors';
import type { JsonObject } from '../http';
import { isPlainObject } from '../http';
import type { StdioProcess } from './processes';
import type { MessageStream, TransportAnswer, TransportSendOptions } from './types';
import { STATUS } from './types';

interface Pending {
  opts: TransportSendOptions;
  progressToken: unknown;
  resolve: (answer: TransportAnswer) => void;
  reject: (err: unknown) => void;
  silence: () => void;
}

type Listener = (message: JsonObject) => void;

/** Lines parsed but not yet handed over before stdout is paused (back-pressure toward the process). */
const MAX_QUEUED_LINES = 16;

export class Slot {
  private readonly pending = new Map<string | number, Pending>();
  private readonly listeners = new Set<Listener>();
  private initialize: Promise<TransportAnswer> | undefined;
  private initializedSent = false;
  private lastUse = Date.now();
  private readonly idleTimer: NodeJS.Timeout;
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(
    readonly key: string,
    /** The session id of this process. */
    readonly token: string,
    readonly endpoint: UpstreamEndpoint,
    readonly process: StdioProcess,
    private readonly opts: {
      idleMs: number;
      /** Longest wait for the answer to `initialize` (`stdio.startTimeoutMs`). */
      startTimeoutMs: number;
      onIdle: () => void;
      onServed: () => void;
    },
  ) {
    const every = Math.max(50, Math.min(opts.idleMs / 4, 30_000));
    this.idleTimer = setInterval(() => {
      if (this.pending.size === 0 && Date.now() - this.lastUse >= opts.idleMs) {
        clearInterval(this.idleTimer);
        opts.onIdle();
      }
    }, every);
    this.idleTimer.unref();
  }

  touch(): void {
    this.lastUse = Date.now();
  }

  /** One message of the session: a request answered by its response, anything else taken. */
  async exchange(
    message: JsonObject,
    method: string | undefined,
    opts: TransportSendOptions,
    timeoutMs: number,
  ): Promise<TransportAnswer> {
    this.touch();
    const id = message.id;
    const isRequest = method !== undefined && (typeof id === 'string' || typeof id === 'number');
    if (method === 'notifications/initialized') {
      if (this.initializedSent) return { kind: 'accepted' };
      this.initializedSent = true;
    }
    if (!isRequest) {
      if (!this.process.write(message)) throw this.gone(false);
      return { kind: 'accepted' };
    }
    if (method === 'initialize') {
      // One process, one session: a later session is answered what the first one was.
      const start = { ...opts, quietMs: Math.min(opts.quietMs ?? timeoutMs, this.opts.startTimeoutMs) };
      if (!this.initialize) {
        const first = this.request(message, id, start, timeoutMs).then(
          (a) => {
            if (!isResult(a)) this.initialize = undefined;
            return a;
          },
          (err: unknown) => {
            // A server that never answers `initialize` is given up: the next call gets a fresh process.
            this.initialize = undefined;
            void this.process.stop();
            throw err;
          },
        );
        this.initialize = first;
      }
      const answer = await this.initialize;
      return isResult(answer) ? this.answered({ ...answer.message, id }) : answer;
    }
    return this.request(message, id, opts, timeoutMs);
  }

  private answered(message: unknown): TransportAnswer {
    return {
      kind: 'message',
      message,
      status: STATUS.ok,
      sessionId: this.token,
      what: 'a local process',
      format: 'application/json',
    };
  }

  private async request(
    message: JsonObject,
    id: string | number,
    opts: TransportSendOptions,
    timeoutMs: number,
  ): Promise<TransportAnswer> {
    const params = isPlainObject(message.params) ? message.params : {};
    const meta = isPlainObject(params._meta) ? params._meta : {};
    return new Promise<TransportAnswer>((resolve, reject) => {
      const quiet = opts.quietMs ?? timeoutMs;
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
        this.touch();
      };
      const silence = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          done();
          reject(
            new UpstreamTransportError(
              `Upstream "${this.endpoint.alias}" did not answer within ${quiet} ms`,
              true,
            ),
          );
        }, quiet);
      };
      const onAbort = () => {
        done();
        reject(opts.signal?.reason ?? new Error('aborted'));
      };
      if (opts.signal?.aborted) return onAbort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        opts,
        progressToken: meta.progressToken,
        resolve: (a) => {
          done();
          resolve(a);
        },
        reject: (err) => {
          done();
          reject(err);
        },
        silence,
      });
      silence();
      if (!this.process.write(message)) this.pending.get(id)?.reject(this.gone(false));
    });
  }

  /** A line of stdout, handed over in order; stdout pauses while too many wait. */
  onLine(line: Buffer): void {
    this.queued++;
    if (this.queued > MAX_QUEUED_LINES) this.process.pause();
    this.chain = this.chain
      .then(() => this.handle(line))
      .catch(() => {})
      .finally(() => {
        this.queued--;
        if (this.queued <= MAX_QUEUED_LINES / 2) this.process.resume();
      });
  }

  private async handle(line: Buffer): Promise<void> {
    // With one request in flight its answer is parsed under its own bounds and preparation.
    const only = this.pending.size === 1 ? [...this.pending.values()][0] : undefined;
    const ctx = only?.opts.answer;
    let message: unknown;
    try {
      if (ctx && line.length > ctx.bounds.maxBytes) {
        only?.reject(new UpstreamAnswerTooLarge(ctx.alias, ctx.bounds.bytesLimit, ctx.bounds.maxBytes));
        return;
      }
      message = ctx ? await ctx.parser.parse(line, ctx) : JSON.parse(line.toString('utf8'));
    } catch (err) {
      if (only && !(err instanceof SyntaxError) && err instanceof Error && err.name !== 'UnreadableAnswer') {
        only.reject(err);
        return;
      }
      // Not JSON-RPC: a server that writes anything else to stdout is broken; its requests fail.
      this.failAll(
        new UpstreamTransportError(
          `Upstream "${this.endpoint.alias}" wrote something other than JSON-RPC to stdout`,
          true,
        ),
      );
      void this.process.stop();
      return;
    }
    if (!isPlainObject(message)) return;
    const id = message.id;
    const hasId = typeof id === 'string' || typeof id === 'number';
    if (hasId && typeof message.method !== 'string') {
      const waiting = this.pending.get(id);
      if (waiting) {
        this.opts.onServed();
        waiting.resolve(this.answered(message));
      }
      return;
    }
    if (typeof message.method !== 'string') return;
    if (hasId) return this.serverRequest(message, id);
    if (message.method === 'notifications/progress') {
      const token = isPlainObject(message.params) ? message.params.progressToken : undefined;
      const owner = [...this.pending.values()].find(
        (p) => p.progressToken !== undefined && p.progressToken === token,
      );
      if (owner) {
        owner.silence();
        await owner.opts.onMessage?.(message);
        return;
      }
    }
    for (const l of this.listeners) l(message);
  }

  private async serverRequest(message: JsonObject, id: string | number): Promise<void> {
    if (message.method === 'ping') {
      this.process.write({ jsonrpc: '2.0', id, result: {} });
      return;
    }
    const only = this.pending.size === 1 ? [...this.pending.entries()][0] : undefined;
    if (only) {
      const [reqId, p] = only;
      p.silence();
      if ((await p.opts.onMessage?.(message)) === true && this.pending.get(reqId) === p)
        p.resolve({ kind: 'stopped' });
      return;
    }
    if (this.listeners.size > 0) {
      for (const l of this.listeners) l(message);
      return;
    }
    this.process.write({
      jsonrpc: '2.0',
      id,
      error: {
        code: -32601,
        message: 'The gateway takes no requests from this server outside a request of its own',
      },
    });
  }

  /** The session's standalone stream: what is not an answer, until the process ends or `signal` aborts. */
  stream(signal: AbortSignal): MessageStream {
    return {
      read: (onMessage) =>
        new Promise<boolean>((resolve) => {
          let busy: Promise<unknown> = Promise.resolve();
          const finish = (stopped: boolean) => {
            this.listeners.delete(listener);
            signal.removeEventListener('abort', aborted);
            this.ends.delete(ended);
            resolve(stopped);
          };
          const listener: Listener = (message) => {
            busy = busy.then(async () => {
              if ((await onMessage(message)) === true) finish(true);
            });
          };
          const aborted = () => finish(false);
          const ended = () => finish(false);
          if (signal.aborted || !this.process.alive) return finish(false);
          this.listeners.add(listener);
          this.ends.add(ended);
          signal.addEventListener('abort', aborted, { once: true });
        }),
    };
  }

  private readonly ends = new Set<() => void>();

  /** Every request in flight fails with `err` (the process is being stopped). */
  failAll(err: unknown): void {
    for (const p of [...this.pending.values()]) p.reject(err);
  }

  /** The process has gone: requests fail, streams end, the idle timer stops. */
  exited(err: unknown): void {
    clearInterval(this.idleTimer);
    this.failAll(err);
    for (const end of [...this.ends]) end();
  }

  private gone(mayHaveReached: boolean): UpstreamTransportError {
    return new UpstreamTransportError(
      `Upstream "${this.endpoint.alias}": its local process has gone`,
      mayHaveReached,
    );
  }
}

/** An answer carrying a JSON-RPC result (what a later session's `initialize` is answered from). */
function isResult(
  a: TransportAnswer,
): a is Extract<TransportAnswer, { kind: 'message' }> & { message: JsonObject } {
  return a.kind === 'message' && isPlainObject(a.message) && isPlainObject(a.message.result);
}
