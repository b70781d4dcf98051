/**
 * The pure parts of the streams to clients (issue 22, findings 1 and 6): the coalescing queue a stream
 * holds while its client's socket is full, the bounds on relayed upstream notifications, text
 * truncation, and the listen caps' slots.
 */
import { boundedRelay, coalescingKey, CoalescingQueue } from '../../src/api/mcp/stream-queue';
import { LISTEN_RETRY_AFTER_MS, StreamSlots } from '../../src/api/mcp/stream-slots';
import type { ProtocolError } from '../../src/protocol';
import { truncateText } from '../../src/protocol';

const progress = (token: string | number, n: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: token, progress: n },
});

describe('coalescingKey', () => {
  it('keys progress by token, with its type', () => {
    expect(coalescingKey(progress('a', 1))).toBe(coalescingKey(progress('a', 2)));
    expect(coalescingKey(progress('a', 1))).not.toBe(coalescingKey(progress('b', 1)));
    expect(coalescingKey(progress('1', 1))).not.toBe(coalescingKey(progress(1, 1)));
  });

  it('keys list changes by kind, tasks by id (both eras), resource updates by URI', () => {
    const m = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', method, params });
    expect(coalescingKey(m('notifications/tools/list_changed'))).toBe('notifications/tools/list_changed');
    expect(coalescingKey(m('notifications/tools/list_changed'))).not.toBe(
      coalescingKey(m('notifications/prompts/list_changed')),
    );
    expect(coalescingKey(m('notifications/tasks', { taskId: 't1', status: 'working' }))).toBe(
      coalescingKey(m('notifications/tasks', { taskId: 't1', status: 'completed' })),
    );
    expect(coalescingKey(m('notifications/tasks', { taskId: 't1' }))).not.toBe(
      coalescingKey(m('notifications/tasks', { taskId: 't2' })),
    );
    expect(coalescingKey(m('notifications/tasks/status', { taskId: 't1' }))).toBeDefined();
    expect(coalescingKey(m('notifications/resources/updated', { uri: 'a://1' }))).not.toBe(
      coalescingKey(m('notifications/resources/updated', { uri: 'a://2' })),
    );
  });

  it('never coalesces what must all arrive: log messages, acknowledgements, requests, keyless shapes', () => {
    const none = [
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } },
      { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: {} },
      { jsonrpc: '2.0', id: 7, method: 'elicitation/create', params: {} },
      { jsonrpc: '2.0', id: 7, result: {} },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } },
      { jsonrpc: '2.0', method: 'notifications/tasks', params: {} },
      { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 3 } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: 'not an object' },
    ];
    for (const message of none) expect(coalescingKey(message)).toBeUndefined();
  });
});

describe('CoalescingQueue', () => {
  const drain = (q: CoalescingQueue) => {
    const out: string[] = [];
    for (let e = q.shift(); e !== undefined; e = q.shift()) out.push(e);
    return out;
  };

  it('keeps order; a newer event with the same key replaces the queued one and goes last', () => {
    const q = new CoalescingQueue(1000);
    expect(q.offer('p1', 'p')).toBe('queued');
    expect(q.offer('log1')).toBe('queued');
    expect(q.offer('p2', 'p')).toBe('replaced');
    expect(q.offer('t1', 't')).toBe('queued');
    expect(q.offer('p3', 'p')).toBe('replaced');
    expect(q.length).toBe(3);
    expect(q.bytes).toBe(8);
    expect(drain(q)).toEqual(['log1', 't1', 'p3']);
    expect(q.bytes).toBe(0);
  });

  it('counts UTF-8 bytes', () => {
    const q = new CoalescingQueue(1000);
    q.offer('é€😀');
    expect(q.bytes).toBe(2 + 3 + 4);
  });

  it('refuses an event past the bound, and leaves the queue as it was', () => {
    const q = new CoalescingQueue(10);
    expect(q.offer('aaaa')).toBe('queued');
    expect(q.offer('bbbb')).toBe('queued');
    expect(q.offer('ccc')).toBe('overflow');
    expect(q.bytes).toBe(8);
    expect(drain(q)).toEqual(['aaaa', 'bbbb']);
  });

  it('always takes an event into an empty queue, whatever its size', () => {
    const q = new CoalescingQueue(10);
    expect(q.offer('x'.repeat(50))).toBe('queued');
    expect(q.offer('y')).toBe('overflow');
    // Replacing the only event is taking it into an otherwise empty queue.
    const k = new CoalescingQueue(10);
    k.offer('x'.repeat(50), 'p');
    expect(k.offer('z'.repeat(60), 'p')).toBe('replaced');
    expect(k.bytes).toBe(60);
  });

  it('a replacement that fits the bound is taken even when the queue is near it', () => {
    const q = new CoalescingQueue(10);
    q.offer('aaaaa');
    q.offer('bbbb', 'p');
    expect(q.offer('cccc', 'p')).toBe('replaced');
    expect(q.offer('cccccc', 'p')).toBe('overflow');
    expect(drain(q)).toEqual(['aaaaa', 'cccc']);
  });

  it('takes the final message outside the bound, last', () => {
    const q = new CoalescingQueue(10);
    q.offer('aaaaaaaa');
    q.push('final message longer than the bound');
    expect(drain(q)).toEqual(['aaaaaaaa', 'final message longer than the bound']);
  });

  it('clears', () => {
    const q = new CoalescingQueue(100);
    q.offer('a', 'k');
    q.offer('b');
    q.clear();
    expect(q.length).toBe(0);
    expect(q.bytes).toBe(0);
    expect(q.shift()).toBeUndefined();
  });
});

describe('boundedRelay', () => {
  const bounds = { maxNotificationBytes: 2000, maxProgressMessageChars: 100 };

  it('relays a small notification as it is', () => {
    const m = { ...progress('a', 1), params: { progressToken: 'a', progress: 1, message: 'half way' } };
    const r = boundedRelay(m, bounds);
    expect(r).toEqual({ message: m, json: JSON.stringify(m) });
  });

  it('cuts a long progress message, ending in …, and keeps the rest', () => {
    const m = {
      ...progress('a', 1),
      params: { progressToken: 'a', progress: 1, total: 9, message: 'x'.repeat(5000) },
    };
    const r = boundedRelay(m, bounds);
    if (!('message' in r)) throw new Error('dropped');
    const params = r.message.params as Record<string, unknown>;
    expect(params.message).toBe(`${'x'.repeat(99)}…`);
    expect(params).toMatchObject({ progressToken: 'a', progress: 1, total: 9 });
    expect(JSON.parse(r.json)).toEqual(r.message);
  });

  it('drops a notification larger than the bound, with its size; measured in UTF-8 bytes', () => {
    const log = (data: string) => ({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data },
    });
    expect(boundedRelay(log('x'.repeat(1900)), bounds)).toHaveProperty('json');
    const dropped = boundedRelay(log('x'.repeat(3000)), bounds);
    expect(dropped).toEqual({ dropped: JSON.stringify(log('x'.repeat(3000))).length });
    // 700 three-byte characters: 700 code units, 2100 bytes.
    expect(boundedRelay(log('€'.repeat(700)), bounds)).toHaveProperty('dropped');
  });
});

describe('truncateText', () => {
  it('leaves short text alone and cuts long text to the bound, ending in …', () => {
    expect(truncateText('abc', 3)).toBe('abc');
    expect(truncateText('abcdef', 4)).toBe('abc…');
    expect(truncateText('abcdef', 4)).toHaveLength(4);
  });

  it('never splits a surrogate pair', () => {
    const cut = truncateText('ab😀cd', 4);
    expect(cut).toBe('ab…');
    expect(Buffer.from(cut, 'utf8').toString('utf8')).toBe(cut);
  });
});

describe('StreamSlots', () => {
  const refusal = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      return err as ProtocolError;
    }
    throw new Error('not refused');
  };

  it('refuses past the per-caller cap with RateLimited and a retry delay; a release frees one slot once', () => {
    const slots = new StreamSlots({ maxPerCaller: 2, maxPerProject: 10 });
    const a = slots.reserve('p/alice', 'p');
    slots.reserve('p/alice', 'p');
    const err = refusal(() => slots.reserve('p/alice', 'p'));
    expect(err.code).toBe(-31013);
    expect(err.data).toEqual({ limit: 'caller', max: 2, retryAfterMs: LISTEN_RETRY_AFTER_MS });
    // Another caller is not affected.
    slots.reserve('p/bob', 'p');
    a();
    a();
    expect(slots.held('p/alice', 'p')).toEqual({ caller: 1, project: 2 });
    slots.reserve('p/alice', 'p');
    expect(() => slots.reserve('p/alice', 'p')).toThrow(/at most 2 open subscriptions per caller/i);
  });

  it('refuses past the per-project cap, whoever asks, and a refusal takes nothing', () => {
    const slots = new StreamSlots({ maxPerCaller: 5, maxPerProject: 3 });
    const releases = ['a', 'b', 'c'].map((c) => slots.reserve(`p/${c}`, 'p'));
    const err = refusal(() => slots.reserve('p/d', 'p'));
    expect(err.data).toMatchObject({ limit: 'project', max: 3 });
    expect(slots.held('p/d', 'p')).toEqual({ caller: 0, project: 3 });
    // Another project has its own count.
    slots.reserve('q/d', 'q');
    releases[0]?.();
    slots.reserve('p/d', 'p');
    expect(slots.held('p/d', 'p')).toEqual({ caller: 1, project: 3 });
  });
});
