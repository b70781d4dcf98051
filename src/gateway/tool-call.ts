/**
 * `tools/call`: routes the exposed name to its upstream, checks the client's `Mcp-Param-*` headers, and
 * decides per request between the durable task path and the ordinary path.
 */
import type { CallToolParams } from '../protocol';
import { META, paramHeaderMismatch, paramHeadersOf, paramHeaderValues, ProtocolError } from '../protocol';
import type { McpCall, RequestContext, Result } from './context';
import { discoverUpstream } from './forwarding';
import { ordinaryCall } from './ordinary-call';
import { declaresTasks, qualifyForTaskPath } from './qualification';
import type { RoutedTool } from './routing';
import { startTask } from './task-call';

export async function callTool(ctx: RequestContext, params: CallToolParams): Promise<Result> {
  const { call, deps } = ctx;
  const routed = await ctx.router.tool(call.project, params.name, ctx.resolve);
  const headers = paramHeaders(call, routed, params);
  const capabilities = call.params._meta[META.clientCapabilities];
  const isRetry = params.inputResponses !== undefined || params.requestState !== undefined;
  // MRTR retries of a task-aware call stay on the task path: the last round may become a task.
  if (declaresTasks(capabilities)) {
    const decision = qualifyForTaskPath({
      clientCapabilities: capabilities,
      protocolVersion: call.params._meta[META.protocolVersion],
      projectTasksEnabled: call.project.features.tasks,
      profileSupportsTasks: call.project.toolProfile === 'tasks',
      upstreamDiscover: await discoverUpstream(deps.discovery, routed.endpoint),
    });
    if (decision.taskPath) return startTask(ctx, params, routed, headers);
    deps.logger.debug({ project: call.project.slug, reason: decision.reason }, 'ordinary path');
  }
  return ordinaryCall(ctx, params, routed, headers, isRetry);
}

/** Validates the client's `Mcp-Param-*` headers and derives the upstream's from its own schema. */
function paramHeaders(call: McpCall, routed: RoutedTool, params: CallToolParams): Record<string, string> {
  const declared = routed.tool ? paramHeadersOf(routed.tool.inputSchema) : undefined;
  if (!declared || declared.length === 0) return {};
  const mismatch = paramHeaderMismatch(declared, params.arguments, (n) => call.header?.(n));
  if (mismatch) throw new ProtocolError('HeaderMismatch', mismatch);
  return paramHeaderValues(declared, params.arguments);
}
