import type { ExampleUpstream } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';

/**
 * The example upstream without tasks, with its own call log: `calls` counts its tools/call requests per
 * `label` argument, so a test can say how often a call reached it across gateway restarts.
 */
export async function startLabelCountingUpstream(): Promise<{
  upstream: ExampleUpstream;
  calls: Map<string, number>;
}> {
  const calls = new Map<string, number>();
  const upstream = await startExampleUpstream({
    advertiseTasks: false,
    onRequest: (request) => {
      const label = (request.params as { arguments?: { label?: string } } | undefined)?.arguments?.label;
      if (request.method === 'tools/call' && label) calls.set(label, (calls.get(label) ?? 0) + 1);
    },
  });
  return { upstream, calls };
}
