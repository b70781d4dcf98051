/**
 * `tools/call`: routes the exposed name to its upstream, checks the client's `Mcp-Param-*` headers, and
 * decides per request between the durable task path and the ordinary path. A missing upstream connection
 * becomes a URL-mode elicitation for clients that take one (connect-elicitation.ts).
 */
import type { CallToolParams } from '../../protocol';
import {
  ERROR,
  META,
  paramHeaderMismatch,
  paramHeadersOf,
  paramHeaderValues,
  ProtocolError,
  RelayedError,
  TASKS_EXTENSION,
} from '../../protocol';
import { approvalOf, callWithApproval } from './approval-call';
import { connectInputRequired, takeConnectAnswer } from './connect-elicitation';
import type { McpCall, RequestContext, Result } from '../context';
import { discoverUpstream } from '../forwarding';
import { callHosted, hostingOf } from './hosted-call';
import { ordinaryCall } from './ordinary-call';
import { runTaskInline } from './inline-task';
import { declaresTasks, qualifyForTaskPath, upstreamRunsTasks } from './qualification';
import type { RoutedTool } from '../name-owners';
import { startTask } from './task-call';
import type { RoutedCall } from './routed-call';

export async function callTool(ctx: RequestContext, asked: CallToolParams): Promise<Result> {
  const { call, deps } = ctx;
  // The answer to the gateway's own "connect this upstream" request never goes upstream.
  const { params, answer } = takeConnectAnswer(asked);
  let routed: RoutedTool;
  try {
    routed = await ctx.owners.tool(call.project, params.name, ctx.resolve);
  } catch (err) {
    const ask = connectInputRequired(call, err, answer);
    if (ask) return ask;
    throw err;
  }
  const toolCall: RoutedCall = { params, routed, headers: paramHeaders(call, routed, params) };
  const capabilities = call.params._meta[META.clientCapabilities];
  const isRetry = params.inputResponses !== undefined || params.requestState !== undefined;
  // Named by the approval policy: waits for sign-off, retries included (each is a new call upstream).
  const approval = approvalOf(ctx, routed);
  if (approval) return callWithApproval(ctx, toolCall, approval, await hostingOf(ctx, routed));
  const hosting = isRetry ? undefined : await hostingOf(ctx, routed);
  if (hosting) return callHosted(ctx, toolCall, hosting);
  // MRTR retries of a task-aware call stay on the task path: the last round may become a task.
  if (declaresTasks(capabilities)) {
    const decision = qualifyForTaskPath({
      clientCapabilities: capabilities,
      protocolVersion: call.params._meta[META.protocolVersion],
      projectTasksEnabled: call.project.features.tasks,
      profileSupportsTasks: call.project.toolProfile === 'tasks',
      upstreamDiscover: await discoverUpstream(deps.discovery, routed.endpoint),
    });
    if (decision.taskPath) return startTask(ctx, toolCall);
    deps.logger.debug({ project: call.project.slug, reason: decision.reason }, 'ordinary path');
    return ordinaryCall(ctx, toolCall, isRetry);
  }
  try {
    return await ordinaryCall(ctx, toolCall, isRetry);
  } catch (err) {
    // The upstream runs this tool only as a task, and the client cannot take one: the gateway takes it.
    // The upstream refused before doing anything (-32021), so the call is not repeated.
    if (!requiresTasks(err) || !(await projectRunsTasks(ctx, routed))) throw err;
    return runTaskInline(ctx, toolCall);
  }
}

function requiresTasks(err: unknown): boolean {
  if (!(err instanceof RelayedError) || err.code !== ERROR.MissingRequiredClientCapability.code) return false;
  const required = (
    err.data as { requiredCapabilities?: { extensions?: Record<string, unknown> } } | undefined
  )?.requiredCapabilities;
  return required?.extensions?.[TASKS_EXTENSION] !== undefined;
}

async function projectRunsTasks(ctx: RequestContext, routed: RoutedTool): Promise<boolean> {
  const { project } = ctx.call;
  if (!project.features.tasks || project.toolProfile !== 'tasks') return false;
  return upstreamRunsTasks(await discoverUpstream(ctx.deps.discovery, routed.endpoint));
}

/** Validates the client's `Mcp-Param-*` headers and derives the upstream's from its own schema. */
function paramHeaders(call: McpCall, routed: RoutedTool, params: CallToolParams): Record<string, string> {
  const declared = routed.tool ? paramHeadersOf(routed.tool.inputSchema) : undefined;
  if (!declared || declared.length === 0) return {};
  // Eras without these headers (2025 clients, through their adapter) pass no header reader: nothing to check.
  const mismatch = call.header && paramHeaderMismatch(declared, params.arguments, call.header);
  if (mismatch) throw new ProtocolError('HeaderMismatch', mismatch);
  return paramHeaderValues(declared, params.arguments);
}
