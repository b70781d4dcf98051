/**
 * Whether the storm covered the workflow adopting the API's watch hub row (tasks.hub.adoptApiEnlistment,
 * on in stack.ts; the 2 s slow tasks of workload.ts). An adopted first enlistment leaves no local
 * activity in the history (no `enlistWatch`, and a poll-recorded end needs none) but does leave the
 * watch's timer; a workflow that enlisted its task records the `enlistWatch` marker, and one the hub's
 * word reached before its first watch records neither (no wait, so no timer).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import { taskWorkflowId } from '../../src/workflows/messages';
import { localActivityMarkers } from '../helpers/temporal';
import { GATEWAY_CONFIG_FILE, REPO_ROOT } from './topology';
import type { Creation } from './workload';

/** At most this many histories are read (one request each). */
const SAMPLE = 40;

export interface AdoptionFigure {
  /** Completed 2 s slow tasks whose histories were read. */
  sampled: number;
  /** Of those, the workflows that adopted the API's row. */
  adopted: number;
}

/** The gateway's namespace, as the replicas' configuration (config/compose.json) names it. */
function gatewayNamespace(): string {
  const config = JSON.parse(readFileSync(path.join(REPO_ROOT, GATEWAY_CONFIG_FILE), 'utf8')) as {
    temporal?: { namespace?: string };
  };
  return config.temporal?.namespace ?? 'default';
}

export async function adoptionFigure(
  address: string,
  creations: readonly Creation[],
): Promise<AdoptionFigure> {
  const sample = creations
    .filter(
      (c) =>
        c.kind === 'slow' &&
        c.args['pollIntervalMs'] === 2000 &&
        c.taskId !== undefined &&
        c.result?.['status'] === 'completed',
    )
    .slice(0, SAMPLE);
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace: gatewayNamespace() });
    let adopted = 0;
    for (const c of sample) {
      const handle = client.workflow.getHandle(taskWorkflowId(taskKeyOf(c.taskId ?? '')));
      const events = (await handle.fetchHistory()).events ?? [];
      const timers = events.filter((e) => e.timerStartedEventAttributes).length;
      if (localActivityMarkers(events) === 0 && timers > 0) adopted++;
    }
    return { sampled: sample.length, adopted };
  } finally {
    await connection.close();
  }
}
