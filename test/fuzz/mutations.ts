/**
 * The mutations of the hostile-input test (see requests.ts): for each kind of valid request, the ways to
 * break it that the spec says must be refused before any work (with, most of the time, the request left
 * valid), and the generated case that pairs the two.
 */
import fc from 'fast-check';
import type { Base, Mutation } from './requests';
import { legacyBase, legacyInit, modernBase, printable } from './valid-requests';

/** A parameter the spec types, given a value of another type. */
const paramType: fc.Arbitrary<Mutation> = fc
  .record({ raw: fc.constantFrom<unknown>(42, true, ['x'], null, 1.5), pick: fc.nat(5) })
  .map(({ raw, pick }): Mutation => ({ kind: 'param-type', raw, pick }));

const frameMutations: fc.Arbitrary<Mutation>[] = [
  fc.double({ min: 0, max: 0.999, noNaN: true }).map((cut): Mutation => ({ kind: 'bad-json', cut })),
  fc
    .constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80])
    .map((bytes): Mutation => ({ kind: 'invalid-utf8', bytes: [...bytes] })),
  fc
    .constantFrom('text/plain', '', 'application/x-www-form-urlencoded', 'application/jsonp')
    .map((value): Mutation => ({ kind: 'content-type', value })),
  fc
    .constantFrom('frame' as const, 'meta' as const)
    .map((where): Mutation => ({ kind: 'duplicate-member', where })),
  fc.constantFrom('gzip', 'deflate', 'br').map((value): Mutation => ({ kind: 'content-encoding', value })),
  fc.constant<Mutation>({ kind: 'too-large' }),
  fc
    .record({ where: fc.constantFrom('meta' as const, 'params' as const), broken: fc.boolean() })
    .map(({ where, broken }): Mutation => ({ kind: 'many-members', where, broken })),
  fc.boolean().map((broken): Mutation => ({ kind: 'many-keys', broken })),
  fc.boolean().map((broken): Mutation => ({ kind: 'many-containers', broken })),
];

const modernMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ kind: 'valid' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'valid-large' as const }) },
  ...frameMutations.map((arbitrary) => ({ weight: 3, arbitrary })),
  {
    weight: 3,
    arbitrary: fc
      .constantFrom('[REQ]', '42', '"x"', 'null', 'true')
      .map((raw) => ({ kind: 'not-an-object' as const, raw })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(undefined, '"1.0"', '2', 'null')
      .map((raw) => ({ kind: 'bad-jsonrpc' as const, raw })),
  },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom('{}', '[]', 'true', '1.5', '1e300', '9007199254740993', 'null')
      .map((raw) => ({ kind: 'bad-id' as const, raw })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'extra-member' as const }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('42', '""', '{}').map((raw) => ({ kind: 'bad-method' as const, raw })),
  },
  {
    weight: 4,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          'ping',
          'initialize',
          'logging/setLevel',
          'resources/subscribe',
          'resources/unsubscribe',
          'tasks/list',
          'tasks/result',
          'tools/destroy',
          'notifications/initialized',
        ),
        printable.map((s) => `x/${s}`),
      )
      .map((method) => ({ kind: 'unknown-method' as const, method })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('[]', '"x"', '5').map((raw) => ({ kind: 'bad-params' as const, raw })),
  },
  {
    weight: 4,
    arbitrary: fc.integer({ min: 0, max: 4 }).map((variant) => ({ kind: 'no-meta' as const, variant })),
  },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc
        .constantFrom<unknown>({}, true, 1.5, [1])
        .map((raw) => ({ kind: 'bad-meta-type' as const, field: 'progressToken' as const, raw })),
      fc
        .constantFrom<unknown>('loud', 3, 'INFO')
        .map((raw) => ({ kind: 'bad-meta-type' as const, field: 'logLevel' as const, raw })),
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('1900-01-01', '2025-11-25', '2026-07-29', 'latest')
      .map((version) => ({ kind: 'unsupported-version' as const, version })),
  },
  {
    weight: 6,
    arbitrary: fc
      .record({
        which: fc.constantFrom('version' as const, 'method' as const, 'name' as const),
        how: fc.constantFrom('missing' as const, 'other' as const, 'invalid' as const),
      })
      .map((h) => ({ kind: 'header' as const, ...h })),
  },
  { weight: 3, arbitrary: paramType },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('missing' as const, 'other' as const)
      .map((how) => ({ kind: 'param-header' as const, how })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'tasks-undeclared' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'too-deep' as const }) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('GET', 'PUT', 'PATCH', 'DELETE')
      .map((method) => ({ kind: 'http-method' as const, method })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'below-endpoint' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'foreign-origin' as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'notification' as const }) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constant<Mutation>({ kind: 'listen', how: 'json-only' }),
      fc
        .constantFrom<unknown>(
          'garbage',
          42,
          [],
          { taskIds: 'trt_x' },
          { taskIds: [1, 2] },
          { toolsListChanged: 'yes' },
          { resourceSubscriptions: [{ uri: 'test://static-text' }] },
          { taskIds: ['x'.repeat(201)] },
        )
        .map((filter): Mutation => ({ kind: 'listen', how: 'bad-filter', filter })),
    ),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'unknown-project' as const }) },
  {
    weight: 1,
    arbitrary: fc
      .option(printable, { nil: undefined })
      .map((t) => ({ kind: 'locked' as const, token: t === undefined ? undefined : `trp_${t}` })),
  },
);

const legacyMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: 'valid' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'valid-large' as const }) },
  ...frameMutations.map((arbitrary) => ({ weight: 1, arbitrary })),
  {
    weight: 3,
    arbitrary: fc
      .oneof(printable, fc.constant(''))
      .map((id) => ({ kind: 'bad-session' as const, id: `s-${id}` })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('2024-11-05', '2026-07-28', 'garbage')
      .map((version) => ({ kind: 'bad-version-header' as const, version })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'not-an-object' as const, raw: '[REQ]' }) },
  { weight: 2, arbitrary: paramType },
);

const initMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ kind: 'valid' as const }) },
  ...frameMutations.map((arbitrary) => ({ weight: 1, arbitrary })),
  {
    weight: 3,
    arbitrary: fc
      .constantFrom('2024-11-05', '1.0', '2026-07-28', '', '2025-11-26')
      .map((version) => ({ kind: 'init-version' as const, version })),
  },
  { weight: 3, arbitrary: paramType },
  { weight: 1, arbitrary: fc.constant({ kind: 'not-an-object' as const, raw: '[REQ]' }) },
);

/** One generated case before rendering: the valid request and its mutation. */
export const caseArbitrary: fc.Arbitrary<{ base: Base; mutation: Mutation }> = fc.oneof(
  { weight: 16, arbitrary: fc.record({ base: modernBase, mutation: modernMutation }) },
  { weight: 4, arbitrary: fc.record({ base: legacyBase, mutation: legacyMutation }) },
  { weight: 1, arbitrary: fc.record({ base: legacyInit, mutation: initMutation }) },
);
