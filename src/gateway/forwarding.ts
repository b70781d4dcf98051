/**
 * The gateway's own I/O with upstreams on the ordinary path: the caller's credential per upstream
 * (looked up once per request), discovery and request forwarding, and the error a client hears when an
 * upstream cannot be reached.
 */
import type { ClientCapabilities, DiscoverResult } from '../protocol';
import type { ErrorKind } from '../protocol';
import { ERROR, META, MULTI_ROUND_TRIP_METHODS, ProtocolError, TASKS_EXTENSION } from '../protocol';
import type { ControlPlane, UpstreamRecord } from '../store/control-plane/types';
import type { AnswerPreparation } from '../upstream/answer-parse';
import type { UpstreamEndpoint } from '../upstream/client';
import type { DiscoveryCache } from '../upstream/discovery';
import {
  AnswerPreparationRefused,
  boundErrorOf,
  UpstreamAddressRefusedError,
  UpstreamTransportError,
} from '../upstream/errors';
import { upstreamMeta } from '../upstream/meta';
import type { McpCall, RequestContext, Result } from './context';
import { resolveEndpoint } from '../store/control-plane/endpoints';
import type { Resolve, ResolvedEndpoint } from './name-owners';
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
        endpoint = resolveEndpoint(
          this.controlPlane,
          call.principal,
          call.project,
          upstream,
          call.oauthToken && { accessToken: call.oauthToken.reveal() },
        );
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
  return (await forwardReply(ctx, endpoint, method, params, { ...(headers && { headers }) })).result;
}

/**
 * `forward`, saying whether `prepare` was applied to the result where it was parsed (a large answer, on
 * a worker thread): the caller then has nothing left to do to it.
 */
export async function forwardReply(
  ctx: RequestContext,
  endpoint: ResolvedEndpoint,
  method: string,
  params: Result,
  opts: { headers?: Record<string, string>; prepare?: AnswerPreparation },
): Promise<{ result: Result; prepared: boolean }> {
  const { headers, prepare } = opts;
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
        ...(call.notify && { onNotification: relayTo(call, call.notify) }),
        ...(headers && { headers }),
        ...(prepare && { prepare }),
      },
    );
  } catch (err) {
    throw upstreamUnavailable(endpoint, err);
  }
  if (reply.kind === 'error') throw fromUpstream(endpoint.alias, reply.error, meta[META.clientCapabilities]);
  return {
    result: checkedResultType(endpoint, method, reply.result),
    prepared: reply.prepared === true,
  };
}

/** The only methods an `InputRequiredResult` may answer (core "Multi Round-Trip Requests"). */

/**
 * Refuses a result the upstream may not give on this path: a task (the gateway never declared Tasks on
 * the ordinary path, and Tasks allows one only for `tools/call`), or `input_required` for a method that
 * cannot take a retry. Relayed, either would reach a client that cannot tell it from a real answer.
 * Other `resultType` values pass: they belong to an extension the client declared on this request.
 */
function checkedResultType(endpoint: UpstreamEndpoint, method: string, result: Result): Result {
  const type = result.resultType;
  if (type === 'task' || (type === 'input_required' && !MULTI_ROUND_TRIP_METHODS.has(method))) {
    throw new ProtocolError(
      'InternalError',
      `Upstream "${endpoint.alias}" answered ${method} with an unrequested ${type === 'task' ? 'task' : 'input request'}`,
    );
  }
  return result;
}

/**
 * Hands an upstream notification to the client's stream and answers the stream's room: the upstream
 * reader waits for it before reading on (back-pressure reaches the upstream).
 */
function relayTo(
  call: McpCall,
  notify: NonNullable<McpCall['notify']>,
): (message: Record<string, unknown>) => Promise<void> | void {
  return (message) => {
    notify(message);
    return call.whenWritable?.();
  };
}
/**
 * The client's error for an upstream that failed: its answer passed a bound (-31014, naming the bound),
 * did not complete in time (-31015, naming the deadline), was refused by the gateway's own processing
 * (e.g. -31005), or the upstream could not be reached or read (-31001). Never its URL or credential.
 */
export function upstreamUnavailable(endpoint: UpstreamEndpoint, err: unknown): ProtocolError {
  const bound = boundErrorOf(err);
  if (bound) return new ProtocolError(bound.kind, bound.message, bound.data);
  if (err instanceof AnswerPreparationRefused && isErrorKind(err.refusal.kind))
    return new ProtocolError(err.refusal.kind, err.refusal.message, err.refusal.data);
  if (err instanceof UpstreamAddressRefusedError) {
    return new ProtocolError('UpstreamAddressRefused', err.message, { upstream: endpoint.alias });
  }
  const detail = err instanceof UpstreamTransportError ? err.message : `Upstream "${endpoint.alias}" failed`;
  return new ProtocolError('UpstreamUnavailable', detail, { upstream: endpoint.alias });
}

function isErrorKind(kind: string): kind is ErrorKind {
  return Object.hasOwn(ERROR, kind);
}
