/**
 * Requests a 2025-era upstream sends the gateway outside a task's `tasks/result` stream: on the answer
 * of a call, or on the session's standalone stream (SDK servers send requests made without a
 * related request there). The gateway never declares sampling or roots, and it does not relay an
 * elicitation during an ordinary call: the upstream's call would stay pending on one replica while the
 * client's answer may reach another (docs/interop.md). So each request is answered at once (`ping` with
 * `{}`, anything else with a JSON-RPC error saying why) and the upstream's tool ends now instead of
 * waiting for its own timeout. The standalone stream is held open (one per session and process) only to do
 * that; a server that offers none, or lets only another replica hold it, loses nothing else.
 */
import { LRUCache } from 'lru-cache';
import type { JsonObject } from '../../http';
import type { MessageStream } from '../../transport/types';
import type { LiveSession } from './sessions';
import { targetOf } from './sessions';
import type { Era20251125Wire, ServerRequest } from './wire';
import { serverRequest } from './wire';

/** The answer the gateway gives a request it cannot relay. */
export function refusal(request: ServerRequest): JsonObject {
  if (request.method === 'ping') return { id: request.id, result: {} };
  const message =
    request.method === 'elicitation/create'
      ? 'TaskRouter cannot relay elicitation/create to its client during this call; run the tool as a task to ask for input'
      : `TaskRouter does not offer ${request.method} to upstream servers`;
  return { id: request.id, error: { code: -32603, message } };
}

/** Reopen a standalone stream that ended after this long; one the upstream refused after the longer pause. */
const REOPEN_AFTER_END_MS = 1_000;
const REOPEN_AFTER_REFUSAL_MS = 60_000;

/**
 * Standalone streams one process holds open at most. Each is a connection held for as long as its
 * session is used, one per user scope of each 2025 upstream; past this the least recently used is closed
 * (and opened again when its session next calls). Without its stream a session's requests made outside a
 * call wait for the upstream's own timeout instead of an immediate refusal; nothing else is lost.
 */
export const MAX_STANDALONE_STREAMS = 1_000;

interface Listener {
  nonce: string;
  abort: AbortController;
  open: boolean;
  retryAt: number;
  /** Settles once the stream is open (or refused). */
  ready: Promise<void>;
}

export class StandaloneStreams {
  /** By session scope; a listener replaced, pushed out or cleared has its stream closed. */
  private readonly listeners: LRUCache<string, Listener>;
  private closed = false;

  constructor(
    private readonly wire: Era20251125Wire,
    maxStreams = MAX_STANDALONE_STREAMS,
  ) {
    this.listeners = new LRUCache({ max: maxStreams, dispose: (listener) => listener.abort.abort() });
  }

  /** Refuses one request on the session it came from; failures are the upstream's to time out. */
  refuse(session: LiveSession, request: ServerRequest): void {
    this.wire.deliver(targetOf(session), refusal(request)).catch(() => {});
  }

  /**
   * Makes sure the session's standalone stream is open in this process (stateful sessions only); settles once
   * it is open or refused, so a call sent next finds it there.
   */
  async watch(session: LiveSession): Promise<void> {
    // After close no stream may open: the connection pool waits for open requests when it closes.
    if (!session.sessionId || this.closed) return;
    let listener = this.listeners.get(session.scope);
    if (listener && listener.nonce !== session.nonce) listener = undefined;
    if (listener && (listener.open || Date.now() < listener.retryAt)) return listener.ready;
    let opened = () => {};
    const ready = new Promise<void>((resolve) => (opened = resolve));
    const next: Listener = {
      nonce: session.nonce,
      abort: new AbortController(),
      open: true,
      retryAt: 0,
      ready,
    };
    this.listeners.set(session.scope, next);
    void this.run(session, next, opened);
    return ready;
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
  }

  private async run(session: LiveSession, listener: Listener, opened: () => void): Promise<void> {
    let stream: MessageStream | undefined;
    try {
      stream = await this.wire.listen(targetOf(session), listener.abort.signal);
      opened();
      if (stream) {
        await stream.read((msg) => {
          const request = typeof msg.method === 'string' ? serverRequest(msg) : undefined;
          if (request) this.refuse(session, request);
        });
      }
    } catch {
      // A stream that broke (an idle timeout) is opened again like one that ended.
    } finally {
      listener.retryAt = Date.now() + (stream ? REOPEN_AFTER_END_MS : REOPEN_AFTER_REFUSAL_MS);
      listener.open = false;
      opened();
    }
  }
}
