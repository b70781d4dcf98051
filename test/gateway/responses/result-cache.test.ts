import type { CacheConfig } from '../../../src/config/config';
import type { CacheScope } from '../../../src/gateway/responses/result-cache';
import {
  ResultCache,
  cacheKey,
  canonicalJson,
  isCacheableCall,
  isCacheableResult,
} from '../../../src/gateway/responses/result-cache';

const cfg = (over: Partial<CacheConfig> = {}): CacheConfig => ({
  enabled: true,
  ttlMs: 1000,
  maxEntries: 100,
  maxBytes: 1_000_000,
  allowTools: [],
  ...over,
});

const result = (text: string): Record<string, unknown> => ({
  resultType: 'complete',
  content: [{ type: 'text', text }],
});

const scope = (over: Partial<CacheScope> = {}): CacheScope => ({
  project: 'acme',
  upstream: 'files',
  tool: 'read',
  arguments: { path: '/a', opts: { depth: 1, follow: true } },
  caller: { kind: 'apiKey', id: 'key-1' },
  ...over,
});

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('gives the same text whatever the key order', () => {
    expect(canonicalJson({ x: 1, y: [1, 2], z: 's' })).toBe(canonicalJson({ z: 's', y: [1, 2], x: 1 }));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it('follows JSON.stringify for undefined, non-finite numbers and toJSON', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, NaN, Infinity] })).toBe('{"b":[null,null,null]}');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson({ d: new Date(0) })).toBe('{"d":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson('é"\n')).toBe(JSON.stringify('é"\n'));
  });

  it('throws on cycles and bigints', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(TypeError);
    expect(() => canonicalJson({ n: BigInt(1) })).toThrow(TypeError);
  });

  it('accepts a value seen twice that is not a cycle', () => {
    const shared = { k: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"k":1},{"k":1}]');
  });
});

describe('cacheKey', () => {
  it('is a sha256 hex digest, stable across argument key order', () => {
    const k = cacheKey(scope());
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheKey(scope({ arguments: { opts: { follow: true, depth: 1 }, path: '/a' } }))).toBe(k);
  });

  it.each<[string, Partial<CacheScope>]>([
    ['project', { project: 'other' }],
    ['upstream', { upstream: 'other' }],
    ['tool', { tool: 'other' }],
    ['arguments', { arguments: { path: '/b', opts: { depth: 1, follow: true } } }],
    ['caller id', { caller: { kind: 'apiKey', id: 'key-2' } }],
    ['caller kind', { caller: { kind: 'user', id: 'key-1' } }],
  ])('changes with the %s', (_name, over) => {
    expect(cacheKey(scope(over))).not.toBe(cacheKey(scope()));
  });

  it('keeps parts apart: values cannot run into each other', () => {
    const a = cacheKey(scope({ upstream: 'ab', tool: 'c' }));
    const b = cacheKey(scope({ upstream: 'a', tool: 'bc' }));
    expect(a).not.toBe(b);
  });

  it('tells absent arguments from empty arguments', () => {
    expect(cacheKey(scope({ arguments: undefined }))).not.toBe(cacheKey(scope({ arguments: {} })));
  });
});

describe('isCacheableCall', () => {
  const base = { cache: cfg(), exposedName: 'files.read', isMrtrRetry: false };

  it('caches tools marked readOnlyHint: true', () => {
    expect(isCacheableCall({ ...base, annotations: { readOnlyHint: true } })).toBe(true);
  });

  it('does not cache tools without readOnlyHint or with readOnlyHint: false', () => {
    expect(isCacheableCall(base)).toBe(false);
    expect(isCacheableCall({ ...base, annotations: {} })).toBe(false);
    expect(isCacheableCall({ ...base, annotations: { readOnlyHint: false } })).toBe(false);
  });

  it('caches allow-listed exposed names without readOnlyHint', () => {
    expect(isCacheableCall({ ...base, cache: cfg({ allowTools: ['files.read'] }) })).toBe(true);
    expect(isCacheableCall({ ...base, cache: cfg({ allowTools: ['read'] }) })).toBe(false);
  });

  it('never caches MRTR retries', () => {
    expect(isCacheableCall({ ...base, annotations: { readOnlyHint: true }, isMrtrRetry: true })).toBe(false);
    expect(isCacheableCall({ ...base, cache: cfg({ allowTools: ['files.read'] }), isMrtrRetry: true })).toBe(
      false,
    );
  });

  it('never caches when the project cache is disabled', () => {
    expect(
      isCacheableCall({ ...base, cache: cfg({ enabled: false }), annotations: { readOnlyHint: true } }),
    ).toBe(false);
  });
});

describe('isCacheableResult', () => {
  it('accepts complete successes only', () => {
    expect(isCacheableResult(result('x'))).toBe(true);
    expect(isCacheableResult({ ...result('x'), isError: false })).toBe(true);
    expect(isCacheableResult({ ...result('x'), isError: true })).toBe(false);
    expect(isCacheableResult({ resultType: 'input_required', inputRequests: {} })).toBe(false);
    expect(isCacheableResult({ resultType: 'task', taskId: 't', status: 'working' })).toBe(false);
    expect(isCacheableResult({ content: [] })).toBe(false);
  });
});

describe('ResultCache', () => {
  it('returns what was stored, and undefined for unknown keys and projects', () => {
    const cache = new ResultCache();
    cache.set('acme', 'k1', result('one'), cfg());
    expect(cache.get('acme', 'k1')).toEqual(result('one'));
    expect(cache.get('acme', 'k2')).toBeUndefined();
    expect(cache.get('other', 'k1')).toBeUndefined();
  });

  it("never serves one caller's result to another caller", () => {
    const cache = new ResultCache();
    const alice = cacheKey(scope({ caller: { kind: 'apiKey', id: 'alice' } }));
    const bob = cacheKey(scope({ caller: { kind: 'apiKey', id: 'bob' } }));
    cache.set('acme', alice, result("alice's secret"), cfg());
    expect(cache.get('acme', bob)).toBeUndefined();
    cache.set('acme', bob, result("bob's data"), cfg());
    expect(cache.get('acme', alice)).toEqual(result("alice's secret"));
    expect(cache.get('acme', bob)).toEqual(result("bob's data"));
  });

  it('keeps projects apart even under the same key', () => {
    const cache = new ResultCache();
    cache.set('acme', 'k', result('acme'), cfg());
    cache.set('globex', 'k', result('globex'), cfg());
    expect(cache.get('acme', 'k')).toEqual(result('acme'));
    expect(cache.get('globex', 'k')).toEqual(result('globex'));
    cache.clearProject('acme');
    expect(cache.get('acme', 'k')).toBeUndefined();
    expect(cache.get('globex', 'k')).toEqual(result('globex'));
  });

  it('expires entries after ttlMs (injected clock)', () => {
    let now = 10_000;
    const cache = new ResultCache({ now: () => now });
    cache.set('acme', 'k', result('v'), cfg({ ttlMs: 500 }));
    now += 499;
    expect(cache.get('acme', 'k')).toEqual(result('v'));
    now += 1;
    expect(cache.get('acme', 'k')).toBeUndefined();
    expect(cache.stats('acme')).toEqual({ entries: 0, bytes: 0, hits: 1, misses: 1 });
  });

  it('takes the TTL from the config given at set time', () => {
    let now = 0;
    const cache = new ResultCache({ now: () => now });
    cache.set('acme', 'short', result('s'), cfg({ ttlMs: 100 }));
    cache.set('acme', 'long', result('l'), cfg({ ttlMs: 1000 }));
    now = 100;
    expect(cache.get('acme', 'short')).toBeUndefined();
    expect(cache.get('acme', 'long')).toEqual(result('l'));
  });

  it('returns deep copies: callers cannot change the cached entry', () => {
    const cache = new ResultCache();
    const original = {
      resultType: 'complete',
      content: [{ type: 'text', text: 'v' }],
      structuredContent: { n: 1 },
    };
    cache.set('acme', 'k', original, cfg());
    original.content[0]!.text = 'changed after set';
    const first = cache.get('acme', 'k')!;
    (first.content as { text: string }[])[0]!.text = 'changed after get';
    (first.structuredContent as { n: number }).n = 2;
    const second = cache.get('acme', 'k');
    expect(second).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'v' }],
      structuredContent: { n: 1 },
    });
    expect(second).not.toBe(first);
  });

  it('evicts the least recently used entry when maxEntries is reached', () => {
    const cache = new ResultCache();
    const c = cfg({ maxEntries: 2 });
    cache.set('acme', 'a', result('a'), c);
    cache.set('acme', 'b', result('b'), c);
    expect(cache.get('acme', 'a')).toBeDefined(); // a is now more recent than b
    cache.set('acme', 'c', result('c'), c);
    expect(cache.get('acme', 'b')).toBeUndefined();
    expect(cache.get('acme', 'a')).toEqual(result('a'));
    expect(cache.get('acme', 'c')).toEqual(result('c'));
    expect(cache.stats('acme').entries).toBe(2);
  });

  it('evicts least recently used entries until the bytes fit maxBytes', () => {
    const cache = new ResultCache();
    const size = Buffer.byteLength(JSON.stringify(result('aaaa')));
    const c = cfg({ maxBytes: size * 3 });
    cache.set('acme', 'a', result('aaaa'), c);
    cache.set('acme', 'b', result('bbbb'), c);
    cache.set('acme', 'c', result('cccc'), c);
    expect(cache.stats('acme').bytes).toBe(size * 3);
    const double = result('d'.repeat(4 + size)); // exactly two entries' worth
    expect(Buffer.byteLength(JSON.stringify(double))).toBe(size * 2);
    cache.set('acme', 'd', double, c);
    expect(cache.get('acme', 'a')).toBeUndefined();
    expect(cache.get('acme', 'b')).toBeUndefined();
    expect(cache.get('acme', 'c')).toEqual(result('cccc'));
    expect(cache.get('acme', 'd')).toEqual(double);
    expect(cache.stats('acme')).toMatchObject({ entries: 2, bytes: size * 3 });
  });

  it('does not store an entry larger than maxBytes, and drops the older entry under that key', () => {
    const cache = new ResultCache();
    const c = cfg({ maxBytes: 100 });
    cache.set('acme', 'k', result('small'), c);
    cache.set('acme', 'other', result('kept'), c);
    cache.set('acme', 'k', result('x'.repeat(200)), c);
    expect(cache.get('acme', 'k')).toBeUndefined();
    expect(cache.get('acme', 'other')).toEqual(result('kept'));
    expect(cache.stats('acme').entries).toBe(1);
  });

  it('evicts expired entries before live ones when room is needed', () => {
    let now = 0;
    const cache = new ResultCache({ now: () => now });
    cache.set('acme', 'live', result('2'), cfg({ maxEntries: 2, ttlMs: 1000 })); // least recently used
    cache.set('acme', 'old-short', result('1'), cfg({ maxEntries: 2, ttlMs: 10 }));
    now = 20;
    cache.set('acme', 'new', result('3'), cfg({ maxEntries: 2, ttlMs: 1000 }));
    expect(cache.get('acme', 'live')).toEqual(result('2'));
    expect(cache.get('acme', 'new')).toEqual(result('3'));
  });

  it('finds an entry that expires sooner than those before it, after a sweep found nothing', () => {
    let now = 0;
    const cache = new ResultCache({ now: () => now });
    const long = cfg({ maxEntries: 2, ttlMs: 1000 });
    cache.set('acme', 'a', result('a'), long);
    cache.set('acme', 'b', result('b'), long);
    now = 5;
    cache.set('acme', 'short', result('s'), cfg({ maxEntries: 2, ttlMs: 10 })); // full: a goes (LRU)
    now = 20;
    cache.set('acme', 'c', result('c'), long); // full: the expired `short` goes, not `b`
    expect(cache.get('acme', 'a')).toBeUndefined();
    expect(cache.get('acme', 'b')).toEqual(result('b'));
    expect(cache.get('acme', 'c')).toEqual(result('c'));
  });

  it('replacing a key updates bytes and does not count twice', () => {
    const cache = new ResultCache();
    cache.set('acme', 'k', result('first'), cfg());
    cache.set('acme', 'k', result('second!'), cfg());
    expect(cache.stats('acme')).toEqual({
      entries: 1,
      bytes: Buffer.byteLength(JSON.stringify(result('second!'))),
      hits: 0,
      misses: 0,
    });
    expect(cache.get('acme', 'k')).toEqual(result('second!'));
  });

  it('counts hits and misses per project and sums them without a project', () => {
    const cache = new ResultCache();
    cache.set('acme', 'k', result('v'), cfg());
    cache.set('globex', 'k', result('w'), cfg());
    cache.get('acme', 'k');
    cache.get('acme', 'k');
    cache.get('acme', 'nope');
    cache.get('globex', 'nope');
    expect(cache.stats('acme')).toMatchObject({ entries: 1, hits: 2, misses: 1 });
    expect(cache.stats('globex')).toMatchObject({ entries: 1, hits: 0, misses: 1 });
    expect(cache.stats()).toMatchObject({ entries: 2, hits: 2, misses: 2 });
    expect(cache.stats('unknown')).toEqual({ entries: 0, bytes: 0, hits: 0, misses: 0 });
  });
});
