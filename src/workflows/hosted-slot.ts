/**
 * A hosted call's turn at its upstream's `hosting.maxConcurrent` slots (docs/hosted-tasks.md, "The
 * queue"), waited for in the workflow: a look at the queue (a local activity), then a timer, so a queued
 * call holds none of a worker's activity slots. A call that gives its slot back wakes the first in line
 * with a signal; the timer (2 s, doubling to a minute) is what moves the others' places and what finds a
 * slot whose holder never gave it back. History grows by a look per wake-up, at most about one a minute.
 */
import { condition, getExternalWorkflowHandle, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { TaskActivities } from '../activities';
import type { HostedSlotInput } from '../activities/types';
import { hostedSlotFreedSignal } from './messages';

/** Histories from before it waited with an activity (waitForHostedSlot) replay that way. */
export const QUEUE_WITHOUT_ACTIVITY_SLOT = 'hosted-queue-without-activity-slot';

const FIRST_LOOK_AFTER_MS = 2000;
const LONGEST_LOOK_AFTER_MS = 60_000;

const { takeHostedSlot, giveBackHostedSlot } = proxyLocalActivities<TaskActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200ms', maximumInterval: '10s' },
});

export function hostedSlot(input: HostedSlotInput) {
  let woken = false;
  setHandler(hostedSlotFreedSignal, () => {
    woken = true;
  });
  const slot = { taskKey: input.taskKey, upstreamId: input.upstreamId, maxConcurrent: input.maxConcurrent };

  /** Wakes the waiting calls the queue named (a closed one cannot be signalled, and needs nothing). */
  const wake = async (workflowIds: string[]) => {
    await Promise.all(
      workflowIds.map((id) =>
        getExternalWorkflowHandle(id)
          .signal(hostedSlotFreedSignal)
          .catch(() => undefined),
      ),
    );
  };

  return {
    /**
     * Waits until the call holds a slot (cancelled with the scope it runs in); fails when the round's
     * request (`requestRef`) is no longer kept.
     */
    async take(requestRef: string): Promise<void> {
      let shown: number | undefined;
      let pause = FIRST_LOOK_AFTER_MS;
      for (;;) {
        woken = false;
        const answer = await takeHostedSlot({ ...input, requestRef, ...(shown !== undefined && { shown }) });
        if (answer.running) return;
        shown = answer.position;
        const wasWoken = await condition(() => woken, pause);
        pause = wasWoken ? FIRST_LOOK_AFTER_MS : Math.min(pause * 2, LONGEST_LOOK_AFTER_MS);
      }
    },
    /** The call is over: its slot (or place) goes to the next. */
    async release(): Promise<void> {
      await wake(await giveBackHostedSlot(slot));
    },
    /** The upstream waits for the client's answer: the slot is lent, the place kept (take() again after). */
    async lend(): Promise<void> {
      await wake(await giveBackHostedSlot({ ...slot, keepPlace: true }));
    },
  };
}
