/**
 * The response to one MCP request: JSON by default, switched to an SSE stream the moment the first
 * upstream notification has to be relayed (only when the client accepts `text/event-stream`). Progress
 * therefore reaches the client as it happens, and requests without notifications stay plain JSON.
 */
import type { ServerResponse } from 'node:http';

export class ResponseStream {
  private streaming = false;
  private eventId: (() => string) | undefined;

  /** `onStart` runs once, when the stream opens: the HTTP framework must then leave the response alone. */
  constructor(
    private readonly res: ServerResponse,
    private readonly acceptsSse: boolean,
    private readonly onStart?: () => void,
  ) {}

  get isStreaming(): boolean {
    return this.streaming;
  }

  /** Whether messages can reach the client before the final answer (it accepts SSE and is still there). */
  get canStream(): boolean {
    return this.acceptsSse && !this.res.writableEnded && !this.res.destroyed;
  }

  /** Relays a notification; dropped when the client cannot take a stream or has gone. */
  notify(message: Record<string, unknown>): void {
    if (!this.canStream) return;
    this.start();
    this.writeEvent(message);
  }

  /** An SSE comment: keeps proxies and clients from timing out an idle stream. Dropped without SSE. */
  comment(text: string): void {
    if (!this.canStream) return;
    this.start();
    this.res.write(`: ${text}\n\n`);
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
    this.res.write(`id: ${next()}\ndata: \n\n`);
  }

  /** Opens the stream now (e.g. for `subscriptions/listen`). */
  start(): void {
    if (this.streaming) return;
    this.streaming = true;
    this.onStart?.();
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    this.res.flushHeaders();
  }

  /** Ends a started stream with the final JSON-RPC message. */
  finish(message: Record<string, unknown>): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.writeEvent(message);
    this.res.end();
  }

  private writeEvent(message: Record<string, unknown>): void {
    const id = this.eventId ? `id: ${this.eventId()}\n` : '';
    this.res.write(`${id}event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
}
