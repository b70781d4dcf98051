/**
 * An upstream's hosting policy in the store (issue 24; src/config/hosting.ts has the policy and its
 * matching, docs/admin.md "Hosted tools" the settings): kept as JSON with its defaults applied in
 * `upstreams.hosting`, null for none. A patch's `hosting` replaces the policy, `null` removes it, an
 * omitted one keeps it; restating the stored policy changes nothing. Served records carry it as
 * `UpstreamRecord.hosting`, so a change reaches every replica like any other upstream change (the
 * control-plane generation, serving-cache.ts).
 */
import type { HostingPolicy, HostingPolicyInput } from '../../config/hosting';
import { HostingPolicySchema } from '../../config/hosting';
import type { UpstreamsTable } from '../schema';

/** The column for a policy: canonical JSON (fields in one order, defaults applied), null for none. */
export function hostingColumn(policy: HostingPolicyInput | null | undefined): string | null {
  if (policy === null || policy === undefined) return null;
  const p = HostingPolicySchema.parse(policy);
  const canonical: HostingPolicy = {
    tools: p.tools,
    promoteAfterMs: p.promoteAfterMs,
    repeatable: p.repeatable,
    callDeadlineMs: p.callDeadlineMs,
    ...(p.maxConcurrent !== undefined && { maxConcurrent: p.maxConcurrent }),
  };
  return JSON.stringify(canonical);
}

/** The stored policy; none when the column is empty (or, never expected, no longer a valid policy). */
export function hostingOf(row: Pick<UpstreamsTable, 'hosting'>): HostingPolicy | undefined {
  if (!row.hosting) return undefined;
  try {
    const parsed = HostingPolicySchema.safeParse(JSON.parse(row.hosting));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Applies a patch's `hosting` (undefined: not given) to `next`, naming the field when it changes. */
export function patchHosting(
  row: UpstreamsTable,
  next: UpstreamsTable,
  hosting: HostingPolicyInput | null | undefined,
  fields: string[],
): void {
  if (hosting === undefined) return;
  const json = hostingColumn(hosting);
  if (json !== (row.hosting ?? null)) {
    next.hosting = json;
    fields.push('hosting');
  }
}

/** What audit records say of a policy: the policy itself (tool names and numbers, nothing secret). */
export function hostingAudit(json: string | null | undefined): { hosting: HostingPolicy | null } {
  return { hosting: json ? (hostingOf({ hosting: json }) ?? null) : null };
}
