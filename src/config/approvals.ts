/**
 * A project's approval policy (issue 27, docs/approvals.md): which tool calls wait for a person's
 * sign-off before anything reaches the upstream, who may give it, how many sign-offs a call needs and
 * how long it waits. Tool rules are upstream tool names or globs (as in hosting policies, hosting.ts);
 * `annotations` match tools by their MCP hints, read with the spec's defaults (a tool that does not say
 * `readOnlyHint: true` and does not say `destructiveHint: false` may be destructive).
 */
import { z } from 'zod';
import { matchesTool, ToolRuleSchema } from './hosting';

const ApprovalRuleSchema = z.strictObject({
  /** The project upstream's alias, or `*` for every upstream. */
  upstream: z
    .string()
    .regex(/^(\*|[a-z0-9][a-z0-9_-]{0,49})$/, 'an upstream alias or *')
    .default('*'),
  /** Tool names or globs of the upstream's own tool names. */
  tools: z.array(ToolRuleSchema).max(100).default([]),
  /** Tools with any of these hints (spec defaults applied) need approval too. */
  annotations: z
    .array(z.enum(['destructiveHint', 'openWorldHint']))
    .max(2)
    .default([]),
});

export const ApprovalPolicySchema = z.strictObject({
  rules: z.array(ApprovalRuleSchema).min(1).max(100),
  approvers: z
    .strictObject({
      /** Members of the project's owning team (and the instance administrator). */
      managers: z.boolean().default(true),
      /** User ids or handles (stored as ids). */
      users: z.array(z.string().min(1).max(200)).max(100).default([]),
      /** Team ids or slugs (stored as ids): any member may approve. */
      teams: z.array(z.string().min(1).max(200)).max(20).default([]),
    })
    .default({ managers: true, users: [], teams: [] }),
  /** Whether a user may approve a call they made themselves (never counted otherwise). */
  selfApproval: z.boolean().default(false),
  /** How long a request waits before it expires (ms). */
  expiresAfterMs: z
    .number()
    .int()
    .min(1000)
    .max(30 * 86_400_000)
    .default(86_400_000),
  /** Distinct approvers a call needs. */
  required: z.number().int().min(1).max(10).default(1),
});
export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;
export type ApprovalPolicyInput = z.input<typeof ApprovalPolicySchema>;

/** A project's policy as served: the policy and its version (every change, removal included, counts one). */
export interface VersionedApprovalPolicy {
  policy: ApprovalPolicy;
  version: number;
}

export interface ApprovalToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  openWorldHint?: boolean;
}

/** Whether a call of `tool` (the upstream's own name) on upstream `alias` needs approval. */
export function needsApproval(
  policy: ApprovalPolicy | undefined,
  alias: string,
  tool: string,
  hints: ApprovalToolHints | undefined,
): boolean {
  if (!policy) return false;
  return policy.rules.some(
    (r) =>
      (r.upstream === '*' || r.upstream === alias) &&
      (r.tools.some((p) => matchesTool(p, tool)) || r.annotations.some((a) => hinted(a, hints))),
  );
}

function hinted(hint: 'destructiveHint' | 'openWorldHint', h: ApprovalToolHints | undefined): boolean {
  if (hint === 'openWorldHint') return h?.openWorldHint !== false;
  return h?.readOnlyHint !== true && h?.destructiveHint !== false;
}
