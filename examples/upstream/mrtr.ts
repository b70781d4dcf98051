/**
 * Synchronous input gathering (MRTR) for the example upstream: answers arrive on retries of the same
 * `tools/call`, each round carrying only its own `inputResponses`. Answers from earlier rounds travel in
 * `requestState`, which the client echoes; since it is attacker-controlled it is HMAC-signed, bound to
 * the tool name and given an expiry.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { InputRequests, InputRequiredResult, InputResponses } from '../../src/protocol';
import { InputResponsesSchema, ProtocolError } from '../../src/protocol';

const STATE_TTL_MS = 10 * 60 * 1000;

const StatePayloadSchema = z.strictObject({
  tool: z.string(),
  exp: z.int(),
  answers: InputResponsesSchema,
});
type StatePayload = z.infer<typeof StatePayloadSchema>;

/** What the collector needs of a `tools/call` or `prompts/get` request: a name binding the state, and this round. */
export interface InputRound {
  /** Binds `requestState` to one tool or prompt, e.g. `tool:confirm_delete` or `prompt:x`. */
  name: string;
  inputResponses?: InputResponses | undefined;
  requestState?: string | undefined;
}

export type CollectOutcome =
  { done: true; answers: InputResponses } | { done: false; result: InputRequiredResult };

export class InputCollector {
  /** Per-process key: a restarted server rejects old state, which the client resolves by starting over. */
  private readonly key = randomBytes(32);

  /**
   * Returns the answers once every key of `requests` has one (from this round or earlier ones);
   * otherwise an InputRequiredResult asking only for the keys still missing.
   */
  collect(params: InputRound, requests: InputRequests, now = Date.now()): CollectOutcome {
    return this.collectStages(params, [requests], now);
  }

  /**
   * Multi-round form of `collect`: stage N+1 is asked only once every key of stages 1..N has an answer,
   * each round in a new InputRequiredResult with a new `requestState` carrying the answers so far.
   */
  collectStages(params: InputRound, stages: readonly InputRequests[], now = Date.now()): CollectOutcome {
    const answers: InputResponses = { ...this.readState(params, now) };
    const all: InputRequests = Object.assign({}, ...stages) as InputRequests;
    for (const [key, response] of Object.entries(params.inputResponses ?? {})) {
      const request = all[key];
      if (request !== undefined && isAnswerTo(request.method, response)) answers[key] = response;
    }
    for (const stage of stages) {
      const missing = Object.entries(stage).filter(([key]) => !(key in answers));
      if (missing.length === 0) continue;
      return {
        done: false,
        result: {
          resultType: 'input_required',
          inputRequests: Object.fromEntries(missing),
          requestState: this.sign({ tool: params.name, exp: now + STATE_TTL_MS, answers }),
        },
      };
    }
    return { done: true, answers };
  }

  private readState(params: InputRound, now: number): InputResponses {
    if (params.requestState === undefined) return {};
    const payload = this.verify(params.requestState);
    if (!payload || payload.tool !== params.name || payload.exp < now) {
      throw new ProtocolError('InvalidParams', 'Invalid or expired requestState');
    }
    return payload.answers;
  }

  private sign(payload: StatePayload): string {
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  private verify(state: string): StatePayload | undefined {
    const [body, mac] = state.split('.');
    if (body === undefined || mac === undefined) return undefined;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const parsed = StatePayloadSchema.safeParse(
        JSON.parse(Buffer.from(body, 'base64url').toString('utf8')),
      );
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

/** Whether a response has the shape of the result of `method` (unrelated or malformed answers are ignored). */
function isAnswerTo(method: string, response: Record<string, unknown>): boolean {
  switch (method) {
    case 'elicitation/create':
      return typeof response.action === 'string';
    case 'sampling/createMessage':
      return (
        typeof response.role === 'string' && typeof response.content === 'object' && response.content !== null
      );
    case 'roots/list':
      return Array.isArray(response.roots);
    default:
      return true;
  }
}
