/**
 * A call that needs an upstream connection the caller lacks, from a client that declared URL-mode
 * elicitation (`elicitation.url`, MCP 2026-07-28): instead of the `-31009` error, an `input_required`
 * result whose one request is a URL-mode `elicitation/create` sending the user to the upstream's connect
 * page (docs/oauth.md). A 2025-11-25 client gets it on its stream through the legacy adapter.
 *
 * The client retries the call with its answer under CONNECT_INPUT_KEY, which the gateway takes out
 * before anything reaches the upstream: connected by then, the call goes ahead; declined or cancelled,
 * the error; accepted but still not connected, the same request again.
 */
import type { CallToolParams, ClientCapabilities } from '../../protocol';
import { META, ProtocolError } from '../../protocol';
import type { McpCall, Result } from '../context';

/** The gateway's own input request key (upstreams' keys are theirs; this one never reaches them). */
export const CONNECT_INPUT_KEY = 'taskrouter.connect';

/** The call without the gateway's own answer, and that answer (undefined when there is none). */
export function takeConnectAnswer(params: CallToolParams): { params: CallToolParams; answer?: unknown } {
  const responses = params.inputResponses;
  if (!responses || !(CONNECT_INPUT_KEY in responses)) return { params };
  const { [CONNECT_INPUT_KEY]: answer, ...rest } = responses;
  const { inputResponses: _ours, ...others } = params;
  return { params: Object.keys(rest).length > 0 ? { ...others, inputResponses: rest } : others, answer };
}

/** The `input_required` result asking the user to connect, or undefined when the error stands. */
export function connectInputRequired(call: McpCall, err: unknown, answer: unknown): Result | undefined {
  if (!(err instanceof ProtocolError) || err.kind !== 'UpstreamAuthorizationMissing') return undefined;
  const url = (err.data as { connectUrl?: unknown } | undefined)?.connectUrl;
  if (typeof url !== 'string') return undefined;
  const capabilities = call.params._meta[META.clientCapabilities] as ClientCapabilities | undefined;
  if (capabilities?.elicitation?.url === undefined) return undefined;
  if (answer !== undefined && (answer as { action?: unknown } | null)?.action !== 'accept') return undefined;
  return {
    resultType: 'input_required',
    inputRequests: {
      [CONNECT_INPUT_KEY]: {
        method: 'elicitation/create',
        params: { mode: 'url', message: err.message, url },
      },
    },
  };
}
