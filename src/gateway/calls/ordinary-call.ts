/**
 * A tools/call on the ordinary path: the result cache (lookup, hit marker, store), forwarding to the
 * upstream, and the response processing every non-task tools/call result gets (gateway meta, limits).
 */
import { METHOD } from '../../protocol';
import { resultCache } from '../../telemetry/metrics';
import { principalId } from '../../store/control-plane/types';
import type { RequestContext, Result } from '../context';
import { processToolResult, toolResultPreparation } from '../responses/answer-preparation';
import { forwardReply } from '../forwarding';
import { cacheKey, isCacheableCall, isCacheableResult } from '../responses/result-cache';
import type { RoutedCall } from './routed-call';

/** Gateway-owned `_meta` key telling the client a result came from the result cache. */
export const CACHE_META_KEY = 'com.taskrouter/cache';

export async function ordinaryCall(
  ctx: RequestContext,
  toolCall: RoutedCall,
  isRetry: boolean,
): Promise<Result> {
  const { params, routed, headers } = toolCall;
  const { call, deps } = ctx;
  const project = call.project;
  const cacheable = isCacheableCall({
    cache: project.cache,
    exposedName: params.name,
    ...(routed.tool?.annotations && { annotations: routed.tool.annotations }),
    isMrtrRetry: isRetry,
  });
  const key = cacheable
    ? cacheKey({
        project: project.slug,
        upstream: routed.endpoint.alias,
        tool: routed.name,
        arguments: params.arguments ?? {},
        caller: principalId(call.principal),
      })
    : undefined;
  const hit = key !== undefined ? deps.cache.get(project.slug, key) : undefined;
  if (key !== undefined) resultCache.inc({ project: project.slug, result: hit ? 'hit' : 'miss' });
  if (hit)
    return finishToolResult(ctx, { ...hit, _meta: { ...(hit._meta as Result), [CACHE_META_KEY]: 'hit' } });

  // A large answer is cut to the project's limit where it is parsed (a worker thread): the event loop
  // then only holds what the client receives (docs/response-processing.md, "Large answers").
  const { result, prepared } = await forwardReply(
    ctx,
    routed.endpoint,
    METHOD.toolsCall,
    { ...call.params, name: routed.name },
    { headers, prepare: toolResultPreparation(project.limits, deps.serverInfo) },
  );
  if (key !== undefined && isCacheableResult(result))
    deps.cache.set(project.slug, key, result, project.cache);
  return prepared ? result : finishToolResult(ctx, result);
}

/**
 * Response processing for a non-task tools/call result: the gateway's meta first, so the limit
 * measures exactly what the client receives.
 */
export function finishToolResult(ctx: RequestContext, result: Result): Result {
  return processToolResult(result, ctx.call.project.limits, ctx.deps.serverInfo);
}
