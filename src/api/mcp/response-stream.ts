/**
 * The response to one MCP request: JSON by default, switched to an SSE stream the moment the first
 * upstream notification has to be relayed (only when the client accepts `text/event-stream`). Progress
 * therefore reaches the client as it happens, and requests without notifications stay plain JSON.
 *
 * Back-pressure (docs/gateway.md, "Streams to clients"): an event is written only while the client's
 * socket takes it (`res.write()` true); once it answers false, events wait in a bounded queue
 * (stream-queue.ts: progress of a token, a task's status, a resource's update, a list kind coalesce to the
 * latest) until the socket drains. A producer that can pause (an upstream read) waits for
 * `whenWritable()`, so the client's socket being full stops the upstream too. A stream whose queue passes
 * `streams.maxQueuedBytes` is ended with `StreamOverflow` (-31016): a client that stops reading costs a
 * bounded buffer, never the process.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { StreamsConfig } from '../../config/streams';
import { DEFAULT_STREAMS } from '../../config/streams';
import type { RequestId } from '../../protocol';
import { ProtocolError } from '../../protocol';
import { streamCoalesced, streamNotificationsDropped, streamOverflows } from '../../telemetry/metrics';
import { toJsonRpcError } from '../errors';
import type { StreamMessage } from './stream-queue';
import { boundedRelay, coalescingKey, CoalescingQueue } from './stream-queue';

/**
 * How long an overflowed stream's last event may wait for its client: after it the connection is cut
 * (what was written is all the gateway still holds for it; the time only lets a client that resumes
 * reading learn why its stream ended).
 */
export const OVERFLOW_GRACE_MS = 10_000;

export interface ResponseStreamOptions {
  /** Runs once, when the stream opens: the HTTP framework must then leave the response alone. */
  onStart?: () => void;
  /** Runs once, when the stream is ended for overflow: whatever feeds it should stop (abort the call). */
  onOverflow?: () => void;
  /** The request's id, for the final error of an overflowed stream. */
  requestId?: () => RequestId | null;
  /** The project's slug once the caller is known (metrics and logs). */
  project?: () => string | undefined;
  limits?: StreamsConfig;
  logger?: Logger;
}

export class ResponseStream {
  private streaming = false;
  private eventId: (() => string) | undefined;
  private readonly limits: StreamsConfig;
  private readonly queue: CoalescingQueue;
  /** The socket answered false to a write: events wait in the queue until it drains. */
  private full = false;
  /** The final message was written or queued: nothing may follow it. */
  private finishing = false;
  private overflowed = false;
  private waiters: Array<() => void> = [];
  private loggedDrop = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly acceptsSse: boolean,
    private readonly opts: ResponseStreamOptions = {},
  ) {
    this.limits = opts.limits ?? DEFAULT_STREAMS;
    this.queue = new CoalescingQueue(this.limits.maxQueuedBytes);
    // A producer waiting for room must not wait for a client that has gone.
    res.once('close', () => this.wake());
  }

  get isStreaming(): boolean {
    return this.streaming;
  }

  /** Whether messages can reach the client before the final answer (it accepts SSE and is still there). */
  get canStream(): boolean {
    return this.acceptsSse && !this.finishing && !this.overflowed && this.open;
  }

  /**
   * Sends one of the gateway's own messages (a listen stream's acknowledgement and pushes, a task's
   * status or input request for a 2025 client); dropped when the client cannot take a stream or has gone.
   */
  notify(message: StreamMessage): void {
    if (!this.canStream) return;
    this.start();
    this.send(this.frame(JSON.stringify(message)), coalescingKey(message));
  }

  /**
   * Relays an upstream's notification within the `streams` bounds: a long progress message is cut, a
   * notification larger than `maxNotificationBytes` is dropped (counted; logged once per request, without
   * its content).
   */
  relay(message: StreamMessage): void {
    if (!this.canStream) return;
    const bounded = boundedRelay(message, this.limits);
    if ('dropped' in bounded) {
      const project = this.project();
      streamNotificationsDropped.inc({ project });
      if (!this.loggedDrop) {
        this.loggedDrop = true;
        this.opts.logger?.warn(
          { project, bytes: bounded.dropped, limitBytes: this.limits.maxNotificationBytes },
          'upstream notification larger than streams.maxNotificationBytes not relayed',
        );
      }
      return;
    }
    this.start();
    this.send(this.frame(bounded.json), coalescingKey(bounded.message));
  }

  /**
   * Resolves when the client's socket has taken everything queued (it drained), or the stream ended:
   * a producer that waits for it before producing more stops while the client does not read.
   */
  whenWritable(): Promise<void> {
    if (!this.backedUp) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** An SSE comment: keeps proxies and clients from timing out an idle stream. Dropped without SSE. */
  comment(text: string): void {
    if (!this.canStream) return;
    this.start();
    // Events waiting to be written: the stream is not idle, and the comment would only add to them.
    if (this.backedUp) return;
    this.write(`: ${text}\n\n`);
  }

  /**
   * From now on every event carries an `id:` from `next`, so a client that loses the stream can resume
   * it (`Last-Event-ID`). Only streams whose answer survives the request (a durable task) are resumable.
   */
  resumable(next: () => string): void {
    this.eventId = next;
    // A priming event (an id, no data): clients learn where to resume before anything else is sent.
    if (!this.canStream) return;
    this.start();
    this.send(`id: ${next()}\ndata: \n\n`, undefined);
  }

  /** Opens the stream now (e.g. for `subscriptions/listen`). */
  start(): void {
    if (this.streaming) return;
    this.streaming = true;
    this.opts.onStart?.();
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    this.res.flushHeaders();
    this.res.on('drain', () => this.drained());
  }

  /** Ends a started stream with the final JSON-RPC message, after every event still queued. */
  finish(message: Record<string, unknown>): void {
    if (this.finishing || this.overflowed || !this.open) return;
    this.finishing = true;
    this.wake();
    const text = this.frame(JSON.stringify(message));
    if (this.backedUp) {
      this.queue.push(text); // written, and the response ended, once the socket drains
      return;
    }
    this.res.end(text);
  }

  private get open(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }

  /** Events wait (the socket is full, or others wait before them) and the stream still lives. */
  private get backedUp(): boolean {
    return (this.full || this.queue.length > 0) && !this.overflowed && this.open;
  }

  private send(text: string, key: string | undefined): void {
    if (!this.full && this.queue.length === 0) {
      this.write(text);
      return;
    }
    const offered = this.queue.offer(text, key);
    if (offered === 'replaced') streamCoalesced.inc({ project: this.project() });
    if (offered === 'overflow') this.overflow();
  }

  private write(text: string): void {
    if (!this.res.write(text)) this.full = true;
  }

  /** The socket took what was written: write what waited until it is full again. */
  private drained(): void {
    this.full = false;
    while (!this.full && this.open) {
      const next = this.queue.shift();
      if (next === undefined) break;
      this.write(next);
    }
    if (this.queue.length > 0) return;
    if (this.finishing && this.open) this.res.end();
    if (!this.full) this.wake();
  }

  /**
   * The client stopped reading: what waited is dropped, the StreamOverflow error is written as the last
   * event (one small event past the full buffer), the response ended, and the connection cut unless the
   * client reads it within OVERFLOW_GRACE_MS.
   */
  private overflow(): void {
    this.overflowed = true;
    this.queue.clear();
    const project = this.project();
    const limitBytes = this.limits.maxQueuedBytes;
    streamOverflows.inc({ project });
    this.opts.logger?.warn({ project, limitBytes }, 'stream ended: its client did not read it');
    const error = new ProtocolError(
      'StreamOverflow',
      `The stream was ended: the client did not read it and more than ${limitBytes} bytes waited`,
      { limitBytes },
    );
    this.res.end(this.frame(JSON.stringify(toJsonRpcError(error, this.opts.requestId?.() ?? null).body)));
    setTimeout(() => {
      if (!this.res.writableFinished) this.res.destroy();
    }, OVERFLOW_GRACE_MS).unref();
    this.wake();
    this.opts.onOverflow?.();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private frame(json: string): string {
    const id = this.eventId ? `id: ${this.eventId()}\n` : '';
    return `${id}event: message\ndata: ${json}\n\n`;
  }

  private project(): string {
    return this.opts.project?.() ?? 'unknown';
  }
}
