/**
 * A tool that the upstream runs only as a task, called by a client that cannot take a task (any era; a
 * 2026 client that did not declare the extension, or a 2025 client calling without `params.task`). The
 * gateway runs the durable task itself and answers the original `tools/call` with the final result.
 *
 * While it waits the response stream is kept alive (SSE comments, and progress notifications carrying
 * the status message when the client sent a `progressToken`). Input the task asks for reaches the client
 * only if its era has a way to answer (`call.tasks.relayInput`); otherwise the task is cancelled and the
 * call fails, rather than wait for input that cannot come. The wait is bounded by the project's
 * `limits.inlineTaskWaitMs`: past it the answer is an error naming the task, which keeps running (it is
 * on the dashboard, and its owner can follow it up by id). A client that goes away ends the wait, not
 * the task.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_INLINE_TASK_WAIT_MS } from '../../config/config';
import type { TaskSnapshot } from '../../protocol';
import { ProtocolError, RelayedError, TERMINAL_TASK_STATUSES } from '../../protocol';
import type { RequestContext, Result } from '../context';
import { errorName } from '../context';
import { finishToolResult } from './ordinary-call';
import { revealId } from '../responses/responses';
import type { LaunchedTask } from './task-call';
import { firstResult, launchTask } from './task-call';
import { currentSnapshot, ownedTask } from '../tasks/task-methods';
import { taskKeyOf } from '../../store/tasks/task-store';
import { taskWorkflowId } from '../../workflows/messages';
import type { RoutedCall } from './routed-call';

/** How often the wait looks at the task (the store has every change the workflow records). */
const CHECK_EVERY_MS = 250;
/** SSE comment interval: under the idle timeouts of common proxies. */
const KEEP_ALIVE_MS = 15_000;

export async function runTaskInline(ctx: RequestContext, toolCall: RoutedCall): Promise<Result> {
  const launched = await launchTask(ctx, toolCall);
  if (launched.outcome.kind !== 'task') return firstResult(ctx, launched);
  ctx.call.tasks?.onStarted?.(launched.taskId);
  return waitForTask(ctx, launched);
}

/** Waits (again) for a task answering a call inline: a client resuming the lost stream of that call. */
export async function resumeInlineTask(ctx: RequestContext, taskId: string): Promise<Result> {
  await ownedTask(ctx, taskKeyOf(taskId));
  return waitForTask(ctx, { taskId, taskKey: taskKeyOf(taskId) });
}

/** Waits for a task to end and answers the call with its result (a hosted call too: hosted-call.ts). */
export async function waitForTask(
  ctx: RequestContext,
  launched: Pick<LaunchedTask, 'taskId' | 'taskKey'>,
): Promise<Result> {
  const { call, deps } = ctx;
  const deadline = Date.now() + (call.project.limits.inlineTaskWaitMs ?? DEFAULT_INLINE_TASK_WAIT_MS);
  const progress = progressReporter(ctx);
  const relayed = new Set<string>();
  let lastKeepAlive = Date.now();
  for (;;) {
    // The store has every change the workflow records; only open input needs the live view, which
    // hides keys already answered.
    const record = await deps.store.getTask(launched.taskKey);
    const snapshot =
      record?.snapshot.status === 'input_required' ? currentSnapshot(record) : record?.snapshot;
    if (snapshot) {
      progress(snapshot);
      if (TERMINAL_TASK_STATUSES.has(snapshot.status)) return finalAnswer(ctx, launched.taskId, snapshot);
      if (snapshot.status === 'input_required') await relayOrGiveUp(ctx, launched, snapshot, relayed);
    }
    if (call.signal?.aborted) throw new ProtocolError('InternalError', 'The client went away');
    if (Date.now() >= deadline) {
      throw new ProtocolError(
        'TaskStillRunning',
        `The tool is still running as task ${launched.taskId}; the answer did not come within the project's wait limit. The task keeps running: follow it up with tasks/get or on the dashboard.`,
        { taskId: launched.taskId },
      );
    }
    if (Date.now() - lastKeepAlive >= KEEP_ALIVE_MS) {
      call.keepAlive?.();
      lastKeepAlive = Date.now();
    }
    await sleep(CHECK_EVERY_MS, undefined, call.signal ? { signal: call.signal } : undefined).catch(() => {});
  }
}

/**
 * The final result, or the task's error, as if the upstream had answered the call directly. A task's
 * result is final whatever `resultType` it carries (often none, which the response processing fills
 * in; an upstream's stray `task` or `input_required` there would mislead the client, so it is set).
 */
function finalAnswer(ctx: RequestContext, taskId: string, s: TaskSnapshot): Result {
  if (s.status === 'completed') {
    const result = revealId(s.result ?? { content: [] }, taskId);
    return finishToolResult(ctx, { ...result, resultType: 'complete' });
  }
  if (s.status === 'failed' && s.error) {
    const error = revealId(s.error, taskId);
    throw new RelayedError(error.code, error.message, error.data);
  }
  throw new ProtocolError('InternalError', `The task ended ${s.status}: ${s.statusMessage ?? 'no result'}`);
}

/**
 * Open input requests go to the client once each when its era can answer them; otherwise the task is
 * cancelled and the call fails with the requests named.
 */
async function relayOrGiveUp(
  ctx: RequestContext,
  launched: Pick<LaunchedTask, 'taskId' | 'taskKey'>,
  s: TaskSnapshot,
  relayed: Set<string>,
): Promise<void> {
  const requests = s.inputRequests ?? {};
  const fresh = Object.fromEntries(Object.entries(requests).filter(([k]) => !relayed.has(k)));
  if (Object.keys(fresh).length === 0) return;
  if (ctx.call.tasks?.relayInput?.(launched.taskKey, fresh)) {
    for (const key of Object.keys(fresh)) relayed.add(key);
    return;
  }
  await ctx.deps.engine
    .cancel(taskWorkflowId(launched.taskKey), ctx.deps.startTimeoutMs)
    .catch((err: unknown) => ctx.deps.logger.warn({ err: errorName(err) }, 'inline task cancel failed'));
  throw new ProtocolError(
    'InternalError',
    `The tool asked for input (${Object.values(fresh)
      .map((r) => r.method)
      .join(', ')}) that this client can only give through a task; the task ${launched.taskId} was cancelled`,
    { taskId: launched.taskId },
  );
}

/** `notifications/progress` with the status message, when the client asked for progress. */
function progressReporter(ctx: RequestContext): (s: TaskSnapshot) => void {
  const token = ctx.call.params._meta['progressToken'];
  let count = 0;
  let last: string | undefined;
  return (s) => {
    const message = s.statusMessage ?? s.status;
    if ((typeof token !== 'string' && typeof token !== 'number') || message === last) return;
    last = message;
    count += 1;
    ctx.call.notify?.({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: token, progress: count, message },
    });
  };
}
