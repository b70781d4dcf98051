/**
 * Retention: started by the retention schedules (src/temporal/schedules.ts) or an operator's "run now".
 * Computes its cutoff once (workflow time minus the TTL), then purges in bounded batches (one activity
 * call, one transaction each) until a batch comes back short. A worker that dies mid-run costs a retried
 * batch at most; the run continues as new when its history grows long. See docs/retention.md.
 */
import {
  condition,
  allHandlersFinished,
  continueAsNew,
  proxyActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { RetentionActivities } from '../activities/retention';
import type { RetentionWorkflowInput, RetentionWorkflowResult } from './messages';

const { purgeRetentionBatch } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});

export async function retentionWorkflow(input: RetentionWorkflowInput): Promise<RetentionWorkflowResult> {
  const cutoff = input.cutoff ?? new Date(Date.now() - input.ttlMs).toISOString();
  let purged = input.purged ?? 0;
  for (;;) {
    const n = await purgeRetentionBatch({ kind: input.kind, cutoff, batchSize: input.batchSize });
    purged += n;
    if (n < input.batchSize) return { kind: input.kind, cutoff, purged };
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof retentionWorkflow>({ ...input, cutoff, purged });
    }
    if (input.batchPauseMs) await sleep(input.batchPauseMs);
  }
}
