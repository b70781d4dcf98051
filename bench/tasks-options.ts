/**
 * What every part of bench:tasks (bench/tasks.ts) shares: its command-line options with their help text,
 * the targets the report judges against, and the clients and process ids the measurements are given.
 * Kept apart so that each measurement module depends on these and not on the entry point.
 */
import type { McpHttpClient } from './support';
import { readFlags } from './options';

export const TARGET = {
  creationP50: 3,
  creationP99: 4,
  tasksPerSecond: 100,
  /** Throughput at a higher in-flight level over the first level's: "not falling", with room for noise. */
  throughputKept: 0.9,
  visibilityP99: 1.2,
};
/** The gateway's cap on listen streams per caller and project (src/api/mcp/subscriptions.ts). */
export const STREAMS_PER_CALLER = 16;

export interface Options {
  n: number;
  concurrency: number;
  block: number;
  seconds: number;
  due: number;
  poll: number;
  visibility: number;
  pollEvery: number;
  lanes: number;
  push: number;
  perStream: number;
  streams: number;
  levels: number[];
  burst: number;
  clients: number;
  inflightPoll: number;
  quiet: number;
  rampSeconds: number;
  burstSeconds: number;
  short: number;
  long: number;
  warmup: number;
}

export function parseOptions(argv: string[]): Options {
  const flags = readFlags(
    argv,
    {
      n: '200',
      concurrency: '1',
      block: '20',
      seconds: '1',
      due: '10',
      poll: '500',
      visibility: '45',
      'poll-every': '50',
      lanes: '3',
      push: '100',
      'per-stream': '25',
      streams: '4000',
      levels: '300,2000',
      burst: '200',
      clients: '32',
      'inflight-poll': '5000',
      quiet: '3',
      'ramp-seconds': '45',
      'burst-seconds': '20',
      short: '5',
      long: '60',
      warmup: '10',
    },
    'usage: npm run bench:tasks -- [options]\n' +
      '  --n 200               creation latency: calls per side (task-aware and ordinary)\n' +
      '  --concurrency 1       creation latency: calls in flight\n' +
      '  --block 20            creation latency: calls per ABBA block\n' +
      '  --seconds 1           how long the tasks of 1 and 2 run\n' +
      '  --due 10              how long the tasks of 3 run (all are created before the first is due)\n' +
      '  --poll 500            pollIntervalMs the example upstream suggests\n' +
      '  --visibility 45       tasks polled with tasks/get until completed\n' +
      '  --poll-every 50       client poll period, ms; --lanes 3 tasks watched at a time\n' +
      '  --push 100            tasks followed on subscriptions/listen; --per-stream 25 task ids each\n' +
      '  --streams 4000        idle listen streams held for the memory figure\n' +
      '  --levels 300,2000     tasks in flight at which creation throughput is measured\n' +
      '  --burst 200           tasks created (and timed) at each level; --clients 32 concurrent clients\n' +
      '  --inflight-poll 5000  pollIntervalMs the bulk upstream suggests for its long tasks\n' +
      '  --quiet 3             seconds of quiet before each burst, to see what the tasks in flight cost\n' +
      '  --ramp-seconds 45     longest ramp to a level (the level reached is reported)\n' +
      '  --burst-seconds 20    no burst call starts later (tasks/s counts the tasks it created)\n' +
      '  --short 5 --long 60   history tasks, seconds\n' +
      '  --warmup 10           unmeasured calls per side first\n',
  );
  const { int, num } = flags;
  return {
    n: int('n', 1),
    concurrency: int('concurrency', 1),
    block: int('block', 1),
    seconds: num('seconds', 0),
    due: num('due', 0),
    poll: int('poll', 1),
    visibility: int('visibility', 0),
    pollEvery: num('poll-every', 1),
    lanes: int('lanes', 1),
    push: int('push', 0),
    perStream: Math.min(100, int('per-stream', 1)),
    streams: int('streams', 0),
    levels: flags.ints('levels', 0).sort((a, b) => a - b),
    burst: int('burst', 1),
    clients: int('clients', 1),
    inflightPoll: int('inflight-poll', 1),
    quiet: num('quiet', 0.5),
    rampSeconds: num('ramp-seconds', 0),
    burstSeconds: num('burst-seconds', 0),
    short: num('short', 0),
    long: num('long', 0),
    warmup: int('warmup', 0),
  };
}

export interface Clients {
  /** The main user, declaring the Tasks extension. */
  tasks: McpHttpClient;
  /** The main user, without the Tasks extension: ordinary calls. */
  plain: McpHttpClient;
  /** The main user's client for listen streams (a dispatcher without a body timeout). */
  streams: McpHttpClient;
}

/** The processes whose CPU time is counted: the gateway and the Temporal dev server. */
export interface Pids {
  gateway: number;
  temporal: number;
}
