/**
 * The example upstream as a process of its own, for the benchmarks (bench/processes.ts forks it, through
 * tsx, with an IPC channel). Options (`ExampleUpstreamOptions`) come as JSON in argv[2]. Once listening it
 * sends `{ type: 'ready', url, pid }`; it answers `{ type: 'stats', id }` with its request counters, and
 * closes and exits when the parent says `{ type: 'close' }` or goes away. With `recordCallTimes` (a bench
 * option beside the upstream's own) it notes when each `tools/call` with a string `arguments.label`
 * arrived (wall clock, fractional ms: `performance.timeOrigin + performance.now()`, comparable with the
 * bench process's on the same machine) and answers `{ type: 'callTimes', id, labels }` with them.
 */
import type { ExampleUpstreamOptions } from '../examples/upstream/server';
import { startExampleUpstream } from '../examples/upstream/server';

/** What the parent may pass besides the example upstream's options. */
export interface UpstreamProcessOptions extends ExampleUpstreamOptions {
  recordCallTimes?: boolean;
}

export interface UpstreamStatsMessage {
  type: 'stats';
  id: number;
  stats: { tasksGet: number; toolCalls: Record<string, number>; requests: Record<string, number> };
}

export interface UpstreamCallTimesMessage {
  type: 'callTimes';
  id: number;
  /** Label -> when its first tools/call arrived (ms since the epoch, fractional); absent if none did. */
  times: Record<string, number>;
}

/** Wall clock with sub-millisecond resolution, comparable across processes on one machine (not exported:
 * importing this file's values would run it). */
function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

async function main(): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new Error('bench/upstream-process.ts runs forked, with an IPC channel');
  const { recordCallTimes, ...opts } = JSON.parse(process.argv[2] ?? '{}') as UpstreamProcessOptions;
  const callTimes = new Map<string, number>();
  const upstream = await startExampleUpstream({
    ...opts,
    ...(recordCallTimes && {
      onRequest(request) {
        if (request.method !== 'tools/call') return;
        const label = (request.params as { arguments?: { label?: unknown } } | undefined)?.arguments?.label;
        if (typeof label === 'string' && !callTimes.has(label)) callTimes.set(label, wallNow());
      },
    }),
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= upstream.close().finally(() => process.exit(0));
    return closing;
  };
  process.on('message', (m: { type?: string; id?: number; labels?: string[] }) => {
    if (m.type === 'close') void close();
    if (m.type === 'callTimes') {
      const times: Record<string, number> = {};
      for (const label of m.labels ?? []) {
        const at = callTimes.get(label);
        if (at !== undefined) times[label] = at;
      }
      const reply: UpstreamCallTimesMessage = { type: 'callTimes', id: m.id ?? 0, times };
      send(reply);
    }
    if (m.type === 'stats') {
      const { tasksGet, toolCalls, requests } = upstream.stats;
      const reply: UpstreamStatsMessage = {
        type: 'stats',
        id: m.id ?? 0,
        stats: { tasksGet, toolCalls, requests },
      };
      send(reply);
    }
  });
  process.once('disconnect', () => void close());
  process.once('SIGTERM', () => void close());
  send({ type: 'ready', url: upstream.url, pid: process.pid });
}

main().catch((err: unknown) => {
  process.stderr.write(
    `upstream failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
