/**
 * Side-by-side measurement with the CPU each serving process used: `abba` (bench/support.ts) over any
 * number of sides, and per side the latency percentiles, requests per second and CPU ms per call of each
 * named process during that side's blocks. Used by bench:floor and bench:polling.
 */
import { cpuMs } from './processes';
import type { SideSample } from './support';
import { abba, percentile, round } from './support';

export interface Figures {
  count: number;
  p50: number;
  p99: number;
  perSecond: number;
  /** CPU ms per call of each counted process during this side's blocks. */
  cpu: Record<string, number>;
  errors: string[];
}

/** `abba` over any number of sides, with the CPU each named process used during each side's blocks. */
export async function measure<S extends string>(
  sides: readonly S[],
  opts: { n: number; block: number; concurrency: number },
  pids: Record<string, number>,
  op: (side: S, i: number) => Promise<void>,
): Promise<Record<S, Figures>> {
  const names = Object.keys(pids);
  const cpu = Object.fromEntries(
    sides.map((s) => [s, Object.fromEntries(names.map((n) => [n, 0]))]),
  ) as Record<S, Record<string, number>>;
  let start: Record<string, number> = {};
  const samples = await abba(sides, opts, op, {
    blockStart: () => (start = Object.fromEntries(names.map((n) => [n, cpuMs(pids[n] ?? 0)]))),
    blockEnd: (side) => {
      const used: Record<string, number> = cpu[side];
      for (const n of names) used[n] = (used[n] ?? 0) + cpuMs(pids[n] ?? 0) - (start[n] ?? 0);
    },
  });
  const figures = (s: S, sample: SideSample): Figures => {
    const count = sample.latencies.length;
    return {
      count,
      p50: round(percentile(sample.latencies, 50), 2),
      p99: round(percentile(sample.latencies, 99), 2),
      perSecond: round((count / sample.wallMs) * 1000, 1),
      cpu: Object.fromEntries(names.map((n) => [n, round((cpu[s][n] ?? 0) / Math.max(1, count), 2)])),
      errors: sample.errors,
    };
  };
  return Object.fromEntries(sides.map((s) => [s, figures(s, samples[s])])) as Record<S, Figures>;
}
