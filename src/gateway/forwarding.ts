/**
 * The gateway's own I/O with upstreams on the ordinary path: the caller's credential per upstream
 * (looked up once per request), discovery and request forwarding, and the error a client hears when an
 * upstream cannot be reached.
 */
import type { ClientCapabilities, DiscoverResult } from '../protocol';
import { META, ProtocolError, TASKS_EXTENSION } from '../protocol';
import type { ControlPlane, UpstreamRecord } from '../store/control-plane/types';
import type { UpstreamEndpoint } from '../upstream/client';
import type { DiscoveryCache } from '../upstream/discovery';
import { UpstreamTransportError } from '../upstream/errors';
import { upstreamMeta } from '../upstream/meta';
import type { McpCall, RequestContext, Result } from './context';
import { resolveEndpoint } from './credentials';
import type { Resolve, ResolvedEndpoint } from './routing';
import { fromUpstream } from './upstream-errors';

/** Hands out each request's credential resolver; the memo lives as long as the request object. */
export class CallResolvers {
  private readonly resolved = new WeakMap<McpCall, Map<string, Promise<ResolvedEndpoint>>>();

  constructor(private readonly controlPlane: ControlPlane) {}

  /** The caller's credential for each upstream, looked up once per request. */
  of(call: McpCall): Resolve {
    let memo = this.resolved.get(call);
    if (!memo) {
      memo = new Map();
      this.resolved.set(call, memo);
    }
    const cache = memo;
    return (upstream: UpstreamRecord) => {
      let endpoint = cache.get(upstream.id);
      if (!endpoint) {
        endpoint = resolveEndpoint(this.controlPlane, call.principal, call.project, upstream);
        cache.set(upstream.id, endpoint);
      }
      return endpoint;
    };
  }
}

export async function discoverUpstream(
  discovery: DiscoveryCache,
  endpoint: UpstreamEndpoint,
): Promise<DiscoverResult> {
  try {
    return await discovery.get(endpoint);
  } catch (err) {
    throw upstreamUnavailable(endpoint, err);
  }
}

/**
 * Ordinary path: relays the request with the client's capabilities minus Tasks (the gateway never
 * lets an upstream hand a task past it), relays notifications on the client's stream, and aborts when
 * the client goes away.
 */
export async function forward(
  ctx: RequestContext,
  endpoint: ResolvedEndpoint,
  method: string,
  params: Result,
  headers?: Record<string, string>,
): Promise<Result> {
  const { call, deps } = ctx;
  const meta = call.params._meta;
  const { extensions, ...rest }: ClientCapabilities = meta[META.clientCapabilities];
  const { [TASKS_EXTENSION]: _tasks, ...otherExtensions } = extensions ?? {};
  const capabilities =
    Object.keys(otherExtensions).length > 0 ? { ...rest, extensions: otherExtensions } : rest;
  let reply;
  try {
    reply = await deps.upstream.send(
      endpoint,
      method,
      {
        ...params,
        _meta: upstreamMeta({
          relayedMeta: meta,
          protocolVersion: meta[META.protocolVersion],
          capabilities,
          gatewayInfo: deps.serverInfo,
        }),
      },
      {
        ...(call.signal && { signal: call.signal }),
        ...(call.notify && { onNotification: call.notify }),
        ...(headers && { headers }),
      },
    );
  } catch (err) {
    throw upstreamUnavailable(endpoint, err);
  }
  if (reply.kind === 'error') throw fromUpstream(endpoint.alias, reply.error, meta[META.clientCapabilities]);
  return reply.result;
}

function upstreamUnavailable(endpoint: UpstreamEndpoint, err: unknown): ProtocolError {
  const detail = err instanceof UpstreamTransportError ? err.message : `Upstream "${endpoint.alias}" failed`;
  return new ProtocolError('UpstreamUnavailable', detail, { upstream: endpoint.alias });
}
