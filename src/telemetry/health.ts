/**
 * Liveness and readiness. `/healthz` says the process serves (nothing is checked: a process that answers
 * is alive). `/readyz` runs the role's checks — the store answers, Temporal answers, the worker polls —
 * each within a short time limit, and reports each one, so an orchestrator routes traffic only to a
 * replica that can do its work, and an operator sees which dependency is missing.
 */

export type ReadinessCheck = () => Promise<void>;

export interface Readiness {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
  /**
   * What works but is falling behind (e.g. `watches`: every activity slot of the worker taken, so
   * tasks wait unwatched in Temporal's queue). Still ready: the process is alive and doing its work,
   * and taking it out of rotation would not help. Absent when nothing is.
   */
  degraded?: string[];
}

const CHECK_LIMIT_MS = 2000;

export async function readiness(
  checks: Record<string, ReadinessCheck>,
  degradedWhen: Record<string, () => boolean> = {},
): Promise<Readiness> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await withLimit(check(), CHECK_LIMIT_MS);
        return [name, 'ok'] as const;
      } catch (err) {
        return [name, err instanceof Error ? err.message.slice(0, 200) : 'failed'] as const;
      }
    }),
  );
  const degraded = Object.entries(degradedWhen)
    .filter(([, when]) => {
      try {
        return when();
      } catch {
        return false;
      }
    })
    .map(([name]) => name);
  return {
    ready: entries.every(([, v]) => v === 'ok'),
    checks: Object.fromEntries(entries),
    ...(degraded.length > 0 && { degraded }),
  };
}

function withLimit<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}
