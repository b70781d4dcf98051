/** What the gateway hands the upstream client: where an upstream is, with which credential, and the reply. */
import type { InputRequests, JsonRpcErrorObject } from '../protocol';
import type { AnswerPreparation } from './answer-parse';
import type { DeadlineName } from './errors';

/** Defined with the protocol, where the store, which makes them (with a credential), sees it too. */
export type { UpstreamEndpoint } from '../protocol';

export type UpstreamReply =
  /** `prepared`: the request's `prepare` was applied to the result where it was parsed (a worker thread). */
  | { kind: 'result'; result: Record<string, unknown>; prepared?: boolean }
  | { kind: 'error'; error: JsonRpcErrorObject; httpStatus: number };

/** Where an answer on a 2025-era session can be taken up again: the session, the request, the last event. */
export interface ResumePoint {
  sessionId: string;
  /** The session's variant (which capabilities its `initialize` declared). */
  variant: string;
  requestId: string;
  eventId: string;
}

export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  /**
   * This request's own deadline (ms, restarted by each progress notification), in place of the instance's
   * and project's call deadlines; the answer may also stay silent that long. A hosted call's
   * (`hosting.callDeadlineMs`): nobody waits on it in a request.
   */
  deadline?: { ms: number; limit: DeadlineName };
  /** Extra request headers for this call (e.g. `Mcp-Param-*` derived from the upstream's schema). */
  headers?: Record<string, string>;
  /**
   * W3C trace headers (`traceparent`, `tracestate`, `baggage`) for this call, sent whatever the era
   * speaks; set by the client itself from the request's `_meta` (telemetry/mcp-spans.ts).
   */
  traceHeaders?: Record<string, string>;
  /**
   * Each point a 2025-era session request's answer could be taken up from (`UpstreamClient.resume`), by
   * a process that did not send it, if the upstream keeps its streams (an event store).
   */
  onResumePoint?: (point: ResumePoint) => void;
  /**
   * A request a 2025-era upstream sends on this request's own stream (`elicitation/create` only): the
   * answer to send back (a result, or an error), or undefined to refuse it as on any other call. Only a
   * caller that stays with the stream can answer (a hosted call's activity); others leave it unset.
   */
  onServerRequest?: (request: {
    method: string;
    params?: Record<string, unknown>;
  }) => Promise<{ result: Record<string, unknown> } | { error: JsonRpcErrorObject } | undefined>;
  /**
   * Called for notifications (e.g. progress) that arrive on the request's SSE stream. When it answers a
   * promise, the stream is not read on until it settles: the client's back-pressure reaches the upstream.
   */
  onNotification?: (message: Record<string, unknown>) => void | Promise<void>;
  /**
   * For `tasks/get` of a task whose last observation asked for input: the requests the client has not
   * answered yet (with their content) and the keys it has answered. A 2025-era upstream sends its input
   * request only once, so the gateway keeps it (src/upstream/eras/2025-11-25/tasks.ts); 2026 upstreams ignore it.
   */
  taskInput?: { open: InputRequests; answered: string[] };
  /**
   * What to do to the result where a large answer is parsed (a worker thread), so it never reaches the
   * event loop whole: the gateway's response processing of a `tools/call` result. Small answers are
   * returned as they are (`prepared` absent) and processed by the caller.
   */
  prepare?: AnswerPreparation;
}
