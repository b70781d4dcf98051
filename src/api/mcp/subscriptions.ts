/**
 * `subscriptions/listen` (MCP 2026-07-28): a long-lived SSE stream. The acknowledgement names exactly
 * what the gateway honours of the client's filter: `notifications/tasks` for the caller's own tasks
 * among `taskIds` (Tasks extension), the list changes some upstream of the project announces
 * (list-feed.ts), and updates of the `resourceSubscriptions` an upstream that serves them acknowledges
 * (resource-relay.ts). Task changes come from the store, not process memory:
 * every status change a workflow records is a history row, and this replica reads the rows written
 * since it last looked (one indexed query every `pollEveryMs` while anyone follows a task, and one for
 * rows passed over that may still commit: status-feed.ts), so a stream
 * gets its tasks' changes whichever replica or worker wrote them. Right after the acknowledgement each
 * followed task's current state is pushed once, so a client that listens after creating a task misses
 * nothing that happened in between. A client whose replica goes away
 * reconnects; a terminal status stays readable with `tasks/get`. On shutdown every stream gets the final
 * result the spec asks for, so clients see an orderly end rather than a drop.
 */
import type { ServerResponse } from 'node:http';
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { z } from 'zod';
import { DEFAULT_STREAMS } from '../../config/streams';
import type { FollowedTask, McpCall, McpGateway } from '../../gateway/gateway';
import type { RequestId } from '../../protocol';
import { META, ProtocolError, TERMINAL_TASK_STATUSES } from '../../protocol';
import type { StatusEventFeed } from '../../store/tasks/status-feed';
import type { TaskStore } from '../../store/tasks/task-store';
import { streamRefusals } from '../../telemetry/metrics';
import type { ListKind } from '../../gateway/gateway';
import type { ListFeed } from './list-feed';
import { FILTER_KEYS } from './list-feed';
import type { ResourceRelay, ResourceSubscription } from './resource-relay';
import type { ResponseStream } from './response-stream';
import { StreamSlots } from './stream-slots';

/** The listen request's filter: what the client asks to be told. */
const ListenParamsSchema = z.looseObject({
  notifications: z
    .looseObject({
      toolsListChanged: z.boolean().optional(),
      promptsListChanged: z.boolean().optional(),
      resourcesListChanged: z.boolean().optional(),
      resourceSubscriptions: z.array(z.string()).optional(),
      taskIds: z.array(z.string().max(200)).optional(),
    })
    .optional(),
});

export interface SubscriptionsDeps {
  gateway: McpGateway;
  store: TaskStore;
  /** Relays upstreams' list changes; without it none are honoured. */
  lists?: ListFeed;
  /** Relays upstreams' resource updates; without it no `resourceSubscriptions` are honoured. */
  resources?: ResourceRelay;
  logger?: Logger;
  /** Open streams one caller may hold on one project on this replica. Default 16 (`streams.maxPerCaller`). */
  maxPerCaller?: number;
  /** Open streams of one project on this replica. Default 256 (`streams.maxPerProject`). */
  maxPerProject?: number;
  /** How often followed tasks are looked up in the store. Default 250 ms. */
  pollEveryMs?: number;
}

interface Listener {
  id: RequestId;
  call: McpCall;
  stream: ResponseStream;
  /** Followed tasks by task key, with the last state sent (so unchanged rows send nothing). */
  tasks: Map<string, { task: FollowedTask; sent?: string }>;
  /** Followed tasks with a change read but not yet pushed (a push that failed is tried again). */
  due: Set<string>;
}

export class Subscriptions {
  private readonly open = new Map<ServerResponse, () => void>();
  private readonly slots: StreamSlots;
  private readonly listeners = new Set<Listener>();
  /** Task changes from the store, from the first listen that follows tasks on (status-feed.ts). */
  private statusFeed: StatusEventFeed | undefined;
  private feed: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly deps: SubscriptionsDeps) {
    this.slots = new StreamSlots({
      maxPerCaller: deps.maxPerCaller ?? DEFAULT_STREAMS.maxPerCaller,
      maxPerProject: deps.maxPerProject ?? DEFAULT_STREAMS.maxPerProject,
    });
  }

  async listen(
    call: McpCall,
    id: RequestId,
    stream: ResponseStream,
    res: ServerResponse,
    listenerKey: string,
  ) {
    const params = ListenParamsSchema.safeParse(call.params);
    if (!params.success)
      throw new ProtocolError('InvalidParams', 'params.notifications must be a subscription filter');
    // Taken before the first await and given back on every path that ends this request.
    const release = this.reserve(call, listenerKey);
    let lists: { honoured: ListKind[]; leave: () => void } = { honoured: [], leave() {} };
    let resources: ResourceSubscription;
    let followed: FollowedTask[];
    const filter = params.data.notifications ?? {};
    const requested = filter.taskIds;
    try {
      // The feed starts before the tasks are looked up, so a change written in between is read.
      if (requested && requested.length > 0) await this.taskFeed().start();
      followed = requested ? await this.deps.gateway.followableTasks(call, requested) : [];
      const asked = new Set(
        (Object.keys(FILTER_KEYS) as ListKind[]).filter((k) => filter[FILTER_KEYS[k]] === true),
      );
      lists = (await this.deps.lists?.join(call, id, stream, asked)) ?? lists;
      resources = await this.followResources(call, id, stream, filter.resourceSubscriptions);
    } catch (err) {
      lists.leave();
      release();
      throw err;
    }

    const listener: Listener = {
      id,
      call,
      stream,
      tasks: new Map(followed.map((t) => [t.taskKey, { task: t }])),
      due: new Set(),
    };
    stream.start();
    stream.notify({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        notifications: {
          ...Object.fromEntries(lists.honoured.map((k) => [FILTER_KEYS[k], true])),
          ...(filter.resourceSubscriptions && { resourceSubscriptions: resources.honoured }),
          ...(requested && { taskIds: followed.map((t) => t.taskId) }),
        },
        _meta: { [META.subscriptionId]: id },
      },
    });
    resources.begin();
    if (listener.tasks.size > 0) {
      // Each followed task's state now comes first: a change between the task's creation and this
      // stream (a progress message, or the task already ended) is not waited for in vain.
      for (const taskKey of listener.tasks.keys()) listener.due.add(taskKey);
      this.listeners.add(listener);
      this.startFeed();
    }
    await new Promise<void>((resolve) => {
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        call.signal?.removeEventListener('abort', end);
        this.open.delete(res);
        this.listeners.delete(listener);
        lists.leave();
        resources.leave();
        release();
        resolve();
      };
      this.open.set(res, () => {
        stream.finish({
          jsonrpc: '2.0',
          id,
          result: { resultType: 'complete', _meta: { [META.subscriptionId]: id } },
        });
        end();
      });
      res.once('close', end);
      // Aborted when the stream was ended because its client stopped reading (or the client left): its
      // upstream listens and its slot are let go at once, not when the connection finally closes.
      call.signal?.addEventListener('abort', end);
      // The client may have gone while the filter was checked: its 'close' has passed already.
      if (res.destroyed || call.signal?.aborted === true) end();
    });
  }

  /** A slot under both caps, or the refusal (counted by the cap that refused). */
  private reserve(call: McpCall, listenerKey: string): () => void {
    try {
      return this.slots.reserve(listenerKey, call.project.id);
    } catch (err) {
      const limit = (err as ProtocolError).data as { limit?: string } | undefined;
      streamRefusals.inc({ project: call.project.slug, limit: limit?.limit ?? 'caller' });
      throw err;
    }
  }

  /** The resource updates followed for this stream; none when the relay fails (nothing promised). */
  private async followResources(
    call: McpCall,
    id: RequestId,
    stream: ResponseStream,
    uris: readonly string[] | undefined,
  ): Promise<ResourceSubscription> {
    const none = { honoured: [], begin() {}, leave() {} };
    if (!uris || !this.deps.resources) return none;
    try {
      return await this.deps.resources.join(call, id, stream, uris);
    } catch (err) {
      this.deps.logger?.warn({ err: (err as Error).name }, 'resource subscriptions not followed');
      return none;
    }
  }

  /** Ends every open stream with its final result. */
  closeAll(): void {
    this.closed = true;
    this.deps.lists?.close();
    this.deps.resources?.close();
    for (const close of [...this.open.values()]) close();
  }

  private taskFeed(): StatusEventFeed {
    return (this.statusFeed ??= this.deps.store.statusFeed());
  }

  /** Starts the feed unless it runs; one that ended just as a listener joined starts again. */
  private startFeed(): void {
    this.feed ??= this.runFeed().finally(() => {
      this.feed = undefined;
      if (!this.closed && this.listeners.size > 0) this.startFeed();
    });
  }

  /** Reads the task changes written since the last look, while anyone follows a task. */
  private async runFeed(): Promise<void> {
    while (!this.closed && this.listeners.size > 0) {
      try {
        const events = await this.taskFeed().read();
        for (const event of events) {
          for (const l of this.listeners) if (l.tasks.has(event.taskKey)) l.due.add(event.taskKey);
        }
      } catch (err) {
        this.deps.logger?.warn({ err: (err as Error).name }, 'task feed read failed; retrying');
      }
      await this.pushDue();
      // Behind (the rows written while no one listened, or a burst): the next batch as soon as the
      // event loop has served what waits (SQLite's queries complete without yielding to it).
      if (this.taskFeed().behind) await setImmediate();
      else await sleep(this.deps.pollEveryMs ?? 250);
    }
  }

  /**
   * Pushes every change read so far. A push that fails (the store or Temporal busy) stays due and is
   * tried on the next round: the feed's cursor has moved on, so dropping it would lose the change.
   */
  private async pushDue(): Promise<void> {
    for (const l of this.listeners) {
      for (const taskKey of [...l.due]) {
        try {
          await this.push(l, taskKey);
          l.due.delete(taskKey);
        } catch (err) {
          this.deps.logger?.warn({ err: (err as Error).name }, 'task push failed; retrying');
        }
      }
    }
  }

  private async push(l: Listener, taskKey: string): Promise<void> {
    const followed = l.tasks.get(taskKey);
    if (!followed) return;
    const task = await this.deps.gateway.pushedTask(l.call, followed.task);
    // Gone, or no longer the caller's to follow: stop, silently (a refusal was audited).
    if (!task) {
      l.tasks.delete(taskKey);
      return;
    }
    const state = JSON.stringify(task);
    if (state === followed.sent) return;
    followed.sent = state;
    const meta = { ...(task._meta as Record<string, unknown> | undefined), [META.subscriptionId]: l.id };
    l.stream.notify({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...task, _meta: meta } });
    if (TERMINAL_TASK_STATUSES.has(String(task.status))) l.tasks.delete(taskKey);
  }
}
