/**
 * Reading upstream answers within bounds (src/upstream/answers.ts, answer-parse.ts, answer-threads.ts,
 * http.ts `readSseMessages`, deadline.ts): content-length refusals before a byte is read, counting while
 * reading, SSE events that never end, distinct-key bounds, the worker threads with the gateway's own
 * script (the result cut there), and the total deadline.
 */
import { Readable } from 'node:stream';
import { hasMoreKeysThan, parseAnswer } from '../../src/upstream/answer-parse';
import { AnswerThreads } from '../../src/upstream/answer-threads';
import type { AnswerBounds, AnswerContext } from '../../src/upstream/answers';
import { AnswerParser, readJsonAnswer, UnreadableAnswer, wasPrepared } from '../../src/upstream/answers';
import { CallDeadline } from '../../src/upstream/deadline';
import {
  AnswerPreparationRefused,
  boundError,
  UpstreamAnswerTooLarge,
  UpstreamDeadlineExceeded,
} from '../../src/upstream/errors';
import { readSseMessages, sseBounds } from '../../src/upstream/http';
import { SseFramer } from '../../src/upstream/sse-framer';
import { toolResultPreparation } from '../../src/gateway/responses/answer-preparation';
import { RESPONSE_LIMIT_META_KEY } from '../../src/gateway/responses/response-limits';

const BOUNDS: AnswerBounds = {
  maxBytes: 4096,
  bytesLimit: 'upstreams.maxResponseBytes',
  maxEventBytes: 256,
  maxAnswerKeys: 50,
};

/** A body as undici hands it over: chunks, and whether anyone destroyed it. */
function body(chunks: Array<string | Buffer>, headers: Record<string, string> = {}) {
  let pulled = 0;
  const stream = new Readable({
    read() {
      const next = chunks[pulled++];
      this.push(next === undefined ? null : Buffer.from(next));
    },
  });
  const res = { headers, body: stream } as unknown as Parameters<typeof readJsonAnswer>[0];
  return { res, pulled: () => pulled, stream };
}

const inline = new AnswerParser({ offThreadBytes: 1 << 20 });
const ctx = (parser = inline, bounds = BOUNDS): AnswerContext => ({ parser, bounds, alias: 'big' });

describe('parseAnswer', () => {
  test('parses, and reports what is not JSON', () => {
    expect(parseAnswer('{"a":1}', { maxAnswerKeys: 5, checkKeys: true })).toEqual({
      ok: true,
      message: { a: 1 },
      prepared: false,
    });
    expect(parseAnswer('{"a":', { maxAnswerKeys: 5, checkKeys: true })).toEqual({
      ok: false,
      reason: 'json',
    });
    expect(
      parseAnswer(new TextEncoder().encode('\uFEFF[1]'), { maxAnswerKeys: 5, checkKeys: false }),
    ).toEqual({
      ok: true,
      message: [1],
      prepared: false,
    });
  });

  test('counts distinct key names at any depth, in arrays too, each name once', () => {
    const shared = { rows: Array.from({ length: 1000 }, (_, i) => ({ id: i, name: 'x' })) };
    expect(hasMoreKeysThan(shared, 3)).toBe(false); // rows, id, name
    expect(hasMoreKeysThan(shared, 2)).toBe(true);
    const distinct = [{ a: 1 }, [{ b: { c: 1 } }], 'd', null];
    expect(hasMoreKeysThan(distinct, 3)).toBe(false);
    expect(hasMoreKeysThan(distinct, 2)).toBe(true);
    const meta = { _meta: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i])) };
    expect(parseAnswer(JSON.stringify(meta), { maxAnswerKeys: 5000, checkKeys: true })).toEqual({
      ok: false,
      reason: 'keys',
    });
  });

  test('deep nesting is walked without recursion', () => {
    const deep = '['.repeat(5000) + '{"a":1}' + ']'.repeat(5000);
    expect(parseAnswer(deep, { maxAnswerKeys: 1, checkKeys: true }).ok).toBe(true);
  });

  test("prepares a response's result only, and passes a refusal on as data", () => {
    const prep = {
      prepare: (r: Record<string, unknown>) => ({ ...r, cut: true }),
      refusalOf: (err: unknown) =>
        err instanceof RangeError ? { kind: 'ResultTooLarge', message: 'no' } : undefined,
    };
    const job = { maxAnswerKeys: 10, checkKeys: false, prepare: { kind: 'tool-result' } };
    expect(parseAnswer('{"id":1,"result":{"a":1}}', job, prep)).toEqual({
      ok: true,
      message: { id: 1, result: { a: 1, cut: true } },
      prepared: true,
    });
    expect(parseAnswer('{"id":1,"error":{"code":1,"message":"x"}}', job, prep)).toMatchObject({
      prepared: false,
    });
    const refusing = {
      ...prep,
      prepare: () => {
        throw new RangeError('x');
      },
    };
    expect(parseAnswer('{"id":1,"result":{}}', job, refusing)).toEqual({
      ok: false,
      reason: 'refused',
      refusal: { kind: 'ResultTooLarge', message: 'no' },
    });
  });
});

describe('JSON bodies', () => {
  test('a content-length over the bound is refused before a byte is read', async () => {
    const b = body(['{}'], { 'content-length': '4097' });
    const err = await readJsonAnswer(b.res, ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamAnswerTooLarge);
    expect(err).toMatchObject({ limit: 'upstreams.maxResponseBytes', bound: 4096, alias: 'big' });
    expect(b.pulled()).toBe(0);
    expect(b.stream.destroyed).toBe(true);
  });

  test('a body without content-length is counted and destroyed the moment it passes the bound', async () => {
    const chunks = ['{"a":"', ...Array.from({ length: 100 }, () => 'x'.repeat(1000)), '"}'];
    const b = body(chunks);
    const err = await readJsonAnswer(b.res, ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamAnswerTooLarge);
    expect((err as Error).message).toBe(
      'Upstream "big" sent an answer larger than 4096 bytes (upstreams.maxResponseBytes)',
    );
    expect(b.pulled()).toBeLessThan(10);
    expect(b.stream.destroyed).toBe(true);
  });

  test('an answer at the bound is read; one that is not JSON is unreadable', async () => {
    const text = JSON.stringify({ a: 'y'.repeat(4096 - 8) });
    expect(text.length).toBe(4096);
    await expect(readJsonAnswer(body([text.slice(0, 100), text.slice(100)]).res, ctx())).resolves.toEqual(
      JSON.parse(text),
    );
    await expect(readJsonAnswer(body(['nope']).res, ctx())).rejects.toBeInstanceOf(UnreadableAnswer);
  });

  test("the project's lower bound is named as the project's", async () => {
    const bounds: AnswerBounds = { ...BOUNDS, maxBytes: 10, bytesLimit: 'limits.maxUpstreamResponseBytes' };
    const err = (await readJsonAnswer(body(['{"a":"12345678"}']).res, ctx(inline, bounds)).catch(
      (e: unknown) => e,
    )) as UpstreamAnswerTooLarge;
    expect(boundError(err)).toEqual({
      kind: 'UpstreamResponseTooLarge',
      code: -31014,
      message: 'Upstream "big" sent an answer larger than 10 bytes (limits.maxUpstreamResponseBytes)',
      data: { upstream: 'big', limit: 'limits.maxUpstreamResponseBytes', limitBytes: 10 },
    });
  });
});

describe('worker threads with the gateway script', () => {
  const threads = new AnswerThreads({
    script: require.resolve('../../src/gateway/responses/answer-thread'),
    threads: 2,
  });
  const threaded = new AnswerParser({ offThreadBytes: 1024, threads });
  const big = { ...BOUNDS, maxBytes: 8 << 20, maxAnswerKeys: 100 };
  afterAll(() => threads.close());

  test('a large body goes to a thread chunk by chunk; its result is cut there to the project limit', async () => {
    const result = { resultType: 'complete', content: [{ type: 'text', text: 'z'.repeat(3 << 20) }] };
    const text = JSON.stringify({ jsonrpc: '2.0', id: 1, result });
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 65536) chunks.push(text.slice(i, i + 65536));
    const prepare = toolResultPreparation(
      { maxResultBytes: 10_000, overflow: 'truncate' },
      { name: 'gateway', version: '1' },
    );
    const message = (await readJsonAnswer(body(chunks).res, { ...ctx(threaded, big), prepare })) as {
      result: Record<string, unknown> & { _meta: Record<string, unknown> };
    };
    expect(wasPrepared(message)).toBe(true);
    expect(JSON.stringify(message.result).length).toBeLessThanOrEqual(10_000);
    expect(message.result._meta[RESPONSE_LIMIT_META_KEY]).toMatchObject({
      policy: 'truncate',
      limitBytes: 10_000,
    });
    expect(message.result._meta['io.modelcontextprotocol/serverInfo']).toEqual({
      name: 'gateway',
      version: '1',
    });
  });

  test("the thread refuses what the project's policy refuses, and too many keys", async () => {
    const prepare = toolResultPreparation(
      { maxResultBytes: 100, overflow: 'error' },
      { name: 'gateway', version: '1' },
    );
    const result = JSON.stringify({
      id: 1,
      result: { resultType: 'complete', content: [{ type: 'text', text: 'q'.repeat(5000) }] },
    });
    const refused = await threaded
      .parse(result, { alias: 'big', bounds: big, prepare })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AnswerPreparationRefused);
    expect((refused as AnswerPreparationRefused).refusal).toMatchObject({
      kind: 'ResultTooLarge',
      data: { limitBytes: 100 },
    });
    const keys = JSON.stringify({
      _meta: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i])),
    });
    const err = await threaded.parse(keys, { alias: 'big', bounds: big }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamAnswerTooLarge);
    expect((err as Error).message).toBe(
      'Upstream "big" sent an answer with more than 100 distinct keys (upstreams.maxAnswerKeys)',
    );
  });

  test('a 2025-era result is read as complete before it is cut; a task is left alone', async () => {
    const prepare = {
      ...toolResultPreparation({ maxResultBytes: 3000, overflow: 'truncate' }, { name: 'g', version: '1' }),
      legacy: true,
    };
    const legacy = JSON.stringify({ id: 1, result: { content: [{ type: 'text', text: 'w'.repeat(5000) }] } });
    const cut = (await threaded.parse(legacy, { alias: 'big', bounds: big, prepare })) as {
      result: Record<string, unknown>;
    };
    expect(cut.result.resultType).toBe('complete');
    expect(JSON.stringify(cut.result).length).toBeLessThanOrEqual(3000);
    const task = JSON.stringify({
      id: 1,
      result: { resultType: 'task', taskId: 't', pad: 'p'.repeat(5000) },
    });
    const kept = (await threaded.parse(task, { alias: 'big', bounds: big, prepare })) as { result: unknown };
    expect(kept.result).toEqual(JSON.parse(task).result);
  });
});

describe('SSE bodies', () => {
  const collect = async (chunks: string[], bounds = sseBounds(ctx(), 'notifications')) => {
    const got: unknown[] = [];
    await readSseMessages(
      body(chunks).stream,
      (m) => {
        got.push(m);
      },
      bounds,
    );
    return got;
  };

  test('events within the bound are read, noise ignored', async () => {
    await expect(
      collect(['data: {"a":1}\n\n: comment\n\ndata: nope\n\n', 'data: {"b":', '2}\n\n']),
    ).resolves.toEqual([{ a: 1 }, { b: 2 }]);
  });

  test('an event whose line never ends stops at the event bound', async () => {
    const b = body(['data: {"a":"', ...Array.from({ length: 1000 }, () => 'x'.repeat(100))]);
    const err = await readSseMessages(b.stream, () => {}, sseBounds(ctx(), 'notifications')).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UpstreamAnswerTooLarge);
    expect((err as Error).message).toBe(
      'Upstream "big" sent an SSE event larger than 256 bytes (upstreams.maxSseEventBytes)',
    );
    expect(b.pulled()).toBeLessThan(10);
    expect(b.stream.destroyed).toBe(true);
  });

  test("an event of many lines stops there too; a request's answer allows an answer's size", async () => {
    const lines = Array.from({ length: 100 }, () => 'data: 1234567890\n').join('');
    await expect(collect([lines, '\n'])).rejects.toBeInstanceOf(UpstreamAnswerTooLarge);
    await expect(collect([lines, '\n'], sseBounds(ctx(), 'answer'))).resolves.toEqual([]);
    const answer = `data: ${JSON.stringify({ a: 'x'.repeat(5000) })}\n\n`;
    const err = await collect([answer], sseBounds(ctx(), 'answer')).catch((e: unknown) => e);
    expect(err).toMatchObject({ limit: 'upstreams.maxResponseBytes', bound: 4096 });
  });
});

describe('CallDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());
  const expiry = () => new UpstreamDeadlineExceeded('slow', 'upstreams.callDeadlineMs', 1000);

  test('fails the call at the deadline and aborts its signal, even when the work ignores it', async () => {
    const deadline = new CallDeadline(1000, expiry);
    const raced = deadline.race(new Promise<never>(() => {}));
    jest.advanceTimersByTime(999);
    expect(deadline.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    await expect(raced).rejects.toBeInstanceOf(UpstreamDeadlineExceeded);
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.expired).toBe(true);
  });

  test('a restart gives the whole time again; clear stops it', async () => {
    const deadline = new CallDeadline(1000, expiry);
    let settled = false;
    void deadline.race(new Promise<never>(() => {})).catch(() => (settled = true));
    jest.advanceTimersByTime(900);
    deadline.restart();
    jest.advanceTimersByTime(900);
    await Promise.resolve();
    expect(settled).toBe(false);
    deadline.clear();
    jest.advanceTimersByTime(5000);
    await Promise.resolve();
    expect(settled).toBe(false);
    expect(deadline.signal.aborted).toBe(false);
  });

  test("the caller's own abort passes through and is not a deadline", () => {
    const outer = new AbortController();
    const deadline = new CallDeadline(1000, expiry, outer.signal);
    outer.abort(new Error('client left'));
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.expired).toBe(false);
    deadline.clear();
  });
});

describe('SseFramer', () => {
  /** Feeds `text` split at every given offset; answers the events' data as text. */
  const frame = (text: string, cuts: number[] = [], max = Infinity) => {
    const events: string[] = [];
    const framer = new SseFramer(max, (data, bytes) =>
      events.push(Buffer.concat(data, bytes).toString('utf8')),
    );
    const bytes = Buffer.from(text);
    let at = 0;
    for (const cut of [...cuts, bytes.length]) {
      framer.push(bytes.subarray(at, cut));
      at = cut;
    }
    return { events, overflowed: framer.overflowed };
  };

  test('LF, CRLF and CR end lines, also when a CRLF is split between chunks', () => {
    const text = 'data: a\n\ndata: b\r\n\r\ndata: c\r\rdata:d\n\n';
    const all = ['a', 'b', 'c', 'd'];
    expect(frame(text).events).toEqual(all);
    for (let cut = 1; cut < text.length; cut++) expect(frame(text, [cut]).events).toEqual(all);
  });

  test('data lines join with LF; comments, other fields and a leading BOM are skipped', () => {
    const text = '\uFEFF: hello\nevent: message\nid: 7\ndata: {"a":\ndata:1}\ndatax: no\nretry: 5\n\n';
    expect(frame(text).events).toEqual(['{"a":\n1}']);
    expect(frame('data\n\ndata:\n\n').events).toEqual(['', '']);
    expect(frame('data: unfinished').events).toEqual([]);
  });

  test('multi-byte characters survive any split', () => {
    const text = 'data: {"t":"é漢🙂"}\n\n';
    for (let cut = 1; cut < Buffer.byteLength(text); cut++)
      expect(frame(text, [cut]).events).toEqual(['{"t":"é漢🙂"}']);
  });

  test('an event past its bound overflows: a long line, or many data lines', () => {
    expect(frame(`data: ${'x'.repeat(100)}`, [10, 50], 64).overflowed).toBe(true);
    expect(frame(`: ${'x'.repeat(100)}\n`, [], 64).overflowed).toBe(true);
    expect(frame('data: 1234567890\n'.repeat(10), [], 64).overflowed).toBe(true);
    expect(frame('data: 1234567890\n\n'.repeat(10), [], 64)).toEqual({
      events: Array.from({ length: 10 }, () => '1234567890'),
      overflowed: false,
    });
  });
});
