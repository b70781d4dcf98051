/**
 * A hosted call's turn at its upstream's `hosting.maxConcurrent` slots (store/tasks/hosted-queue.ts,
 * docs/hosted-tasks.md "The queue"). The workflow waits between looks (workflows/hosted-slot.ts): a queued
 * call holds no worker's activity slot, so queues of any length, in any number of projects, never keep a
 * worker from running the calls that hold the upstreams' slots.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { SlotAnswer } from '../store/tasks/hosted-queue';
import type { ActivityDeps } from './deps';
import { FAILURE } from './failures';
import { recordWorking } from './hosted-status';
import { sleepWithHeartbeat } from './support';
import type { GiveBackHostedSlotInput, HostedSlotInput, TakeHostedSlotInput } from './types';

/** How often a queued call of an older history (waitForHostedSlot) looks whether a slot is free. */
const QUEUE_LOOK_EVERY_MS = 1000;
/** A waiting call looks at least once a minute: one silent this long may be closed (freeAbandoned). */
const SILENT_FOR_MS = 5 * 60_000;
/** Workflows asked about per look, of each kind (silent waiting calls, slot holders). */
const ASKED_PER_LOOK = 5;

/** Up to `n` of `items`, at random. */
function sample<T>(items: T[], n: number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy.slice(0, n);
}

export function createHostedSlotActivities(deps: ActivityDeps) {
  const queued = (input: HostedSlotInput, position: number) =>
    recordWorking(
      deps,
      input,
      `Queued: position ${position}; upstream "${input.upstream}" runs at most ${input.maxConcurrent} hosted calls at once`,
    );

  /**
   * Frees the slots and places of calls whose workflow closed without giving theirs back (terminated by
   * an operator: its task stays unfinished, so the queue's own look at the tasks cannot tell): waiting
   * calls that stopped looking at the queue and, for the first in line, a few of the calls holding the
   * slots (at random: each look asks about others). Says whether any was freed.
   */
  async function freeAbandoned(upstreamId: string, holdersToo: boolean): Promise<boolean> {
    const { hostedQueue: queue, workflowClosed } = deps;
    if (!queue || !workflowClosed) return false;
    const before = new Date(Date.now() - SILENT_FOR_MS).toISOString();
    const asked = await queue.suspects(upstreamId, before, ASKED_PER_LOOK);
    if (holdersToo) asked.push(...sample(await queue.holders(upstreamId), ASKED_PER_LOOK));
    // Temporal that does not answer says nothing about them: alive, as far as this look knows.
    const closed = await Promise.all(asked.map((c) => workflowClosed(c.workflowId).catch(() => false)));
    const gone = asked.filter((_, i) => closed[i]);
    for (const call of gone) {
      deps.logger.warn({ taskKey: call.taskKey }, 'hosted call slot or place freed: its workflow is closed');
      await queue.release(call.taskKey);
    }
    return gone.length > 0;
  }

  return {
    /**
     * One look at the queue: the slot if it is the call's turn, else its place, shown as the task's
     * status message when it changed. A call that has not moved since its last look asks about the calls
     * that may hold it up for good (freeAbandoned). One whose arguments are gone (payload retention) can
     * never be sent: it fails, and the workflow gives its place back.
     */
    async takeHostedSlot(input: TakeHostedSlotInput): Promise<SlotAnswer> {
      const queue = deps.hostedQueue;
      if (!queue) return { running: true };
      if (input.requestRef !== undefined && !(await deps.payloads.exists(input.requestRef, input.taskKey))) {
        throw ApplicationFailure.create({
          message: `The call waited for a slot of upstream "${input.upstream}" longer than its arguments are kept (the payload retention); nothing was sent`,
          type: FAILURE.notStarted,
          nonRetryable: true,
        });
      }
      let slot = await queue.acquire(input.taskKey, input.upstreamId, input.maxConcurrent);
      // Stuck where it stood at its last look: perhaps behind calls that will never end.
      if (
        !slot.running &&
        slot.position === input.shown &&
        (await freeAbandoned(input.upstreamId, slot.position === 1))
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
