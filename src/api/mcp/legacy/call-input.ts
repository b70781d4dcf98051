/**
 * Multi-round-trip requests (MRTR) for 2025-era clients. A 2026 upstream that needs input during an
 * ordinary call answers `input_required` with its requests; a 2025 client knows no such result: it
 * answers server requests that arrive on the call's SSE stream, with a new POST. So the gateway sends
 * each request on this call's stream, with an id sealed around an answer slot (./input-ids.ts); the
 * answers, POSTed to any replica, are parked in the store; this replica collects them and retries the
 * call with them (`inputResponses`, plus the upstream's `requestState`), round after round.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InputRequests } from '../../../protocol';
import { InputRequestsSchema, ProtocolError } from '../../../protocol';
import type { McpClientAnswerStore } from '../../../store/sessions/mcp-sessions';
import type { ResponseStream } from '../response-stream';
import type { InputRequestIds } from './input-ids';
import type { LegacySession } from './session';

type Result = Record<string, unknown>;

/** What one answer slot holds: the client's result, or the error it answered with. */
export type ParkedAnswer = { result: unknown } | { error: unknown };

/** Rounds of input one call may ask for before the gateway calls it a loop. */
const MAX_ROUNDS = 16;
/** How long a call waits for the client's answers to one round. */
const ANSWER_WAIT_MS = 10 * 60_000;
const CHECK_EVERY_MS = 100;

export interface CallInputContext {
  session: LegacySession;
  stream: ResponseStream;
  signal: AbortSignal;
}

export class CallInputBridge {
  constructor(
    private readonly ids: InputRequestIds,
    private readonly answers: McpClientAnswerStore,
  ) {}

  /** Sends the call, and while the answer is `input_required`, relays the requests and retries. */
  async run(c: CallInputContext, params: Result, send: (params: Result) => Promise<Result>): Promise<Result> {
    let current = params;
    for (let round = 1; ; round++) {
      const result = await send(current);
      if (result.resultType !== 'input_required') return result;
      if (round > MAX_ROUNDS) {
        throw new ProtocolError('InternalError', `The call asked for input more than ${MAX_ROUNDS} times`);
      }
      const requests = InputRequestsSchema.safeParse(result.inputRequests);
      if (!requests.success)
        throw new ProtocolError('InternalError', 'The upstream asked for input in a malformed way');
      const inputResponses = await this.ask(c, requests.data);
      const { inputResponses: _previous, requestState: _state, ...rest } = params;
      current = {
        ...rest,
        inputResponses,
        ...(typeof result.requestState === 'string' && { requestState: result.requestState }),
      };
    }
  }

  /** One round: every request on the stream, then the answers as they arrive (from any replica). */
  private async ask(c: CallInputContext, requests: InputRequests): Promise<Record<string, unknown>> {
    if (!c.stream.canStream) {
      throw new ProtocolError(
        'InvalidRequest',
        'The tool needs input: call it accepting text/event-stream to receive the requests',
      );
    }
    const slots = new Map<string, string>();
    for (const [key, request] of Object.entries(requests)) {
      const slot = randomBytes(12).toString('base64url');
      slots.set(slot, key);
      c.stream.notify({
        jsonrpc: '2.0',
        id: this.ids.idFor(c.session, { kind: 'call', slot }),
        method: request.method,
        params: eraParams(c.session, request.method, request.params ?? {}),
      });
    }
    const collected = await this.collect(c, [...slots.keys()]);
    const responses: Record<string, unknown> = {};
    for (const [slot, answer] of collected) {
      const key = slots.get(slot) as string;
      if ('result' in answer) responses[key] = answer.result;
      else if (requests[key]?.method === 'elicitation/create') responses[key] = { action: 'cancel' };
      else
        throw new ProtocolError('InternalError', `The client refused the ${requests[key]?.method} request`);
    }
    return responses;
  }

  private async collect(c: CallInputContext, slots: string[]): Promise<Map<string, ParkedAnswer>> {
    const found = new Map<string, ParkedAnswer>();
    const deadline = Date.now() + ANSWER_WAIT_MS;
    while (found.size < slots.length) {
      const missing = slots.filter((s) => !found.has(s));
      for (const [slot, answer] of await this.answers.take(missing)) found.set(slot, answer as ParkedAnswer);
      if (found.size === slots.length) break;
      if (c.signal.aborted) throw new ProtocolError('InternalError', 'The client went away');
      if (Date.now() >= deadline)
        throw new ProtocolError('InternalError', 'The client did not answer in time');
      await sleep(CHECK_EVERY_MS, undefined, { signal: c.signal }).catch(() => {});
    }
    await this.answers.purgeStale();
    return found;
  }
}

/** Elicitation modes exist from 2025-11-25 on; earlier eras know form elicitation only. */
function eraParams(session: LegacySession, method: string, params: Record<string, unknown>): Result {
  if (method !== 'elicitation/create') return params;
  if (session.version === '2025-11-25') {
    // 2025-11-25 URL mode names each elicitation (2026 dropped the id with its completion notification).
    return params['mode'] === 'url' && params['elicitationId'] === undefined
      ? { ...params, elicitationId: randomBytes(12).toString('base64url') }
      : params;
  }
  const { mode: _mode, ...rest } = params;
  return rest;
}
