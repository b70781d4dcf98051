/**
 * Requests about one prompt or resource: `prompts/get`, `resources/read` and `completion/complete`,
 * each forwarded to the upstream that owns the name or URI.
 */
import type { z } from 'zod';
import { CompleteParamsSchema, GetPromptParamsSchema, ProtocolError, RelayedError } from '../protocol';
import type { RequestContext, Result } from './context';
import { forward } from './forwarding';
import { withGatewayMeta } from './responses';
import type { UpstreamRecord } from '../store/control-plane/types';
import type { ResolvedEndpoint } from './routing';
import { enabledUpstreams } from './routing';

export async function getPrompt(ctx: RequestContext): Promise<Result> {
  const { call } = ctx;
  const { name } = checked(GetPromptParamsSchema, call.params, 'prompts/get');
  const routed = await ctx.router.prompt(call.project, name, ctx.resolve);
  const result = await forward(ctx, routed.endpoint, 'prompts/get', { ...call.params, name: routed.name });
  return withGatewayMeta(result, ctx.deps.serverInfo);
}

export async function readResource(ctx: RequestContext): Promise<Result> {
  const { call } = ctx;
  if (typeof call.params.uri !== 'string')
    throw new ProtocolError('InvalidParams', 'params.uri must be a string');
  return withGatewayMeta(await firstOwner(ctx, 'resources/read', call.params), ctx.deps.serverInfo);
}

export async function complete(ctx: RequestContext): Promise<Result> {
  const { call } = ctx;
  const { ref } = checked(CompleteParamsSchema, call.params, 'completion/complete');
  if (ref.type === 'ref/prompt') {
    const routed = await ctx.router.prompt(call.project, ref.name, ctx.resolve);
    const params = { ...call.params, ref: { ...ref, name: routed.name } };
    return withGatewayMeta(await forward(ctx, routed.endpoint, call.method, params), ctx.deps.serverInfo);
  }
  return withGatewayMeta(await firstOwner(ctx, call.method, call.params), ctx.deps.serverInfo);
}

/** The params as the method's schema types them, or -32602 naming the first field that is not. */
function checked<S extends z.ZodType>(schema: S, params: unknown, method: string): z.infer<S> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? `params.${issue.path.join('.')}` : 'params';
  throw new ProtocolError(
    'InvalidParams',
    `Invalid ${method} params: ${where} (${issue?.message ?? 'invalid'})`,
  );
}

/**
 * Resources keep their URIs (they are not renamed), so the owner is the first upstream that does not
 * answer "not found" (-32602).
 */
async function firstOwner(ctx: RequestContext, method: string, params: Result): Promise<Result> {
  return (await firstOwnerReply(ctx, method, params)).result;
}

/**
 * The first upstream, in the project's order, that answers `method` for the URI, with its answer: the
 * one mapping from a client's URI to an upstream, shared by `resources/read` and resource subscriptions
 * (resource-push.ts). Throws the last "not found" when no upstream owns it.
 */
export async function firstOwnerReply(
  ctx: RequestContext,
  method: string,
  params: Result,
): Promise<{ result: Result; upstream: UpstreamRecord; endpoint: ResolvedEndpoint }> {
  let lastError: unknown = new ProtocolError('InvalidParams', 'Resource not found');
  const resolve = ctx.resolve;
  for (const upstream of enabledUpstreams(ctx.call.project)) {
    try {
      const endpoint = await resolve(upstream);
      return { result: await forward(ctx, endpoint, method, params), upstream, endpoint };
    } catch (err) {
      const notHere = err instanceof RelayedError && err.code === -32602;
      const noCredential = err instanceof ProtocolError && err.kind === 'UpstreamAuthorizationMissing';
      if (!notHere && !noCredential) throw err;
      lastError = err;
    }
  }
  throw lastError;
}
