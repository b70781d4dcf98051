/**
 * List changes on `subscriptions/listen`: upstreams' `notifications/{tools,prompts,resources}/list_changed`
 * relayed to the streams that asked for them.
 *
 * Watching: while some stream on this replica wants a kind an upstream announces, this replica keeps a
 * watch on that upstream with the listener's credential (its scope): the upstream's own
 * `subscriptions/listen`, held by whichever replica has the scope's lease (src/store/sessions/upstream-events.ts),
 * so one announcement is written once however many replicas have listeners. Delivery: every replica
 * reads the `upstream_events` rows after its cursor, drops its cached lists of that scope, then tells its
 * streams that asked, so a stream hears a change whichever replica watched the upstream. A watch that
 * reconnects after a gap writes every kind once, since a change in the gap would otherwise be lost; a
 * spurious list change costs a client one re-list.
 *
 * Control-plane changes (an upstream added, removed, disabled, re-pointed; the project's exposed tools
 * reshaped; a user's own authorization) are rows too, written in the change's own transaction
 * (src/store/control-plane/list-changes.ts). A replica reading one drops what it cached of the project
 * and of that upstream, tells the project's streams that were promised the kind, and then re-reads which
 * upstreams each of those streams watches (a new upstream is watched from then on, a removed one no
 * longer).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ListKind, ListWatchTarget, McpCall, McpGateway } from '../../gateway/gateway';
import type { Implementation, RequestId } from '../../protocol';
import { META, PROTOCOL_VERSION } from '../../protocol';
import type { UpstreamEvents } from '../../store/sessions/upstream-events';
import {
  CONTROL_PLANE_SCOPE,
  isControlPlaneScope,
  userControlPlaneScope,
} from '../../store/sessions/upstream-events';
import type { UpstreamClient } from '../../upstream/client';
import type { ResponseStream } from './response-stream';
import { sameEndpoint, watchedScopes } from './list-scopes';

export interface ListFeedDeps {
  gateway: McpGateway;
  events: UpstreamEvents;
  upstream: UpstreamClient;
  serverInfo: Implementation;
  logger?: Logger;
  /** How often the feed reads new rows while streams listen. Default 250 ms. */
  pollEveryMs?: number;
  /** Lease on watching one scope; renewed every third of it. Default 15 s. */
  leaseMs?: number;
  /** How soon a replica without the lease tries again, and a failed watch reconnects. Default 2 s. */
  retryMs?: number;
  /**
   * How long a joining stream's acknowledgement waits for its new watches to be in place (the upstream
   * acknowledged its own listen, or another replica holds the watch). Default 3 s; a watch that is not
   * in place by then is still taken up, and a change before it is missed.
   */
  readyWithinMs?: number;
  /**
   * Drops what this process cached of the control plane (projects, credentials), so a client told of a
   * control-plane change made on another replica re-lists against the new configuration.
   */
  forgetServed?: () => void;
}

/** The listen filter's list kinds, by the notification kind they name. */
export const FILTER_KEYS: Record<
  ListKind,
  'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged'
> = { tools: 'toolsListChanged', prompts: 'promptsListChanged', resources: 'resourcesListChanged' };

interface ListListener {
  id: RequestId;
  projectId: string;
  /** The listen request, with its project as last read (re-read after a control-plane change). */
  call: McpCall;
  stream: ResponseStream;
  /** The newest row when it joined: only later rows are its changes. */
  since: number;
  /** What its acknowledgement promised; fixed for the stream's life. */
  honoured: ReadonlySet<ListKind>;
  /** The scope of control-plane changes of the caller's own lists (a user's authorizations). */
  userScope?: string;
  /** Kinds honoured per scope (upstream and the listener's credential). */
  scopes: Map<string, Set<ListKind>>;
  /** Re-reading its watches after control-plane changes, one at a time. */
  rewatching?: Promise<void>;
}

interface Watch {
  refs: number;
  stop: AbortController;
  /**
   * Its name on the lease, its own rather than the replica's: a watch that was stopped and one started
   * after it for the same scope must not release or renew each other's lease.
   */
  holder: string;
  /** What it watches: a scope whose endpoint changed (re-pointed, another credential) is watched anew. */
  target: ListWatchTarget;
  /**
   * Settles once the scope is watched (the upstream acknowledged this watch's listen, or another replica
   * holds the lease) or this watch's first try failed or stopped: a stream is acknowledged after it, so a
   * change the client makes right after its acknowledgement is not made before anyone listens.
   */
  ready: Promise<void>;
  markReady: () => void;
}

export class ListFeed {
  private readonly listeners = new Set<ListListener>();
  private readonly watches = new Map<string, Watch>();
  private cursor: number | undefined;
  private feed: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly deps: ListFeedDeps) {}

  /**
   * Joins a stream for the list kinds it asked for; answers the kinds honoured (some upstream of the
   * project announces them) and the function that leaves again. Nothing is honoured, nothing joined.
   */
  async join(
    call: McpCall,
    id: RequestId,
    stream: ResponseStream,
    asked: ReadonlySet<ListKind>,
  ): Promise<{ honoured: ListKind[]; leave: () => void }> {
    const none = { honoured: [], leave: () => {} };
    if (asked.size === 0 || this.closed) return none;
    const { scopes, watched } = watchedScopes(await this.deps.gateway.listWatchTargets(call), asked);
    if (scopes.size === 0) return none;
    // Rows written from now on are this stream's (older ones are not): read before it is acknowledged.
    const since = await this.deps.events.latestId();
    this.cursor = Math.min(this.cursor ?? since, since);
    const honoured = new Set([...scopes.values()].flatMap((k) => [...k]));
    const listener: ListListener = {
      id,
      projectId: call.project.id,
      call,
      stream,
      scopes,
      since,
      honoured,
      ...(call.principal.kind === 'user' && { userScope: userControlPlaneScope(call.principal.userId) }),
    };
    this.listeners.add(listener);
    const ready = watched.map((t) => this.acquire(t));
    this.startFeed();
    await this.whenReady(ready);
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      this.listeners.delete(listener);
      for (const scope of listener.scopes.keys()) this.release(scope);
    };
    return { honoured: [...honoured], leave };
  }

  private startFeed(): void {
    this.feed ??= this.runFeed().finally(() => {
      this.feed = undefined;
      // A stream that joined as the loop was ending still needs it; with none left, start afresh later.
      if (this.listeners.size > 0 && !this.closed) this.startFeed();
      else this.cursor = undefined;
    });
  }

  /** Stops every watch (shutdown); the streams themselves are ended by their owner. */
  close(): void {
    this.closed = true;
    for (const w of this.watches.values()) w.stop.abort();
    this.watches.clear();
    this.listeners.clear();
  }

  /** Takes (a reference to) the scope's watch; answers when it is in place (see `Watch.ready`). */
  private acquire(target: ListWatchTarget): Promise<void> {
    const held = this.watches.get(target.scope);
    if (held && sameEndpoint(held.target, target)) {
      held.refs++;
      return held.ready;
    }
    // Re-pointed or another credential under the same scope: the old stream watches the wrong server.
    held?.stop.abort();
    const refs = (held?.refs ?? 0) + 1;
    let markReady = () => {};
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const watch: Watch = {
      refs,
      stop: new AbortController(),
      holder: randomUUID(),
      target,
      ready,
      markReady,
    };
    this.watches.set(target.scope, watch);
    void this.runWatch(target, watch);
    return ready;
  }

  /** Waits, at most `readyWithinMs`, for the watches a stream joined to be in place. */
  private async whenReady(ready: Promise<void>[]): Promise<void> {
    if (ready.length === 0) return;
    const timeout = new AbortController();
    await Promise.race([
      Promise.all(ready),
      sleep(this.deps.readyWithinMs ?? 3_000, undefined, { signal: timeout.signal, ref: false }).catch(
        () => undefined,
      ),
    ]);
    timeout.abort();
  }

  /**
   * After a control-plane change of the listener's project: reads the project again and watches what
   * its upstreams now announce, of the kinds it was promised (a kind it was not promised is never sent).
   */
  private rewatch(l: ListListener): void {
    l.rewatching = (l.rewatching ?? Promise.resolve())
      .then(async () => {
        const call = await this.deps.gateway.currentCall(l.call);
        const targets = call ? await this.deps.gateway.listWatchTargets(call) : [];
        // It left meanwhile (its watches were released then), or the replica is closing.
        if (this.closed || !this.listeners.has(l)) return;
        if (call) l.call = call;
        const { scopes, watched } = watchedScopes(targets, l.honoured);
        // Acquired before released, so a watch both had and have keeps running.
        for (const t of watched) void this.acquire(t);
        for (const scope of l.scopes.keys()) this.release(scope);
        l.scopes = scopes;
      })
      .catch((err: unknown) => {
        this.deps.logger?.warn(
          { err: (err as Error).message },
          'list watches not re-read; kept as they were',
        );
      });
  }

  private release(scope: string): void {
    const watch = this.watches.get(scope);
    if (!watch || --watch.refs > 0) return;
    this.watches.delete(scope);
    watch.stop.abort();
  }

  /**
   * Holds the upstream's listen while this replica has the scope's lease; otherwise waits its turn.
   * Whenever the scope may have gone unwatched (an acknowledged upstream stream ended, or another
   * replica held the lease), every kind is written once on (re)connecting: a change in the gap would
   * otherwise be lost. An upstream that refuses or fails is tried again later and later (up to 30 s).
   */
  private async runWatch(target: ListWatchTarget, watch: Watch): Promise<void> {
    const { stop: controller, holder } = watch;
    const stop = controller.signal;
    const leaseMs = this.deps.leaseMs ?? 15_000;
    const retryMs = this.deps.retryMs ?? 2_000;
    const startedAt = Date.now();
    let gap = false;
    let failures = 0;
    while (!stop.aborted) {
      try {
        const lease = await this.deps.events.claimWatch(target.scope, holder, leaseMs);
        // Another replica watched after this watch began: it may have stopped before this one starts.
        if (lease.othersUntil !== undefined && lease.othersUntil >= startedAt) gap = true;
        if (!lease.mine) watch.markReady();
        else {
          const acknowledged = await this.holdListen(target, watch, leaseMs, gap);
          // Refused or ended unacknowledged: the stream waiting for it is not held up longer.
          watch.markReady();
          // A stream that was watching has ended: whatever comes next comes after a gap.
          if (acknowledged) gap = true;
          failures = acknowledged ? 0 : failures + 1;
        }
      } catch (err) {
        failures++;
        watch.markReady();
        if (!stop.aborted)
          this.deps.logger?.warn(
            { upstream: target.endpoint.alias, err: (err as Error).message },
            'upstream list watch failed; retrying',
          );
      }
      const wait = Math.min(retryMs * 2 ** Math.min(failures, 8), 30_000);
      await sleep(wait, undefined, { signal: stop }).catch(() => undefined);
    }
    watch.markReady();
    await this.deps.events.releaseWatch(target.scope, holder).catch(() => undefined);
  }

  /**
   * One upstream listen, renewing the lease meanwhile, until the stream ends or the lease is lost.
   * Answers whether the upstream acknowledged it (whether it was watched at all).
   */
  private async holdListen(
    target: ListWatchTarget,
    watch: Watch,
    leaseMs: number,
    afterGap: boolean,
  ): Promise<boolean> {
    // Aborted by the lease's loss or by the watch's stop. Linked by hand: AbortSignal.any keeps every
    // dependent of the watch's long-lived signal (one per reconnect), as CallDeadline notes.
    const local = new AbortController();
    const signal = local.signal;
    const stop = watch.stop.signal;
    const forward = () => local.abort(stop.reason);
    if (stop.aborted) forward();
    else stop.addEventListener('abort', forward, { once: true });
    const renew = setInterval(() => {
      this.deps.events
        .claimWatch(target.scope, watch.holder, leaseMs)
        .then((lease) => lease.mine || local.abort())
        .catch(() => local.abort());
    }, leaseMs / 3);
    const notifications = Object.fromEntries(target.kinds.map((k) => [FILTER_KEYS[k], true]));
    let acknowledged = false;
    try {
      await this.deps.upstream.listen(
        target.endpoint,
        {
          notifications,
          _meta: {
            [META.protocolVersion]: PROTOCOL_VERSION,
            [META.clientCapabilities]: {},
            [META.clientInfo]: this.deps.serverInfo,
          },
        },
        (message) => {
          if (message.method === 'notifications/subscriptions/acknowledged') {
            acknowledged = true;
            watch.markReady();
            if (afterGap) void this.recordAll(target);
            return;
          }
          const kind = target.kinds.find((k) => message.method === `notifications/${k}/list_changed`);
          if (kind) void this.record(target, kind);
        },
        signal,
      );
    } catch (err) {
      // Aborted: shutdown, the last listener left, or the lease lost; the caller's loop decides.
      if (!signal.aborted) throw err;
    } finally {
      clearInterval(renew);
      stop.removeEventListener('abort', forward);
    }
    return acknowledged;
  }

  private async recordAll(target: ListWatchTarget): Promise<void> {
    for (const kind of target.kinds) await this.record(target, kind);
  }

  private async record(target: ListWatchTarget, kind: ListKind): Promise<void> {
    const { projectId, upstreamId, scope } = target;
    await this.deps.events.record({ projectId, upstreamId, scope, kind }).catch((err: unknown) => {
      this.deps.logger?.warn({ err: (err as Error).message }, 'upstream list change not recorded');
    });
  }

  /** Reads the changes written since the last look, while any stream listens for list changes. */
  private async runFeed(): Promise<void> {
    while (!this.closed && this.listeners.size > 0) {
      try {
        const reconfigured = new Set<ListListener>();
        for (const event of await this.deps.events.after(this.cursor ?? 0)) {
          this.cursor = event.id;
          const controlPlane = isControlPlaneScope(event.scope);
          // Before anyone is told: a client re-listing at once must not get this replica's old list.
          if (!controlPlane) this.deps.gateway.dropCachedLists(event.scope);
          else {
            this.deps.forgetServed?.();
            if (event.upstreamId !== '') this.deps.gateway.dropUpstreamCaches(event.upstreamId);
          }
          for (const l of this.listeners) {
            if (event.id <= l.since || l.projectId !== event.projectId) continue;
            if (controlPlane) {
              if (event.scope !== CONTROL_PLANE_SCOPE && event.scope !== l.userScope) continue;
              reconfigured.add(l);
              if (!l.honoured.has(event.kind)) continue;
            } else if (!l.scopes.get(event.scope)?.has(event.kind)) continue;
            l.stream.notify({
              jsonrpc: '2.0',
              method: `notifications/${event.kind}/list_changed`,
              params: { _meta: { [META.subscriptionId]: l.id } },
            });
          }
        }
        for (const l of reconfigured) this.rewatch(l);
      } catch (err) {
        this.deps.logger?.warn({ err: (err as Error).name }, 'upstream event feed read failed; retrying');
      }
      await sleep(this.deps.pollEveryMs ?? 250);
    }
  }
}
