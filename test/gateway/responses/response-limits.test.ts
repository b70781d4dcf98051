import type { LimitsConfig } from '../../../src/config/config';
import type { LimitReport } from '../../../src/gateway/responses/response-limits';
import {
  RESPONSE_LIMIT_META_KEY,
  applyResponseLimits,
  collapseWhitespace,
  minifyJsonText,
  resultSize,
  truncationMarker,
} from '../../../src/gateway/responses/response-limits';
import { ProtocolError } from '../../../src/protocol/errors';

type R = Record<string, unknown>;

const limits = (maxResultBytes: number, overflow: LimitsConfig['overflow']): LimitsConfig => ({
  maxResultBytes,
  overflow,
});
const text = (t: string) => ({ type: 'text', text: t });
const complete = (content: unknown[], extra: R = {}): R => ({ resultType: 'complete', content, ...extra });
const textOf = (r: R, i = 0) => ((r.content as { text: string }[])[i] as { text: string }).text;
const noteOf = (r: R) => (r._meta as R)[RESPONSE_LIMIT_META_KEY];
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Runs applyResponseLimits and checks the invariants every changed result must meet. */
function limited(input: R, cfg: LimitsConfig): { result: R; report: LimitReport } {
  const before = structuredClone(input);
  const out = applyResponseLimits(input, cfg);
  expect(input).toEqual(before); // never mutated
  expect(out.result).not.toBe(input);
  expect(out.report).toBeDefined();
  const report = out.report!;
  expect(report.finalBytes).toBe(resultSize(out.result));
  expect(report.finalBytes).toBeLessThanOrEqual(cfg.maxResultBytes);
  const { finalBytes: _f, ...note } = report;
  expect(noteOf(out.result)).toEqual(note);
  return { result: out.result, report };
}

function expectTooLarge(input: R, cfg: LimitsConfig): ProtocolError {
  let caught: unknown;
  try {
    applyResponseLimits(input, cfg);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ProtocolError);
  const err = caught as ProtocolError;
  expect(err.kind).toBe('ResultTooLarge');
  expect(err.code).toBe(-31005);
  expect(err.data).toEqual({ limitBytes: cfg.maxResultBytes, resultBytes: resultSize(input) });
  return err;
}

describe('resultSize', () => {
  it('counts UTF-8 bytes of the JSON text', () => {
    expect(resultSize({ a: 'é' })).toBe(Buffer.byteLength('{"a":"é"}'));
    expect(resultSize({ a: '😀\n' })).toBe(8 + 4 + 2);
  });
});

describe('results within the limit', () => {
  it.each(['truncate', 'compact', 'error'] as const)(
    'pass unchanged under %s (a new object, no report)',
    (p) => {
      const input = complete([text('hello   world\n\n\n\n')], {
        structuredContent: { a: 1 },
        _meta: { x: 1 },
      });
      const exact = resultSize(input);
      const out = applyResponseLimits(input, limits(exact, p));
      expect(out.report).toBeUndefined();
      expect(out.result).toEqual(input);
      expect(out.result).not.toBe(input);
    },
  );
});

describe('results that limits never touch', () => {
  const huge = 'x'.repeat(5000);
  it.each(['truncate', 'compact', 'error'] as const)(
    'input_required, task envelopes and tasks/get under %s',
    (p) => {
      const inputRequired = {
        resultType: 'input_required',
        inputRequests: { q: { method: 'elicitation/create', params: { message: huge } } },
        requestState: huge,
      };
      const envelope = {
        resultType: 'task',
        taskId: 'trt_x',
        status: 'working',
        statusMessage: huge,
        createdAt: 'c',
        lastUpdatedAt: 'u',
        ttlMs: null,
      };
      const getTask = {
        resultType: 'complete',
        taskId: 'trt_x',
        status: 'completed',
        createdAt: 'c',
        lastUpdatedAt: 'u',
        ttlMs: null,
        result: complete([text(huge)]),
      };
      for (const r of [inputRequired, envelope, getTask]) {
        const out = applyResponseLimits(r, limits(100, p));
        expect(out.report).toBeUndefined();
        expect(out.result).toEqual(r);
      }
    },
  );
});

describe("policy 'error'", () => {
  it('throws ResultTooLarge for text, structured and mixed content', () => {
    const cfg = limits(200, 'error');
    expectTooLarge(complete([text('a'.repeat(300))]), cfg);
    expectTooLarge(complete([], { structuredContent: { s: 'b'.repeat(300) } }), cfg);
    const err = expectTooLarge(
      complete([text('short'), { type: 'image', data: 'AAAA', mimeType: 'image/png' }], {
        structuredContent: { s: 'c'.repeat(300) },
      }),
      cfg,
    );
    expect(err.message).toMatch(/exceeds the project's response limit of 200 bytes/);
  });
});

describe("policy 'truncate' on text", () => {
  const body = 'H'.repeat(5000) + 'M'.repeat(10000) + 'T'.repeat(5000);
  const input = complete([text(body)], { _meta: { traceparent: '00-abc-01', 'com.example/x': { y: 1 } } });

  it('keeps an even head and tail around a visible marker and fills the limit', () => {
    const { result, report } = limited(input, limits(3000, 'truncate'));
    const t = textOf(result);
    const head = /^H*/.exec(t)![0].length;
    const tail = /T*$/.exec(t)![0].length;
    const removed = body.length - head - tail;
    expect(head).toBeGreaterThan(1000);
    expect(Math.abs(head - tail)).toBeLessThanOrEqual(1);
    expect(t).toBe('H'.repeat(head) + truncationMarker(removed) + 'T'.repeat(tail));
    expect(t).toContain(`\n…[truncated ${removed} characters by TaskRouter]…\n`);
    expect(report).toEqual({
      policy: 'truncate',
      limitBytes: 3000,
      originalBytes: resultSize(input),
      finalBytes: report.finalBytes,
      removedChars: removed,
    });
    expect(report.finalBytes).toBeGreaterThan(3000 - 8);
  });

  it('keeps every other _meta key next to the note', () => {
    const { result } = limited(input, limits(3000, 'truncate'));
    expect(result._meta).toEqual({
      traceparent: '00-abc-01',
      'com.example/x': { y: 1 },
      [RESPONSE_LIMIT_META_KEY]: expect.objectContaining({
        policy: 'truncate',
        removedChars: expect.any(Number),
      }),
    });
    expect(result.resultType).toBe('complete');
  });

  it('leaves small blocks whole and cuts large blocks to the same size', () => {
    const r = complete([text('A'.repeat(4000)), text('small'), text('B'.repeat(8000))]);
    const { result } = limited(r, limits(2000, 'truncate'));
    expect(textOf(result, 1)).toBe('small');
    const a = textOf(result, 0);
    const b = textOf(result, 2);
    expect(a).toContain('characters by TaskRouter');
    expect(b).toContain('characters by TaskRouter');
    expect(Math.abs(a.length - b.length)).toBeLessThanOrEqual(2);
  });

  it('cuts an embedded text resource, keeping its uri', () => {
    const r = complete([
      { type: 'resource', resource: { uri: 'file:///log', mimeType: 'text/plain', text: 'L'.repeat(5000) } },
    ]);
    const { result, report } = limited(r, limits(1000, 'truncate'));
    const res = (result.content as { resource: R }[])[0]!.resource;
    expect(res.uri).toBe('file:///log');
    expect(res.text).toMatch(/^L+\n…\[truncated \d+ characters by TaskRouter\]…\nL+$/);
    expect(report.removedChars).toBeGreaterThan(4000);
  });

  it('never splits a surrogate pair at the cut, whatever the limit', () => {
    const emoji = 'a' + '😀'.repeat(3000) + 'b';
    const r = complete([text(emoji)]);
    for (let limit = 500; limit < 540; limit++) {
      const { result, report } = limited(r, limits(limit, 'truncate'));
      const t = textOf(result);
      expect(t).not.toMatch(LONE_SURROGATE);
      const [head, tail] = t.split(/\n…\[truncated \d+ characters by TaskRouter\]…\n/) as [string, string];
      expect([...head].length + [...tail].length + report.removedChars!).toBe(3002);
    }
  });

  it('counts escapes exactly (quotes, newlines, control characters, lone surrogates)', () => {
    const nasty = '"\\\n\t\u0001é€😀\uD800'.repeat(400);
    const r = complete([text(nasty)]);
    for (let limit = 600; limit < 700; limit += 7) {
      const { report } = limited(r, limits(limit, 'truncate'));
      expect(report.finalBytes).toBeGreaterThan(limit - 30);
    }
  });

  it('throws when even an empty text cannot fit', () => {
    expectTooLarge(
      complete([text('z'.repeat(500))], { _meta: { big: 'm'.repeat(300) } }),
      limits(250, 'truncate'),
    );
  });
});

describe("policy 'truncate' on structured content", () => {
  const structured = { rows: Array.from({ length: 100 }, (_, i) => ({ id: i, name: `row ${i}` })) };

  it('keeps small structured content whole and cuts text', () => {
    const r = complete([text('x'.repeat(5000))], { structuredContent: { ok: true, n: 3 } });
    const { result, report } = limited(r, limits(1000, 'truncate'));
    expect(result.structuredContent).toEqual({ ok: true, n: 3 });
    expect(report.droppedStructuredContent).toBeUndefined();
    expect(report.removedChars).toBeGreaterThan(4000);
  });

  it('keeps structured content that fits and cuts its text copy instead', () => {
    const r = complete([text(JSON.stringify(structured, null, 1))], { structuredContent: structured });
    const alone = resultSize(complete([], { structuredContent: structured }));
    const { result, report } = limited(r, limits(alone + 500, 'truncate'));
    expect(result.structuredContent).toEqual(structured);
    expect(result.structuredContent).toBe(structured);
    expect(report.droppedStructuredContent).toBeUndefined();
    expect(textOf(result)).toMatch(
      /^\{\n "rows"[^]*\n…\[truncated \d+ characters by TaskRouter\]…\n[^]*\]\n\}$/,
    );
  });

  it('drops structured content and cuts its text copy when both are too large', () => {
    const r = complete([text(JSON.stringify(structured))], { structuredContent: structured });
    const { result, report } = limited(r, limits(1000, 'truncate'));
    expect(result).not.toHaveProperty('structuredContent');
    expect(report).toMatchObject({ droppedStructuredContent: true, removedChars: expect.any(Number) });
    expect(textOf(result)).toMatch(/^\{"rows":\[.*\n…\[truncated \d+ characters by TaskRouter\]…\n.*\]\}$/s);
  });

  it('throws when no text block carries the structured content', () => {
    const r = complete([text('Here are the rows.')], { structuredContent: structured });
    expectTooLarge(r, limits(1000, 'truncate'));
  });

  it('throws when the only text is a different JSON value', () => {
    const r = complete([text(JSON.stringify({ rows: [] }))], { structuredContent: structured });
    expectTooLarge(r, limits(1000, 'truncate'));
  });
});

describe("policy 'truncate' on mixed content", () => {
  const image = { type: 'image', data: 'iVBORw0KGgo'.repeat(20), mimeType: 'image/png' };

  it('keeps non-text blocks and small structured content whole, cuts only the text', () => {
    const r = complete([text('p'.repeat(6000)), image, text('caption')], { structuredContent: { w: 1 } });
    const { result } = limited(r, limits(1500, 'truncate'));
    const content = result.content as R[];
    expect(content[1]).toEqual(image);
    expect(content[1]).toBe(image); // shared, not copied or cut
    expect(content[2]).toEqual(text('caption'));
    expect(result.structuredContent).toEqual({ w: 1 });
    expect(textOf(result)).toContain('characters by TaskRouter');
  });

  it('throws when a non-text block alone is over the limit', () => {
    const big = { type: 'image', data: 'A'.repeat(5000), mimeType: 'image/png' };
    expectTooLarge(complete([text('t'.repeat(100)), big]), limits(1000, 'truncate'));
    expectTooLarge(complete([text('t'.repeat(100)), big]), limits(1000, 'compact'));
  });
});

describe("policy 'compact'", () => {
  it('minify-json: strips whitespace outside strings only, exactly', () => {
    const value = { id: 'BIG', name: 'a  b', list: Array.from({ length: 30 }, (_, i) => ({ k: `v ${i}` })) };
    const pretty = JSON.stringify(value, null, 2).replace('"BIG"', '12345678901234567890');
    const r = complete([text(pretty + '\n'), text('plain   text')]);
    const { result, report } = limited(r, limits(resultSize(r) - 1, 'compact'));
    expect(textOf(result)).toBe(JSON.stringify(value).replace('"BIG"', '12345678901234567890'));
    expect(report).toEqual({
      policy: 'compact',
      limitBytes: resultSize(r) - 1,
      originalBytes: resultSize(r),
      finalBytes: report.finalBytes,
      compacted: ['minify-json'],
    });
    expect(textOf(result, 1)).toBe('plain   text');
  });

  it('drop-duplicate-text: removes the text copy of structuredContent, keeps other blocks', () => {
    const structured = { items: Array.from({ length: 50 }, (_, i) => ({ i })) };
    const r = complete([text(JSON.stringify(structured)), text('50 items')], {
      structuredContent: structured,
    });
    const { result, report } = limited(r, limits(resultSize(r) - 1, 'compact'));
    expect(result.content).toEqual([text('50 items')]);
    expect(result.structuredContent).toEqual(structured);
    expect(report.compacted).toEqual(['drop-duplicate-text']);
    expect(report.removedChars).toBeUndefined();
  });

  it('collapse-whitespace: CRLF, trailing spaces, blank-line runs and space runs', () => {
    const one = 'Name    Size\r\nfoo     1   \r\n\r\n\r\n\r\n  indented   value\n\tTab\tsep\t\n';
    const r = complete([text(one.repeat(20))]);
    const { result, report } = limited(r, limits(resultSize(r) - 1, 'compact'));
    expect(textOf(result)).toBe('Name Size\nfoo 1\n\n  indented value\n\tTab\tsep\n'.repeat(20));
    expect(report.compacted).toEqual(['collapse-whitespace']);
  });

  it('stops after the first step that fits', () => {
    const structured = { v: 'w'.repeat(50) };
    const pretty = JSON.stringify(
      { a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20] },
      null,
      4,
    );
    const r = complete([text(pretty), text(JSON.stringify(structured))], { structuredContent: structured });
    const { result, report } = limited(r, limits(resultSize(r) - 1, 'compact'));
    expect(report.compacted).toEqual(['minify-json']);
    expect(textOf(result, 1)).toBe(JSON.stringify(structured));
  });

  it('does not collapse whitespace inside JSON text', () => {
    const json = JSON.stringify({ s: 'keep    these    spaces', pad: 'x'.repeat(300) });
    const r = complete([text(json), text('a' + ' '.repeat(300) + 'b')]);
    const { result, report } = limited(r, limits(resultSize(r) - 1, 'compact'));
    expect(textOf(result, 0)).toBe(json);
    expect(textOf(result, 1)).toBe('a b');
    expect(report.compacted).toEqual(['collapse-whitespace']);
  });

  it('truncates after compaction when still too large', () => {
    const r = complete([text('x'.repeat(5000) + '     ' + 'y'.repeat(5000))]);
    const { result, report } = limited(r, limits(2000, 'compact'));
    expect(report).toMatchObject({
      policy: 'compact',
      compacted: ['collapse-whitespace'],
      removedChars: expect.any(Number),
    });
    expect(textOf(result)).toMatch(/^x+\n…\[truncated \d+ characters by TaskRouter\]…\ny+$/);
  });

  it('falls back to dropping structured content and cutting its text copy when structured content alone is too large', () => {
    const structured = { data: 'z'.repeat(3000) };
    const r = complete([text(JSON.stringify(structured))], { structuredContent: structured });
    const { result, report } = limited(r, limits(2000, 'compact'));
    expect(result).not.toHaveProperty('structuredContent');
    expect(report).toMatchObject({
      policy: 'compact',
      droppedStructuredContent: true,
      removedChars: expect.any(Number),
    });
    expect(report.compacted).toBeUndefined();
    expect(textOf(result)).toMatch(/^\{"data":"z+\n…\[truncated \d+ characters by TaskRouter\]…\nz+"\}$/);
  });

  it('throws when structured content alone is too large and nothing carries it', () => {
    expectTooLarge(complete([], { structuredContent: { data: 'z'.repeat(3000) } }), limits(2000, 'compact'));
  });
});

describe('minifyJsonText', () => {
  it('keeps escaped quotes and whitespace inside strings', () => {
    expect(minifyJsonText('{ "a" : "x \\" y  z" ,\n "b" : [ 1 , 2 ] }')).toBe('{"a":"x \\" y  z","b":[1,2]}');
  });

  it('leaves non-JSON and JSON scalars alone', () => {
    expect(minifyJsonText('{ not json')).toBeUndefined();
    expect(minifyJsonText(' 42 ')).toBeUndefined();
    expect(minifyJsonText('"  s  "')).toBeUndefined();
  });
});

describe('collapseWhitespace', () => {
  it('keeps indentation and tabs, trims line ends, caps blank lines at one', () => {
    expect(collapseWhitespace('  a  b \t\n\n\n\n\tc\t\td')).toBe('  a b\n\n\tc\t\td');
  });
});
