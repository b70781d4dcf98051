/**
 * A task's start that did not answer in time (no worker took the task, Temporal slow or away): what the
 * client is told. The creation is abandoned in the store unless a worker already claimed the first call;
 * then the call is on its way, and the client must not hear "try again" about a call that may have been
 * sent (a retry would send it twice). Its outcome is asked of the workflow again, then read from what the
 * worker recorded; only when neither says is the client told that the outcome is unknown, and not to
 * repeat the call blindly.
 */
import { ProtocolError } from '../../protocol';
import { answerOf } from '../../store/tasks/payload-store';
import { snapshotKey } from '../../store/tasks/snapshot-key';
import type { FirstOutcome } from '../../workflows/messages';
import { taskWorkflowId } from '../../workflows/messages';
import type { GatewayDeps } from '../context';
import { errorName } from '../context';

/** The first call's own time limit (the workflow's activity options) plus a margin. */
const FIRST_CALL_LIMIT_MS = 130_000;

export type FailedStartDeps = Pick<
  GatewayDeps,
  'firstCalls' | 'store' | 'payloads' | 'logger' | 'startTimeoutMs'
> & {
  engine: Pick<GatewayDeps['engine'], 'firstOutcome'>;
};

export async function afterFailedStart(
  deps: FailedStartDeps,
  project: string,
  taskKey: string,
  err: unknown,
): Promise<FirstOutcome> {
  deps.logger.error({ err: errorName(err), project }, 'task start failed');
  const claim = await deps.firstCalls?.claim(taskKey, 'abandoned').catch(() => undefined);
  if (claim?.won) {
    throw new ProtocolError(
      'TaskEngineUnavailable',
      `The task could not be started within ${deps.startTimeoutMs} ms (no worker took it); nothing was sent to the upstream. Try again later.`,
    );
  }
  if (!claim || claim.state === 'abandoned') {
    throw new ProtocolError('TaskEngineUnavailable', 'The gateway could not start the task; try again later');
  }
  try {
    return await deps.engine.firstOutcome(taskWorkflowId(taskKey), FIRST_CALL_LIMIT_MS);
  } catch (again) {
    deps.logger.error({ err: errorName(again), project }, 'task outcome not answered');
  }
  const recorded = await recordedOutcome(deps, taskKey).catch(() => undefined);
  if (recorded) return recorded;
  throw new ProtocolError(
    'InternalError',
    'The task was started and its call may have reached the upstream, but its outcome could not be learned in time; it was not repeated. Look for the task (tasks/list, the dashboard) before calling again.',
  );
}

/**
 * What the worker recorded of the first call: the task (an upstream task, or a task the gateway hosts,
 * recorded before its call is made): durable, so its handle is valid; or the synchronous answer.
 */
async function recordedOutcome(deps: FailedStartDeps, taskKey: string): Promise<FirstOutcome | undefined> {
  const record = await deps.store.getTask(taskKey);
  if (record) {
    const { status, createdAt, lastUpdatedAt, ttlMs } = record.snapshot;
    return {
      kind: 'task',
      observation: { status, createdAt, lastUpdatedAt, ttlMs, key: snapshotKey(record.snapshot) },
    };
  }
  const answer = answerOf(await deps.payloads.firstOfKinds(taskKey, ['result', 'error']));
  if (!answer) return undefined;
  return answer.kind === 'result'
    ? { kind: 'result', resultRef: answer.ref }
    : { kind: 'error', errorRef: answer.ref };
}
