/** What the task activities are built from (createActivities, createHostedActivities). */
import type { Logger } from 'pino';
import type { Implementation } from '../protocol';
import type { FirstCalls } from '../store/tasks/first-calls';
import type { HostedQueue } from '../store/tasks/hosted-queue';
import type { PayloadStore } from '../store/tasks/payload-store';
import type { TaskStore } from '../store/tasks/task-store';
import type { WatchHubStore } from '../store/tasks/watch-hub';
import type { UpstreamClient, UpstreamEndpoint } from '../upstream/client';
import type { RecentDetails } from './recent-details';
import type { UpstreamAccess } from './types';

export interface TaskActivitySettings {
  minPollIntervalMs: number;
  maxPollIntervalMs: number;
  maxWatchMs: number;
  pollFailureBudget: number;
  /** `ttlMs` of a task the gateway records as already finished (how long its result is kept). */
  finishedTaskTtlMs?: number;
  /**
   * A running task's stored detail this old is stored again from the upstream's current answer, so no
   * copy outlives the payload retention while the task runs (docs/retention.md).
   */
  detailRefreshMs?: number;
  /** Longest upstream `statusMessage` kept (`streams.maxStatusMessageChars`); longer ones are cut. */
  maxStatusMessageChars?: number;
}

export interface ActivityDeps {
  upstream: UpstreamClient;
  store: TaskStore;
  payloads: PayloadStore;
  /** The queues of hosted calls to upstreams with `hosting.maxConcurrent` (store/tasks/hosted-queue.ts). */
  hostedQueue?: HostedQueue;
  /**
   * Whether a workflow is closed (or gone), asked through Temporal; absent in unit tests. The queue of
   * hosted calls frees the slot of a call whose workflow was terminated (activities/hosted-slot.ts).
   */
  workflowClosed?: (workflowId: string) => Promise<boolean>;
  /** The watch hub's table (`tasks.watchBy: hub`): task workflows enlist and delist their tasks there. */
  watchHub?: WatchHubStore;
  /**
   * The details stored a moment ago (recent-details.ts), shared with the watch hub of this process: a
   * change the hub stored is recorded by the workflow's next local activity without reading it back.
   */
  recentDetails?: RecentDetails;
  /** Told after a task was enlisted in this process, so this process's hub claims it now (WatchHub.nudge). */
  watchEnlisted?: () => void;
  /** Claims each task's first call before it is sent (store/tasks/first-calls.ts); absent in unit tests. */
  firstCalls?: FirstCalls;
  /**
   * The endpoint, with the credential `access.principal` is entitled to, of one of a project's upstreams.
   * Rejects (non-retryably) when that credential is gone or is not the one the task is bound to.
   */
  resolveUpstream(access: UpstreamAccess): Promise<UpstreamEndpoint>;
  gatewayInfo: Implementation;
  settings: TaskActivitySettings;
  logger: Logger;
  /**
   * Aborted when the worker starts to shut down: a watch then ends as `unchanged` within about a second,
   * so the workflow schedules the next watch on a worker that keeps running instead of this one waiting
   * out its shutdown grace time.
   */
  stopping?: AbortSignal;
}
