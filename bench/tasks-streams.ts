/**
 * bench:tasks, part 4 (see bench/tasks.ts): what idle listen streams cost the gateway, in RSS bytes and
 * file descriptors per stream, from the slope over the number of streams open.
 */
import { readdirSync } from 'node:fs';
import { note } from './env';
import type { GatewayProcess } from './processes';
import type { ListenStream, McpHttpClient } from './support';
import { mapLimit, percentile, round, sleep } from './support';
import type { Created } from './task-support';
import { createTask } from './task-support';
import type { Options } from './tasks-options';
import { STREAMS_PER_CALLER } from './tasks-options';

/** Median of three RSS readings 300 ms apart, bytes. */
async function steadyRss(gateway: GatewayProcess): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sleep(300);
    xs.push(gateway.rssBytes());
  }
  return percentile(xs, 50);
}

const openFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

export async function idleStreams(
  opts: Options,
  gateway: GatewayProcess,
  streamUsers: readonly McpHttpClient[],
  taskUsers: readonly McpHttpClient[],
) {
  note(`4. idle listen streams: ${opts.streams} streams of ${streamUsers.length} users`);
  // Each user follows one long task of its own (created before the baseline, so only streams are counted).
  const tasks = await mapLimit(taskUsers, opts.clients, (c) =>
    createTask(c, 'bulk.slow_compute', { seconds: 3600, label: 'followed' }),
  );
  await sleep(2000);
  const before = { rss: await steadyRss(gateway), fds: openFds(gateway.pid) };
  // RSS after each quarter of the streams: the slope of a line through the five points is less at the
  // mercy of one garbage collection than a single before/after difference.
  const points: Array<[number, number]> = [[0, before.rss]];
  const streams: ListenStream[] = [];
  const errors: string[] = [];
  const open = async (i: number) => {
    const user = Math.floor(i / STREAMS_PER_CALLER);
    const client = streamUsers[user] as McpHttpClient;
    try {
      const stream = await client.listen({ taskIds: [(tasks[user] as Created).taskId] });
      streams.push(stream);
      if (((stream.acknowledged.taskIds ?? []) as string[]).length !== 1) errors.push('task id not honoured');
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
  };
  try {
    for (let step = 1; step <= 4; step++) {
      const from = Math.round(((step - 1) * opts.streams) / 4);
      const to = Math.round((step * opts.streams) / 4);
      await mapLimit(
        Array.from({ length: to - from }, (_, k) => from + k),
        opts.clients,
        open,
      );
      await sleep(1000);
      points.push([streams.length, await steadyRss(gateway)]);
    }
    const after = { rss: (points.at(-1) as [number, number])[1], fds: openFds(gateway.pid) };
    const bytesPerStream = slope(points);
    return {
      streams: streams.length,
      rssBeforeMB: round(before.rss / 2 ** 20, 1),
      rssAfterMB: round(after.rss / 2 ** 20, 1),
      rssMB: points.map(([n, rss]) => [n, round(rss / 2 ** 20, 1)]),
      kbPerStream: round(bytesPerStream / 1024, 1),
      streamsPerGiB: bytesPerStream > 0 ? round(2 ** 30 / bytesPerStream, -2) : Number.NaN,
      fdsAdded: after.fds - before.fds,
      errors,
    };
  } finally {
    await Promise.all(streams.map((s) => s.close()));
  }
}

/** Least-squares slope of y over x. */
function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return sxx > 0 ? sxy / sxx : Number.NaN;
}
