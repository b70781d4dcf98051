/**
 * The byte pass that bounds a request's JSON shape before it is parsed, and the duplicate-name pass after
 * it (src/api/mcp/frame.ts): pure functions over text, checked against what JSON.parse makes of it.
 */
import fc from 'fast-check';
import { jsonShapeViolation, repeatedMember } from '../../src/api/mcp/frame';

const roomy = { maxDepth: 1000, maxMembers: 1e9, maxKeys: 1e9, maxContainers: 1e9 };
const bytes = (text: string) => Buffer.from(text, 'utf8');

/** What the pass must find, counted on the parsed value. */
function shapeOf(
  value: unknown,
  depth = 0,
): { depth: number; members: number; keys: number; containers: number } {
  if (value === null || typeof value !== 'object') return { depth, members: 0, keys: 0, containers: 0 };
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  const own = Array.isArray(value) ? 0 : children.length;
  const shape = { depth: depth + 1, members: own, keys: own, containers: 1 };
  for (const child of children) {
    const s = shapeOf(child, depth + 1);
    shape.depth = Math.max(shape.depth, s.depth);
    shape.members = Math.max(shape.members, s.members);
    shape.keys += s.keys;
    shape.containers += s.containers;
  }
  return shape;
}

test('each limit is found exactly at its bound, not one below', () => {
  const flat = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`;
  expect(jsonShapeViolation(bytes(flat(10)), { ...roomy, maxMembers: 10 })).toBeUndefined();
  expect(jsonShapeViolation(bytes(flat(11)), { ...roomy, maxMembers: 10 })).toEqual({
    limit: 'members',
    max: 10,
  });
  const spread = `[${Array.from({ length: 4 }, () => flat(3)).join(',')}]`;
  expect(jsonShapeViolation(bytes(spread), { ...roomy, maxMembers: 3, maxKeys: 12 })).toBeUndefined();
  expect(jsonShapeViolation(bytes(spread), { ...roomy, maxMembers: 3, maxKeys: 11 })).toEqual({
    limit: 'keys',
    max: 11,
  });
  const empties = `[${Array(9).fill('{}').join(',')}]`;
  expect(jsonShapeViolation(bytes(empties), { ...roomy, maxContainers: 10 })).toBeUndefined();
  expect(jsonShapeViolation(bytes(empties), { ...roomy, maxContainers: 9 })).toEqual({
    limit: 'containers',
    max: 9,
  });
  const deep = '['.repeat(5) + ']'.repeat(5);
  expect(jsonShapeViolation(bytes(deep), { ...roomy, maxDepth: 5 })).toBeUndefined();
  expect(jsonShapeViolation(bytes(deep), { ...roomy, maxDepth: 4 })).toEqual({ limit: 'depth', max: 4 });
});

test('strings are skipped: braces, colons, quotes and backslashes inside them count for nothing', () => {
  const text = String.raw`{"a:{[":"}]:,\"{:","b\\":"\\","c":"x\\\"y:{"}`;
  expect(JSON.parse(text)).toEqual({ 'a:{[': '}]:,"{:', 'b\\': '\\', c: 'x\\"y:{' });
  expect(
    jsonShapeViolation(bytes(text), { ...roomy, maxMembers: 3, maxKeys: 3, maxContainers: 1, maxDepth: 1 }),
  ).toBeUndefined();
  expect(jsonShapeViolation(bytes(text), { ...roomy, maxMembers: 2 })).toEqual({ limit: 'members', max: 2 });
});

test('members of an object are counted per object, across the arrays and objects nested in it', () => {
  // The outer object has 3 members; an inner object with 2 sits between them.
  const text = '{"a":1,"b":{"x":1,"y":[{"p":1}]},"c":3}';
  expect(jsonShapeViolation(bytes(text), { ...roomy, maxMembers: 3 })).toBeUndefined();
  expect(jsonShapeViolation(bytes(text), { ...roomy, maxMembers: 2 })).toEqual({ limit: 'members', max: 2 });
  expect(jsonShapeViolation(bytes(text), { ...roomy, maxKeys: 5 })).toEqual({ limit: 'keys', max: 5 });
});

test('malformed text is measured as far as it goes, never throws (the parser refuses it next)', () => {
  for (const text of ['', '"', '{"a', '}}}]]', '{"a":1,:::}', '"\\', '[[[', '\\"\\"']) {
    expect(() => jsonShapeViolation(bytes(text), { ...roomy, maxDepth: 2 })).not.toThrow();
  }
});

test('generated JSON: the pass agrees with the parsed value on every limit', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
      const text = JSON.stringify(value);
      const shape = shapeOf(value);
      const at = {
        maxDepth: Math.max(shape.depth, 1),
        maxMembers: Math.max(shape.members, 1),
        maxKeys: Math.max(shape.keys, 1),
        maxContainers: Math.max(shape.containers, 1),
      };
      expect(jsonShapeViolation(bytes(text), at)).toBeUndefined();
      if (shape.depth > 1)
        expect(jsonShapeViolation(bytes(text), { ...at, maxDepth: shape.depth - 1 })?.limit).toBe('depth');
      if (shape.members > 1)
        expect(jsonShapeViolation(bytes(text), { ...at, maxMembers: shape.members - 1 })?.limit).toMatch(
          /members|keys/,
        );
      if (shape.keys > 1)
        expect(jsonShapeViolation(bytes(text), { ...at, maxKeys: shape.keys - 1 })).toBeDefined();
      if (shape.containers > 1)
        expect(jsonShapeViolation(bytes(text), { ...at, maxContainers: shape.containers - 1 })).toBeDefined();
    }),
    { numRuns: 500 },
  );
});

test('repeated names: found after unescaping, in any object, and only within one object', () => {
  expect(repeatedMember('{"a":1,"a":2}')).toBe('a');
  expect(repeatedMember(String.raw`{"ab":1,"a\u0062":2}`)).toBe('ab');
  expect(repeatedMember(String.raw`{"x":"\"","y":{"k":"\\","k":1}}`)).toBe('k');
  expect(repeatedMember('{"a":{"k":1},"b":{"k":1},"k":[{"k":1},{"k":2}]}')).toBeUndefined();
  expect(repeatedMember(String.raw`{"a\\":1,"a":2,"q":"\\\"a\"","a\"":3}`)).toBeUndefined();
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
      // Stringified values never repeat a name.
      expect(repeatedMember(JSON.stringify(value))).toBeUndefined();
    }),
    { numRuns: 300 },
  );
});
