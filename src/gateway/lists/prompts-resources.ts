/**
 * Requests about one prompt or resource: `prompts/get`, `resources/read` and `completion/complete`,
 * each forwarded to the upstream that owns the name or URI.
 */
import type { z } from 'zod';
import { CompleteParamsSchema, GetPromptParamsSchema, ProtocolError, RelayedError } from '../../protocol';
import type { RequestContext, Result } from '../context';
import { forward } from '../forwarding';
import { withGatewayMeta } from '../responses/responses';
import type { UpstreamRecord } from '../../store/control-plane/types';
import type { ResolvedEndpoint } from '../name-owners';
import { enabledUpstreams } from '../name-owners';
import { exposedReadResult, isUiUri, splitUiUri } from './ui-resources';

export async function getPrompt(ctx: RequestContext): Promise<Result> {
  const { call } = ctx;
  const { name } = checked(GetPromptParamsSchema, call.params, 'prompts/get');
  const routed = await ctx.owners.prompt(call.project, name, ctx.resolve);
  const result = await forward(ctx, routed.endpoint, 'prompts/get', { ...call.params, name: routed.name });
  return withGatewayMeta(result, ctx.deps.serverInfo);
}

export async function readResource(ctx: RequestContext): Promise<Result> {
  const { call } = ctx;
  const uri = call.params.uri;
  if (typeof uri !== 'string') throw new ProtocolError('InvalidParams', 'params.uri must be a string');
  const view = await viewOwner(ctx, uri);
  if (view) {
    const result = await forward(ctx, view.endpoint, 'resources/read', { ...call.params, uri: view.uri });
    return withGatewayMeta(privately(exposedReadResult(view.alias, result)), ctx.deps.serverInfo);
  }
  const { result, endpoint } = await firstOwnerReply(ctx, 'resources/read', call.params);
  // An MCP Apps view, or anything read with one user's own credential, is that caller's: a cache between
  // the client and the gateway must not hand it to another caller (the gateway itself caches no read).
  const mine = isUiUri(uri) || endpoint.authorizationId !== null;
  return withGatewayMeta(mine ? privately(result) : result, ctx.deps.serverInfo);
}

export async function complete(ctx: RequestContext): Promise<Result> {
  const { call } = ctx;
  const { ref } = checked(CompleteParamsSchema, call.params, 'completion/complete');
  if (ref.type === 'ref/prompt') {
    const routed = await ctx.owners.prompt(call.project, ref.name, ctx.resolve);
    const params = { ...call.params, ref: { ...ref, name: routed.name } };
    return withGatewayMeta(await forward(ctx, routed.endpoint, call.method, params), ctx.deps.serverInfo);
  }
  const view = await viewOwner(ctx, ref.uri);
  if (view) {
    const params = { ...call.params, ref: { ...ref, uri: view.uri } };
    return withGatewayMeta(await forward(ctx, view.endpoint, call.method, params), ctx.deps.serverInfo);
  }
  return withGatewayMeta(await firstOwner(ctx, call.method, call.params), ctx.deps.serverInfo);
}

/**
 * With namespacing on, an MCP Apps view's URI names its upstream (`ui://{alias}/…`, ui-resources.ts):
 * that upstream and its own URI. A `ui://` URI naming no enabled upstream is not found, like any
 * unknown resource. Undefined for every other URI (and with namespacing off): those go to the first owner.
 */
async function viewOwner(
  ctx: RequestContext,
  uri: string,
): Promise<{ alias: string; uri: string; endpoint: ResolvedEndpoint } | undefined> {
  if (!ctx.call.project.namespacing || !isUiUri(uri)) return undefined;
  const parts = splitUiUri(uri);
  const upstream = parts && enabledUpstreams(ctx.call.project).find((u) => u.alias === parts.alias);
  if (!parts || !upstream) throw new ProtocolError('InvalidParams', 'Resource not found');
  return { alias: parts.alias, uri: parts.uri, endpoint: await ctx.resolve(upstream) };
}

/** Cacheable by this caller only; an answer without a `ttlMs` (a 2025-era upstream's) is not cached. */
function privately(result: Result): Result {
  return { ...result, ttlMs: typeof result.ttlMs === 'number' ? result.ttlMs : 0, cacheScope: 'private' };
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
