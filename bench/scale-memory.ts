/**
 * bench:scale's memory probes: the gateway's live heap through its inspector, and the RSS of the gateway
 * and Temporal sampled every second.
 */
import { WebSocket } from 'undici';
import type { GatewayProcess } from './processes';
import { rssBytes } from './processes';
import { metricsOf, metricSum } from './support';

/**
 * The gateway's live heap: a full collection, then `heapUsed`, through its inspector (the gateway runs
 * with `--inspect` on `port`; loopback only). Without the forced collection the heap in use mostly
 * measures when the last one ran.
 */
export async function liveHeap(port: number): Promise<number> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const ws = new WebSocket(targets[0]?.webSocketDebuggerUrl ?? '');
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let next = 0;
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = ++next;
      ws.addEventListener('message', function onMessage(e) {
        const msg = JSON.parse(String(e.data)) as { id?: number; result?: Record<string, unknown> };
        if (msg.id !== id) return;
        ws.removeEventListener('message', onMessage);
        resolve(msg.result ?? {});
      });
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    const r = await call('Runtime.evaluate', {
      expression: 'process.memoryUsage().heapUsed',
      returnByValue: true,
    });
    return Number((r['result'] as { value?: unknown } | undefined)?.value);
  } finally {
    ws.close();
  }
}

/**
 * RSS of the gateway and Temporal every `everyMs` (default a second), with the peak of each since `from`
 * (default none).
 */
export function sampleRss(
  gateway: GatewayProcess,
  temporalPid: number,
  everyMs = 1000,
  from = { gateway: 0, temporal: 0 },
) {
  const peak = { ...from };
  const timer = setInterval(() => {
    try {
      peak.gateway = Math.max(peak.gateway, gateway.rssBytes());
      peak.temporal = Math.max(peak.temporal, rssBytes(temporalPid));
    } catch {
      // a process that is gone has no RSS; the bench reports that elsewhere
    }
  }, everyMs);
  return { peak, stop: () => clearInterval(timer) };
}

/**
 * The watch lag (`taskrouter_watch_lag_seconds`, its most overdue upstream) every `everyMs`, kept per
 * phase of the run: how far behind the polls ran while tasks were created, while they ran, and while they
 * ended. With it, per phase, the upstream polls the gateway made (`tasks/get` in
 * `taskrouter_upstream_calls_total`) a second and the gateway's CPU per poll (all of its CPU in the phase,
 * whatever else it did, divided by its polls): what the polls got of the machine. A sample that fails (the
 * process busy past the timeout) is skipped; its interval counts towards the next one.
 */
export function sampleWatchLag(gateway: { healthPort: number }, everyMs = 2000) {
  const maxByPhase = new Map<string, number>();
  const work = new Map<string, { seconds: number; polls: number; cpuSeconds: number }>();
  let phase = 'creating';
  let stopped = false;
  let last: { at: number; polls: number; cpuSeconds: number } | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        const text = await metricsOf(gateway);
        const lag = metricSum(text, 'taskrouter_watch_lag_seconds', 'max') ?? 0;
        maxByPhase.set(phase, Math.max(maxByPhase.get(phase) ?? 0, lag));
        const now = { at: Date.now(), polls: pollsOf(text), cpuSeconds: cpuSecondsOf(text) };
        if (last) {
          const w = work.get(phase) ?? { seconds: 0, polls: 0, cpuSeconds: 0 };
          w.seconds += (now.at - last.at) / 1000;
          w.polls += now.polls - last.polls;
          w.cpuSeconds += now.cpuSeconds - last.cpuSeconds;
          work.set(phase, w);
        }
        last = now;
      } catch {
        // skipped: the report says what was sampled
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    maxByPhase,
    /** Per phase: upstream polls a second, and the gateway's CPU ms per poll. */
    pollsByPhase() {
      return Object.fromEntries(
        [...work].map(([name, w]) => [
          name,
          {
            pollsPerSecond: Math.round(w.polls / Math.max(w.seconds, 0.001)),
            cpuMsPerPoll: w.polls > 0 ? Math.round((1000 * w.cpuSeconds * 100) / w.polls) / 100 : null,
          },
        ]),
      );
    },
    enter(next: string) {
      phase = next;
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** The gateway's `tasks/get` requests to its upstreams so far (its polls). */
function pollsOf(metrics: string): number {
  return metrics
    .split('\n')
    .filter((l) => l.startsWith('taskrouter_upstream_calls_total{') && l.includes('method="tasks/get"'))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

function cpuSecondsOf(metrics: string): number {
  return metricSum(metrics, 'taskrouter_process_cpu_seconds_total') ?? 0;
}
