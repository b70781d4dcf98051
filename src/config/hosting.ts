/**
 * The hosting policy of one project upstream (issue 24, docs/hosted-tasks.md): which of its ordinary
 * tools the gateway runs as its own durable tasks, how soon a call is promoted to a task, which tools may
 * be sent again after an interruption, and how many hosted calls may run against it at once.
 *
 * Tool rules are the upstream's own tool names (without the alias) or glob patterns (`*`, `?`, `[a-z]`,
 * `{a,b}`); a rule that matches no current tool is accepted (tools come and go) and reported as matching
 * nothing by `unmatchedRules`.
 */
import picomatch from 'picomatch';
import { z } from 'zod';

const PATTERN = /^[A-Za-z0-9_.\-/*?[\]{},]{1,128}$/;

function compiles(pattern: string): boolean {
  try {
    picomatch.makeRe(pattern, { strictBrackets: true });
    return true;
  } catch {
    return false;
  }
}

export const ToolRuleSchema = z
  .string()
  .regex(PATTERN, 'a tool name or glob pattern: letters, digits, _ . - / and * ? [ ] { } , (at most 128)')
  .refine(compiles, 'not a valid glob pattern');

/** `!pattern` in `repeatable` says "never sent again", whatever the tool's annotations say. */
const RepeatRuleSchema = z
  .string()
  .regex(/^!?[A-Za-z0-9_.\-/*?[\]{},]{1,128}$/, 'a tool rule, or `!rule` for never')
  .refine((s) => compiles(s.replace(/^!/, '')), 'not a valid glob pattern');

export const HostingPolicySchema = z.strictObject({
  /** The hosted tools. Empty: nothing hosted (the policy is kept, inactive). */
  tools: z.array(ToolRuleSchema).max(100).default([]),
  /** A call still running after this long is answered with a task handle; `0` = always a task. */
  promoteAfterMs: z.number().int().min(0).max(600_000).default(2000),
  /**
   * Tools that may be sent again after an interruption. Tools annotated `readOnlyHint` or
   * `idempotentHint` count as repeatable unless a `!pattern` here names them.
   */
  repeatable: z.array(RepeatRuleSchema).max(100).default([]),
  /**
   * How long a hosted call may wait for the upstream's answer (ms): each progress notification starts it
   * again. Replaces the instance's and project's call deadlines, which are for calls a client waits on.
   */
  callDeadlineMs: z.number().int().min(1000).max(86_400_000).default(3_600_000),
  /** Hosted calls running against this upstream at once; more wait in arrival order. Absent: no limit. */
  maxConcurrent: z.number().int().min(1).max(10_000).optional(),
});
export type HostingPolicy = z.infer<typeof HostingPolicySchema>;
export type HostingPolicyInput = z.input<typeof HostingPolicySchema>;

const matchers = new Map<string, (name: string) => boolean>();

/** Whether a tool name matches a rule (a name or glob); compiled matchers are kept. */
export function matchesTool(pattern: string, tool: string): boolean {
  let m = matchers.get(pattern);
  if (!m) {
    m = picomatch(pattern, { strictBrackets: true });
    if (matchers.size > 10_000) matchers.clear();
    matchers.set(pattern, m);
  }
  return m(tool);
}

/** Whether calls of this upstream tool (its own name) are hosted by the gateway. */
export function isHosted(policy: HostingPolicy | undefined, tool: string): boolean {
  return !!policy && policy.tools.some((p) => matchesTool(p, tool));
}

export interface ToolHints {
  readOnlyHint?: boolean;
  idempotentHint?: boolean;
}

/** Whether a hosted call interrupted after it was sent may be sent again. */
export function mayRepeat(policy: HostingPolicy | undefined, tool: string, hints?: ToolHints): boolean {
  const rules = policy?.repeatable ?? [];
  if (rules.some((r) => r.startsWith('!') && matchesTool(r.slice(1), tool))) return false;
  if (rules.some((r) => !r.startsWith('!') && matchesTool(r, tool))) return true;
  return hints?.readOnlyHint === true || hints?.idempotentHint === true;
}

/** The rules (of `tools` and `repeatable`) that match none of the given tools: shown, not refused. */
export function unmatchedRules(policy: HostingPolicy, tools: readonly string[]): string[] {
  const rules = [...policy.tools, ...policy.repeatable.map((r) => r.replace(/^!/, ''))];
  return [...new Set(rules)].filter((r) => !tools.some((t) => matchesTool(r, t)));
}
