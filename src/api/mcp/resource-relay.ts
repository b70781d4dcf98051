/**
 * Resource updates on `subscriptions/listen` (`resourceSubscriptions`): for each client stream, one
 * upstream `subscriptions/listen` per upstream that serves some of the URIs it follows, opened with the
 * caller's own credential and the upstream's URIs, whose `notifications/resources/updated` are relayed
 * to the client's stream with its `subscriptionId`. Resources keep their URIs through the gateway, so
 * nothing is renamed on the way back; an update for a URI the stream was not acknowledged is dropped.
 *
 * Nothing crosses replicas: the upstream listens live on the replica that holds the client's stream and
 * end with it (and on shutdown). The acknowledgement names the URIs the upstream itself acknowledged.
 * An upstream stream that ends or breaks later is opened again (2 s doubling, at most 30 s) while the
 * client stream lives; on reconnecting, every followed URI is announced once, since an update in the gap
 * would otherwise be lost (a spurious one costs the client one read).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { McpCall, McpGateway, ResourceWatchTarget } from '../../gateway/gateway';
import type { Implementation, RequestId } from '../../protocol';
import { META, PROTOCOL_VERSION } from '../../protocol';
import type { UpstreamClient } from '../../upstream/client';
import type { ResponseStream } from './response-stream';

export interface ResourceRelayDeps {
  gateway: McpGateway;
  upstream: UpstreamClient;
  serverInfo: Implementation;
  logger?: Logger;
  /** How long the client's acknowledgement waits for an upstream's own. Default 5 s. */
  ackWaitMs?: number;
  /** First wait before an ended upstream stream is opened again. Default 2 s. */
  retryMs?: number;
}

export interface ResourceSubscription {
  /** The URIs followed: exactly what the acknowledgement names. */
  honoured: string[];
  /** Call after the acknowledgement was sent: updates held until then are written. */
  begin(): void;
  /** Closes the upstream streams (the client's stream ended). */
  leave(): void;
}

const NONE: ResourceSubscription = { honoured: [], begin() {}, leave() {} };

export class ResourceRelay {
  private readonly relays = new Set<AbortController>();
  private closed = false;

  constructor(private readonly deps: ResourceRelayDeps) {}

  /** Follows what can be followed of `uris` for this stream; nothing followed, nothing held open. */
  async join(
    call: McpCall,
    id: RequestId,
    stream: ResponseStream,
    uris: readonly string[],
  ): Promise<ResourceSubscription> {
    if (uris.length === 0 || this.closed) return NONE;
    const targets = await this.deps.gateway.resourceWatchTargets(call, uris);
    // The replica may have begun shutting down while the targets were looked up: open nothing then.
    if (targets.length === 0 || this.closed) return NONE;
    const stop = new AbortController();
    this.relays.add(stop);
    // Updates that arrive before the client's acknowledgement is written wait for it (it comes first).
    let held: string[] | undefined = [];
    const emit = (uri: string) => {
      if (held) held.push(uri);
      else
        stream.notify({
          jsonrpc: '2.0',
          method: 'notifications/resources/updated',
          params: { uri, _meta: { [META.subscriptionId]: id } },
        });
    };
    const agreed = await Promise.all(targets.map((t) => this.relay(t, stop.signal, emit)));
    const honoured = agreed.flat();
    const leave = () => {
      stop.abort();
      this.relays.delete(stop);
    };
    if (honoured.length === 0) {
      leave();
      return NONE;
    }
    return {
      honoured,
      begin: () => {
        const due = held ?? [];
        held = undefined;
        for (const uri of due) emit(uri);
      },
      leave,
    };
  }

  /** Stops every upstream stream (shutdown); the client streams are ended by their owner. */
  close(): void {
    this.closed = true;
    for (const stop of this.relays) stop.abort();
    this.relays.clear();
  }

  /**
   * Opens the upstream's listen for the target's URIs and keeps it open until `signal` aborts. Answers
   * the URIs the upstream acknowledged (none if it refused, failed or did not answer within ackWaitMs:
   * then nothing is held open for this target).
   */
  private relay(
    target: ResourceWatchTarget,
    signal: AbortSignal,
    emit: (uri: string) => void,
  ): Promise<string[]> {
    const own = new AbortController();
    const stopped = AbortSignal.any([signal, own.signal]);
    return new Promise<string[]>((resolve) => {
      let answered = false;
      const timer = setTimeout(() => answer([]), this.deps.ackWaitMs ?? 5_000);
      const answer = (uris: string[]) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        if (uris.length === 0) own.abort();
        resolve(uris);
      };
      void this.hold(target, stopped, emit, answer).finally(() => answer([]));
    });
  }

  private async hold(
    target: ResourceWatchTarget,
    signal: AbortSignal,
    emit: (uri: string) => void,
    answer: (uris: string[]) => void,
  ): Promise<void> {
    let followed: Set<string> | undefined;
    let failures = 0;
    while (!signal.aborted) {
      let acknowledged = false;
      try {
        await this.deps.upstream.listen(
          target.endpoint,
          {
            notifications: { resourceSubscriptions: target.uris },
            _meta: {
              [META.protocolVersion]: PROTOCOL_VERSION,
              [META.clientCapabilities]: {},
              [META.clientInfo]: this.deps.serverInfo,
            },
          },
          (message) => {
            const params = (message.params ?? {}) as Record<string, unknown>;
            if (message.method === 'notifications/subscriptions/acknowledged') {
              acknowledged = true;
              if (followed) {
                // Reconnected after a gap: an update in it would otherwise be lost.
                for (const uri of followed) emit(uri);
                return;
              }
              followed = new Set(acceptedUris(params, target.uris));
              answer([...followed]);
              return;
            }
            if (message.method !== 'notifications/resources/updated') return;
            if (typeof params.uri === 'string' && followed?.has(params.uri)) emit(params.uri);
          },
          signal,
        );
      } catch (err) {
        if (!signal.aborted)
          this.deps.logger?.warn(
            { upstream: target.endpoint.alias, err: (err as Error).message },
            'upstream resource listen failed',
          );
      }
      // Never acknowledged: nothing was promised, so nothing is retried.
      if (!followed || followed.size === 0) return;
      failures = acknowledged ? 0 : failures + 1;
      const wait = Math.min((this.deps.retryMs ?? 2_000) * 2 ** Math.min(failures, 8), 30_000);
      await sleep(wait, undefined, { signal }).catch(() => undefined);
    }
  }
}

/** The target's URIs that the upstream's acknowledgement names. */
function acceptedUris(ackParams: Record<string, unknown>, asked: readonly string[]): string[] {
  const notifications = (ackParams.notifications ?? {}) as Record<string, unknown>;
  const agreed = notifications.resourceSubscriptions;
  if (!Array.isArray(agreed)) return [];
  return asked.filter((uri) => agreed.includes(uri));
}
