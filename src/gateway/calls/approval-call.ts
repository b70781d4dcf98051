/**
 * A tools/call the project's approval policy names (issue 27, docs/approvals.md): it becomes the gateway's
 * own task at once, waiting durably for approval before anything reaches the upstream, then runs as a
 * hosted call (hosted-call.ts). The request is bound to the caller, the upstream, the tool, the SHA-256 of
 * the canonical arguments and the policy version; the arguments stay in the payload store (encrypted),
 * and an approval never waits longer than they are kept (`retention.payloadTtlMs`).
 */
import type { VersionedApprovalPolicy } from '../../config/approvals';
import { needsApproval } from '../../config/approvals';
import { HostingPolicySchema } from '../../config/hosting';
import { ProtocolError } from '../../protocol';
import { newId } from '../../store/control-plane';
import { approverRuleOf } from '../../store/control-plane/approval-policies';
import type { ApprovalGate } from '../../workflows/messages';
import type { GatewayDeps, RequestContext, Result } from '../context';
import type { Hosting } from './hosted-call';
import { callHosted, taskSupportOf } from './hosted-call';
import { canonicalJson } from '../responses/result-cache';
import type { RoutedTool } from '../name-owners';
import type { RoutedCall } from './routed-call';

/** The project's policy, when it names this call. */
export function approvalOf(ctx: RequestContext, routed: RoutedTool): VersionedApprovalPolicy | undefined {
  const approvals = ctx.call.project.approvals;
  if (!approvals) return undefined;
  const named = needsApproval(approvals.policy, routed.endpoint.alias, routed.name, routed.tool?.annotations);
  return named ? approvals : undefined;
}

export async function callWithApproval(
  ctx: RequestContext,
  toolCall: RoutedCall,
  approvals: VersionedApprovalPolicy,
  hosting: Hosting | undefined,
): Promise<Result> {
  const { params, routed } = toolCall;
  const { call, deps } = ctx;
  // An approved call is made as an ordinary call the gateway holds: a tool the upstream runs only as its
  // own task cannot be made so, and is refused before anyone is asked to approve it (docs/approvals.md).
  if (taskSupportOf(routed) === 'required') {
    throw new ProtocolError(
      'InvalidParams',
      `Tool "${params.name}" needs approval under this project's policy, but upstream "${routed.endpoint.alias}" runs it only as its own task, which cannot wait for approval; nothing was sent`,
    );
  }
  const upstream = call.project.upstreams.find((u) => u.alias === routed.endpoint.alias);
  const { policy, version } = approvals;
  const waitMs = Math.min(policy.expiresAfterMs, deps.approvalWaitLimitMs ?? policy.expiresAfterMs);
  const gate: ApprovalGate = {
    id: newId('apr'),
    argsSha256: argumentsDigest(deps, params.arguments),
    policyVersion: version,
    expiresAt: new Date(Date.now() + waitMs).toISOString(),
    rule: approverRuleOf(policy),
  };
  // An approved call runs like a hosted one: under the upstream's hosting policy when it has one.
  const run: Hosting = hosting ?? {
    policy: HostingPolicySchema.parse({ tools: [] }),
    upstreamId: upstream?.id ?? '',
  };
  return callHosted(ctx, toolCall, run, gate);
}

/**
 * The digest of the arguments in canonical JSON (keys sorted) that an approval request shows and its
 * audit event keeps: keyed (HMAC-SHA-256 under a key derived from the gateway's encryption key), so
 * readers can compare two requests' arguments, but the trail kept for 90 days cannot be tested against
 * guesses of arguments whose payload is gone after 24 h.
 */
export function argumentsDigest(deps: Pick<GatewayDeps, 'digest'>, args: unknown): string {
  return deps.digest('approval arguments', canonicalJson(args ?? {}));
}
