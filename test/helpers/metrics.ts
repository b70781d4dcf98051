/**
 * Reading a gateway's health and metrics routes as the tests do: `/readyz` (status and JSON body),
 * `/metrics` (the Prometheus text, which must answer 200), and one sample of it by name and labels.
 */

export async function readyz(base: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export async function metricsText(base: string): Promise<string> {
  const res = await fetch(`${base}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return res.text();
}

/** The value of the sample `name` with exactly these labels (none: the unlabelled one); undefined if absent. */
export function metricSample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m?.[1] !== name) continue;
    const have = (m[2] ?? '')
      .split(/,(?=\w+=")/)
      .filter(Boolean)
      .sort()
      .join(',');
    if (have === want) return Number(m[3]);
  }
  return undefined;
}
