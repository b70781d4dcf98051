/**
 * Reading upstream answers within bounds. A JSON body is refused by its `content-length` before a byte
 * is read, else counted while it is read and destroyed the moment it passes `maxBytes` (the connection
 * is closed, so the upstream notices it is no longer read). Parsing is answer-parse.ts: on the event
 * loop for small answers, on a worker thread (answer-threads.ts) above `offThreadBytes`, where a large
 * body's chunks go as they arrive.
 */
import type { Dispatcher } from 'undici';
import type { AnswerPreparation, ParseJob, ParseOutcome } from './answer-parse';
import { parseAnswer } from './answer-parse';
import type { AnswerStream, AnswerThreads } from './answer-threads';
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
      /** Answers larger than this (bytes of a body or of an SSE event's data) go to `threads`. */
      offThreadBytes: number;
      threads?: AnswerThreads;
    },
  ) {}

  /**
   * Parses one answer (an SSE event's data, or a body read by `read`). Rejects with UnreadableAnswer
   * (not JSON), UpstreamAnswerTooLarge (too many distinct keys) or AnswerPreparationRefused.
   */
  async parse(input: Uint8Array | string, ctx: ParseContext): Promise<unknown> {
    const large = input.length > this.opts.offThreadBytes;
    const job = jobOf(ctx, large);
    return settle(
      large && this.opts.threads ? await this.opts.threads.run(input, job) : parseAnswer(input, job),
      ctx,
    );
  }

  /** Parses an SSE event's data, given as the pieces it arrived in (answer-parse.ts; sse-framer.ts). */
  async parsePieces(pieces: Buffer[], bytes: number, ctx: ParseContext): Promise<unknown> {
    const large = bytes > this.opts.offThreadBytes;
    const job = jobOf(ctx, large);
    if (!large || !this.opts.threads) return settle(parseAnswer(Buffer.concat(pieces, bytes), job), ctx);
    const stream = this.opts.threads.open();
    for (const piece of pieces) stream.push(piece);
    return settle(await stream.finish(job), ctx);
  }

  /**
   * Reads and parses a JSON body within `ctx.bounds.maxBytes`: refused by `content-length` before a byte
   * is read, else counted chunk by chunk and destroyed as soon as it passes the bound. Once it passes
   * `offThreadBytes` its chunks go to a worker thread as they arrive: the event loop never holds (or
   * copies) a large body whole.
   */
  async read(res: Pick<Dispatcher.ResponseData, 'headers' | 'body'>, ctx: ParseContext): Promise<unknown> {
    const { bounds } = ctx;
    const tooLarge = () => {
      res.body.destroy();
      return new UpstreamAnswerTooLarge(ctx.alias, bounds.bytesLimit, bounds.maxBytes);
    };
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > bounds.maxBytes) throw tooLarge();
    let held: Buffer[] = [];
    let bytes = 0;
    let stream: AnswerStream | undefined;
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        bytes += buf.length;
        if (bytes > bounds.maxBytes) throw tooLarge();
        if (stream) stream.push(buf);
        else held.push(buf);
        if (!stream && bytes > this.opts.offThreadBytes && this.opts.threads) {
          stream = this.opts.threads.open();
          for (const b of held) stream.push(b);
          held = [];
        }
      }
    } catch (err) {
      stream?.drop();
      throw err;
    }
    const job = jobOf(ctx, bytes > this.opts.offThreadBytes);
    return settle(stream ? await stream.finish(job) : parseAnswer(Buffer.concat(held, bytes), job), ctx);
  }
}

type ParseContext = Pick<AnswerContext, 'alias' | 'bounds' | 'prepare'>;

function jobOf(ctx: ParseContext, large: boolean): ParseJob {
  return {
    maxAnswerKeys: ctx.bounds.maxAnswerKeys,
    // Smaller answers cannot hold enough keys to cost the event loop more than parsing them.
    checkKeys: large,
    ...(ctx.prepare && { prepare: ctx.prepare }),
  };
}

/** The parsed message, or the error its outcome stands for. */
function settle(outcome: ParseOutcome, ctx: ParseContext): unknown {
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

/** Reads and parses a JSON body within the request's bounds. */
export async function readJsonAnswer(
  res: Pick<Dispatcher.ResponseData, 'headers' | 'body'>,
  ctx: AnswerContext,
): Promise<unknown> {
  return ctx.parser.read(res, ctx);
}
