/**
 * Reading upstream answers within bounds. A JSON body is refused by its `content-length` before a byte
 * is read, else counted while it is read and destroyed the moment it passes `maxBytes` (the connection
 * is closed, so the upstream notices it is no longer read). Parsing is answer-parse.ts: on the event
 * loop for small answers, on a worker thread (answer-threads.ts) above `offThreadBytes`.
 */
import type { Dispatcher } from 'undici';
import type { AnswerPreparation, ParseJob, ParseOutcome } from './answer-parse';
import { parseAnswer } from './answer-parse';
import type { AnswerThreads } from './answer-threads';
import type { UpstreamEndpoint } from './endpoint';
import type { AnswerLimitName } from './errors';
import { AnswerPreparationRefused, UpstreamAnswerTooLarge } from './errors';

/** The bounds one request's answer is read under: the instance's, narrowed by the project's. */
export interface AnswerBounds {
  /** Largest JSON body, or SSE event of a request's answer, in bytes. */
  maxBytes: number;
  /** The setting `maxBytes` comes from (the project's when it is the lower one). */
  bytesLimit: Extract<AnswerLimitName, 'upstreams.maxResponseBytes' | 'limits.maxUpstreamResponseBytes'>;
  /** Largest event on a stream of notifications only (`upstreams.maxSseEventBytes`). */
  maxEventBytes: number;
  maxAnswerKeys: number;
}

/** Everything reading one request's answer needs. */
export interface AnswerContext {
  parser: AnswerParser;
  bounds: AnswerBounds;
  /** The upstream's alias, for errors (never its URL). */
  alias: string;
  /** What a worker thread does to the response's result (the gateway's response processing). */
  prepare?: AnswerPreparation | undefined;
}

/** The context of one request's answer to an endpoint (the client knows the bounds that apply). */
export type AnswerContexts = (endpoint: UpstreamEndpoint, prepare?: AnswerPreparation) => AnswerContext;

/** Messages whose `result` went through their request's preparation (kept with the message itself). */
const preparedMessages = new WeakSet<object>();

/** Whether `message` (as parsed) had its result prepared where it was parsed. */
export function wasPrepared(message: unknown): boolean {
  return typeof message === 'object' && message !== null && preparedMessages.has(message);
}

/** The answer could not be parsed as JSON. */
export class UnreadableAnswer extends Error {
  override readonly name = 'UnreadableAnswer';
}

export class AnswerParser {
  constructor(
    private readonly opts: {
      /** Answers larger than this (bytes, or characters of an SSE event) go to `threads`. */
      offThreadBytes: number;
      threads?: AnswerThreads;
    },
  ) {}

  /**
   * Parses one answer. Rejects with UnreadableAnswer (not JSON), UpstreamAnswerTooLarge (an object with
   * too many keys) or AnswerPreparationRefused (the preparation refused the result).
   */
  async parse(
    input: Uint8Array | string,
    ctx: Pick<AnswerContext, 'alias' | 'bounds' | 'prepare'>,
  ): Promise<unknown> {
    const large = input.length > this.opts.offThreadBytes;
    const job: ParseJob = {
      maxAnswerKeys: ctx.bounds.maxAnswerKeys,
      // Smaller answers cannot hold enough keys to cost the event loop more than parsing them.
      checkKeys: large,
      ...(ctx.prepare && { prepare: ctx.prepare }),
    };
    const outcome: ParseOutcome =
      large && this.opts.threads ? await this.opts.threads.run(input, job) : parseAnswer(input, job);
    if (outcome.ok) {
      if (outcome.prepared && typeof outcome.message === 'object' && outcome.message !== null)
        preparedMessages.add(outcome.message);
      return outcome.message;
    }
    if (outcome.reason === 'keys')
      throw new UpstreamAnswerTooLarge(ctx.alias, 'upstreams.maxAnswerKeys', ctx.bounds.maxAnswerKeys);
    if (outcome.reason === 'refused') throw new AnswerPreparationRefused(outcome.refusal);
    throw new UnreadableAnswer('not JSON');
  }
}

/** Reads and parses a JSON body within the request's bounds. */
export async function readJsonAnswer(
  res: Pick<Dispatcher.ResponseData, 'headers' | 'body'>,
  ctx: AnswerContext,
): Promise<unknown> {
  return ctx.parser.parse(await readBoundedBody(res, ctx.alias, ctx.bounds), ctx);
}

/**
 * Reads a whole body within `bounds.maxBytes`: refused by `content-length` before reading, else counted
 * chunk by chunk and destroyed as soon as it passes the bound. Resolves with the body's bytes.
 */
export async function readBoundedBody(
  res: Pick<Dispatcher.ResponseData, 'headers' | 'body'>,
  alias: string,
  bounds: AnswerBounds,
): Promise<Buffer> {
  const tooLarge = () => {
    res.body.destroy();
    return new UpstreamAnswerTooLarge(alias, bounds.bytesLimit, bounds.maxBytes);
  };
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > bounds.maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res.body) {
    const buf = chunk as Buffer;
    bytes += buf.length;
    if (bytes > bounds.maxBytes) {
      chunks.length = 0;
      throw tooLarge();
    }
    chunks.push(buf);
  }
  // One buffer of its own (above 4 KiB never a slice of Node's shared pool): a thread can take it as it is.
  return Buffer.concat(chunks, bytes);
}
