/**
 * A hosted call's turn at its upstream's `hosting.maxConcurrent` slots (store/tasks/hosted-queue.ts,
 * docs/hosted-tasks.md "The queue"). The workflow waits between looks (workflows/hosted-slot.ts): a queued
 * call holds no worker's activity slot, so queues of any length, in any number of projects, never keep a
 * worker from running the calls that hold the upstreams' slots.
 */
import type { SlotAnswer } from '../store/tasks/hosted-queue';
import type { ActivityDeps } from './deps';
import { recordWorking } from './hosted-status';
import { sleepWithHeartbeat } from './support';
import type { GiveBackHostedSlotInput, HostedSlotInput, TakeHostedSlotInput } from './types';

/** How often a queued call of an older history (waitForHostedSlot) looks whether a slot is free. */
const QUEUE_LOOK_EVERY_MS = 1000;

export function createHostedSlotActivities(deps: ActivityDeps) {
  const queued = (input: HostedSlotInput, position: number) =>
    recordWorking(
      deps,
      input,
      `Queued: position ${position}; upstream "${input.upstream}" runs at most ${input.maxConcurrent} hosted calls at once`,
    );

  /**
   * Frees the slots of calls whose workflow closed without giving theirs back (terminated by an
   * operator: its task stays unfinished, so the queue's own look at the tasks cannot tell). Says whether
   * any was freed.
   */
  async function freeAbandoned(upstreamId: string): Promise<boolean> {
    const { hostedQueue: queue, workflowClosed } = deps;
    if (!queue || !workflowClosed) return false;
    let freed = false;
    for (const holder of await queue.holders(upstreamId)) {
      if (!(await workflowClosed(holder.workflowId))) continue;
      deps.logger.warn({ taskKey: holder.taskKey }, 'hosted call slot freed: its workflow is closed');
      await queue.release(holder.taskKey);
      freed = true;
    }
    return freed;
  }

  return {
    /**
     * One look at the queue: the slot if it is the call's turn, else its place, shown as the task's
     * status message when it changed. The first in line that found no slot at its last look either asks
     * whether the calls holding them are still alive.
     */
    async takeHostedSlot(input: TakeHostedSlotInput): Promise<SlotAnswer> {
      const queue = deps.hostedQueue;
      if (!queue) return { running: true };
      let slot = await queue.acquire(input.taskKey, input.upstreamId, input.maxConcurrent);
      if (
        !slot.running &&
        slot.position === 1 &&
        input.shown === 1 &&
        (await freeAbandoned(input.upstreamId))
      ) {
        slot = await queue.acquire(input.taskKey, input.upstreamId, input.maxConcurrent);
      }
      if (!slot.running && slot.position !== input.shown) await queued(input, slot.position);
      return slot;
    },

    /**
     * Gives the call's slot (or place) back, or lends it while the upstream waits for the client's
     * answer (`keepPlace`); returns the workflows of the waiting calls to wake.
     */
    async giveBackHostedSlot(input: GiveBackHostedSlotInput): Promise<string[]> {
      const queue = deps.hostedQueue;
      if (!queue) return [];
      return queue.giveBack(input.taskKey, input.upstreamId, input.maxConcurrent, input.keepPlace);
    },

    /**
     * Histories from before the queue waited in the workflow: waits, heartbeating (and holding an
     * activity slot), until the call may take a slot.
     */
    async waitForHostedSlot(input: HostedSlotInput): Promise<void> {
      const queue = deps.hostedQueue;
      if (!queue) return;
      let shown: number | undefined;
      for (;;) {
        const slot = await queue.acquire(input.taskKey, input.upstreamId, input.maxConcurrent);
        if (slot.running) return;
        if (slot.position !== shown) {
          shown = slot.position;
          await queued(input, slot.position);
        }
        await sleepWithHeartbeat(QUEUE_LOOK_EVERY_MS);
      }
    },

    /** Histories from before giveBackHostedSlot: gives the call's slot (or its place in the queue) back. */
    async releaseHostedSlot(input: { taskKey: string }): Promise<void> {
      await deps.hostedQueue?.release(input.taskKey);
    },
  };
}
