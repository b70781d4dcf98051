/**
 * The retention schedules (docs/retention.md): one purges task payloads, one task metadata and history.
 * Created at the API's start-up, or updated in place when they exist, so configuration changes apply on
 * the next start. Their ids derive from the task queue, so several deployments can share a namespace.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import type { RetentionKind } from '../workflows/messages';
import type { Config } from '../config/config';
import type { RetentionWorkflowInput } from '../workflows/messages';
import { RETENTION_WORKFLOW_TYPE } from '../workflows/messages';
import type { retentionWorkflow } from '../workflows/retention';

export const RETENTION_KINDS: readonly RetentionKind[] = ['payloads', 'metadata'];

export type RetentionConfig = Config['retention'];

export function retentionScheduleId(taskQueue: string, kind: RetentionKind): string {
  return `${taskQueue}-retention-${kind}`;
}

export function retentionInput(retention: RetentionConfig, kind: RetentionKind): RetentionWorkflowInput {
  return {
    kind,
    ttlMs: kind === 'payloads' ? retention.payloadTtlMs : retention.metadataTtlMs,
    batchSize: retention.batchSize,
    ...(retention.batchPauseMs > 0 && { batchPauseMs: retention.batchPauseMs }),
  };
}

function scheduleParts(taskQueue: string, retention: RetentionConfig, kind: RetentionKind) {
  const scheduleId = retentionScheduleId(taskQueue, kind);
  const action: ScheduleOptionsStartWorkflowAction<typeof retentionWorkflow> = {
    type: 'startWorkflow',
    workflowType: RETENTION_WORKFLOW_TYPE,
    taskQueue,
    workflowId: scheduleId,
    args: [retentionInput(retention, kind)],
    staticSummary: `retention: ${kind}`,
  };
  return {
    scheduleId,
    spec: {
      intervals: [
        {
          every: (kind === 'payloads'
            ? retention.payloadPurgeEvery
            : retention.metadataPurgeEvery) as Duration,
        },
      ],
    },
    action,
    // A run still going when the next is due makes the next one pointless; after an outage, one catch-up
    // run at most (the cutoff is computed when a run starts, so one run covers everything missed).
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1h' as Duration, pauseOnFailure: false },
  };
}

/** Creates both schedules, or updates them to the current configuration when they exist. */
export async function ensureRetentionSchedules(
  client: Client,
  taskQueue: string,
  retention: RetentionConfig,
): Promise<void> {
  for (const kind of RETENTION_KINDS) {
    const parts = scheduleParts(taskQueue, retention, kind);
    try {
      await client.schedule.create(parts);
    } catch (err) {
      if ((err as Error).name !== 'ScheduleAlreadyRunning') throw err;
      await client.schedule.getHandle(parts.scheduleId).update((prev) => ({
        ...prev,
        spec: parts.spec,
        action: parts.action,
        policies: parts.policies,
      }));
    }
  }
}

export interface RetentionRun {
  kind: RetentionKind;
  scheduleId: string;
  /** The run started by this trigger, or the run already going (a second one is skipped). */
  workflowId?: string;
  started: boolean;
}

/** "Run now": triggers the schedule and reports the workflow it started (or the one already running). */
export async function triggerRetention(
  client: Client,
  taskQueue: string,
  kind: RetentionKind,
  waitMs = 5_000,
): Promise<RetentionRun> {
  const scheduleId = retentionScheduleId(taskQueue, kind);
  const handle = client.schedule.getHandle(scheduleId);
  const before = (await handle.describe()).info.numActionsTaken;
  await handle.trigger(ScheduleOverlapPolicy.SKIP);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { info } = await handle.describe();
    if (info.numActionsTaken > before) {
      const workflowId = info.recentActions.at(-1)?.action.workflow.workflowId;
      return { kind, scheduleId, started: true, ...(workflowId !== undefined && { workflowId }) };
    }
    if (Date.now() >= deadline) {
      const running = info.runningActions[0]?.workflow.workflowId;
      return { kind, scheduleId, started: false, ...(running !== undefined && { workflowId: running }) };
    }
    await sleep(100);
  }
}
