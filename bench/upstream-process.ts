/**
 * The example upstream as a process of its own, for the benchmarks (bench/processes.ts forks it, through
 * tsx, with an IPC channel). Options (`ExampleUpstreamOptions`) come as JSON in argv[2]. Once listening it
 * sends `{ type: 'ready', url, pid }`; it answers `{ type: 'stats', id }` with its request counters, and
 * closes and exits when the parent says `{ type: 'close' }` or goes away.
 */
import type { ExampleUpstreamOptions } from '../examples/upstream/server';
import { startExampleUpstream } from '../examples/upstream/server';

export interface UpstreamStatsMessage {
  type: 'stats';
  id: number;
  stats: { tasksGet: number; toolCalls: Record<string, number>; requests: Record<string, number> };
}

async function main(): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new Error('bench/upstream-process.ts runs forked, with an IPC channel');
  const opts = JSON.parse(process.argv[2] ?? '{}') as ExampleUpstreamOptions;
  const upstream = await startExampleUpstream(opts);
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= upstream.close().finally(() => process.exit(0));
    return closing;
  };
  process.on('message', (m: { type?: string; id?: number }) => {
    if (m.type === 'close') void close();
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
