/**
 * Where a quick hosted call's time goes (bench:hosted 1): its answer carries no task id, so its workflow
 * is found by type and start time in Temporal's visibility, and the median time from the workflow's start
 * to each event of its history is read from the events' timestamps (the client's own latency is beside
 * it in the report: what lies before the start and after the update is the API's part).
 */
import type { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { percentile } from './support';

export async function hostedCallTimeline(
  client: Client,
  since: Date,
  until: Date,
  count: number,
): Promise<Array<{ event: string; ms: number }>> {
  const E = proto.api.enums.v1.EventType;
  const query =
    `WorkflowType = 'hostedTaskWorkflow' AND StartTime >= '${since.toISOString()}'` +
    ` AND StartTime <= '${until.toISOString()}'`;
  const ids: string[] = [];
  for await (const w of client.workflow.list({ query })) ids.push(w.workflowId);
  const sample = ids.slice(0, count);
  const offsets = new Map<string, number[]>();
  for (const id of sample) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const seen = new Map<string, number>();
    let start: number | undefined;
    for (const e of history.events ?? []) {
      const at = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
      start ??= at;
      const type = (E[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '').toLowerCase();
      const k = (seen.get(type) ?? 0) + 1;
      seen.set(type, k);
      const key = k > 1 ? `${type} #${k}` : type;
      offsets.set(key, [...(offsets.get(key) ?? []), at - start]);
      if (type === 'workflow_execution_update_completed') break;
    }
  }
  return [...offsets.entries()]
    .filter(([, xs]) => xs.length >= sample.length / 2)
    .map(([event, xs]) => ({ event, ms: percentile(xs, 50) }))
    .sort((a, b) => a.ms - b.ms);
}
