/**
 * What a hosted call says while it runs (activities/hosted-call.ts): the task `working` with a status
 * message, upstream progress as that message, and a 2025-era upstream's question on the call's own
 * stream as the task's `input_required`, answered through `tasks/update`.
 */
import type { InputResponses, TaskSnapshot } from '../protocol';
import type { ActivityDeps } from './deps';
import { progressMessage } from './hosted-answer';
import type { LatestEvery } from './latest-every';
import { latestEvery } from './latest-every';
import { boundedStatusMessage } from './snapshot';
import { sleepWithHeartbeat } from './support';
import type { CallHostedToolInput } from './types';

/** How often a call waiting for the client's answer to the upstream's question looks for it. */
const ANSWER_LOOK_EVERY_MS = 500;
/** Progress notifications recorded as the task's status message at most this often. */
const PROGRESS_EVERY_MS = 1000;

/**
 * Records a task the gateway runs itself as `working` with this status message. Recording marks a running
 * task due for a watch (store/tasks/task-watch.ts); such a task is its own watch (a hosted call running or
 * waiting its turn, a call waiting for approval), so the mark is cleared again: it is no watch lag.
 */
export async function recordWorking(
  deps: {
    store: Pick<ActivityDeps['store'], 'recordSnapshot' | 'watchStarted'>;
    settings: { finishedTaskTtlMs?: number; maxStatusMessageChars?: number };
  },
  input: { taskKey: string; createdAt: string },
  message: string,
): Promise<void> {
  const snapshot: TaskSnapshot = {
    status: 'working',
    statusMessage: boundedStatusMessage(message, deps.settings.maxStatusMessageChars),
    createdAt: input.createdAt,
    lastUpdatedAt: new Date().toISOString(),
    ttlMs: deps.settings.finishedTaskTtlMs ?? null,
  };
  await deps.store.recordSnapshot(input.taskKey, snapshot);
  await deps.store.watchStarted(input.taskKey);
}

export function createHostedStatus(deps: ActivityDeps) {
  const working = (input: { taskKey: string; createdAt: string }, message: string) =>
    recordWorking(deps, input, message);

  /**
   * A 2025-era upstream's form elicitation on the call's own stream: only this activity holds that
   * stream, so it asks the client through the task (`input_required` with the question) and waits,
   * heartbeating, for the answer `tasks/update` stores (payload kind `input_responses`), then hands it to
   * the upstream. Other modes are refused as on any call. The call's progress is not recorded while it
   * asks (a report that waited would overwrite the question).
   */
  function questionRelay(input: CallHostedToolInput, progress: Pick<LatestEvery<string>, 'quiet'>) {
    let asked = 0;
    return async (request: { method: string; params?: Record<string, unknown> }) => {
      const mode = request.params?.mode;
      if (mode !== undefined && mode !== 'form') return undefined;
      asked += 1;
      const key = `elicitation-${input.round ?? 0}-${asked}`;
      return progress.quiet(() => askAndWait(input, key, request));
    };
  }

  /** Records the question as the task's `input_required` and waits for the client's answer. */
  async function askAndWait(
    input: CallHostedToolInput,
    key: string,
    request: { method: string; params?: Record<string, unknown> },
  ) {
    await deps.store.recordSnapshot(input.taskKey, {
      status: 'input_required',
      statusMessage: 'The upstream asks for input: answer it with tasks/update',
      inputRequests: { [key]: { method: request.method, params: request.params ?? {} } },
      createdAt: input.createdAt,
      lastUpdatedAt: new Date().toISOString(),
      ttlMs: deps.settings.finishedTaskTtlMs ?? null,
    });
    await deps.store.watchStarted(input.taskKey);
    for (;;) {
      const answers = await deps.payloads.allOf<InputResponses>(input.taskKey, 'input_responses');
      const answer = answers.find((a) => Object.hasOwn(a, key))?.[key];
      if (answer) {
        await working(
          input,
          'Hosted by the gateway: the answer went to the upstream, which is working on it',
        );
        return { result: answer as Record<string, unknown> };
      }
      await sleepWithHeartbeat(ANSWER_LOOK_EVERY_MS);
    }
  }

  /**
   * Upstream progress as the task's status message (and its dashboard progress), at most once a second
   * and the latest report always (activities/latest-every.ts). `stop` before recording anything else.
   */
  function progressRecorder(input: CallHostedToolInput, note?: string) {
    const now = (message: string) => working(input, message);
    const latest = latestEvery(PROGRESS_EVERY_MS, (message: string) =>
      now(message).catch((err: unknown) =>
        deps.logger.warn({ err: err instanceof Error ? err.name : 'error' }, 'hosted progress not recorded'),
      ),
    );
    return {
      now,
      onNotification: (message: Record<string, unknown>) => {
        if (message.method === 'notifications/progress') latest.offer(progressMessage(message.params, note));
      },
      quiet: latest.quiet,
      stop: latest.stop,
    };
  }

  return { working, questionRelay, progressRecorder };
}
