/**
 * Where the Temporal SDK's own worker metrics are (its core runtime serves them on a loopback port the
 * worker role chooses), so any role's `/metrics` can append them. Kept apart from the worker code so
 * the API role, which never loads the worker, can read it too.
 */
let url: string | undefined;

export function setTemporalMetricsUrl(value: string): void {
  url = value;
}

/** The SDK's exposition text, or nothing when no worker runs in this process. */
export async function temporalMetricsText(): Promise<string> {
  if (!url) return '';
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return res.ok ? res.text() : '';
}
