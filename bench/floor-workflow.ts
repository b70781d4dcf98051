/**
 * The least a durable task creation can be on Temporal (bench/floor.ts): update-with-start of a
 * workflow whose first workflow task makes the upstream call as a local activity and answers the update
 * with its outcome. No store, no codec, no search attributes, no second local activity.
 */
import {
  allHandlersFinished,
  condition,
  defineUpdate,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { FloorActivities } from './floor-activities';

export const firstOutcomeUpdate = defineUpdate<unknown>('firstOutcome');

const { callUpstream } = proxyLocalActivities<FloorActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});

export async function floorTask(args: Record<string, unknown>): Promise<void> {
  const first: { outcome?: unknown } = {};
  setHandler(firstOutcomeUpdate, async () => {
    await condition(() => first.outcome !== undefined);
    return first.outcome;
  });
  first.outcome = await callUpstream(args);
  await condition(allHandlersFinished);
}
