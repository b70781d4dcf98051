/**
 * The table of admin operations itself (src/api/admin/operations): names, routes and commands are unique,
 * every route's `:name` and every flag override names an input key, and the CLI's usage text names every
 * command and every flag its parser accepts (both are derived from the table, so they cannot drift).
 */
import { ADMIN_OPERATIONS } from '../../../src/api/admin/operations';
import { UsageError } from '../../../src/api/admin/operations/cli-flags';
import { adminRoutes, pathNames } from '../../../src/api/admin/operations/http';
import { COMMANDS, USAGE } from '../../../src/main/admin-cli';
import { runCommand } from '../../../src/main/admin-cli-commands';
import { restAnswer } from '../../../src/api/rest-errors';
import type { ControlPlaneStore } from '../../../src/store/control-plane';
import type { Principal } from '../../../src/store/control-plane/types';

const duplicates = (values: string[]) => values.filter((v, i) => values.indexOf(v) !== i);
const keysOf = (op: (typeof ADMIN_OPERATIONS)[number]) => Object.keys(op.input.shape);

test('every operation has a unique name, says who may call it and what it audits', () => {
  expect(ADMIN_OPERATIONS.length).toBeGreaterThan(30);
  expect(duplicates(ADMIN_OPERATIONS.map((op) => op.name))).toEqual([]);
  for (const op of ADMIN_OPERATIONS) {
    expect(op.name).toMatch(/^[a-zA-Z]+\.[a-zA-Z]+$/);
    expect(op.who).not.toBe('');
    expect(op.audit).not.toBe('');
    expect(op.http ?? op.cli).toBeDefined();
  }
});

test('every HTTP binding is a unique (method, path) whose parameters are input keys', () => {
  const bound = ADMIN_OPERATIONS.filter((op) => op.http);
  expect(duplicates(bound.map((op) => `${op.http!.method} ${op.http!.path}`))).toEqual([]);
  for (const op of bound) {
    for (const name of pathNames(op.http!.path)) expect(keysOf(op)).toContain(name);
    if (op.http!.bodyKey !== undefined) expect(keysOf(op)).toContain(op.http!.bodyKey);
  }
  // The admin API serves exactly these routes.
  expect(adminRoutes(ADMIN_OPERATIONS).map((r) => `${r.method} ${r.path}`)).toEqual(
    bound.map((op) => `${op.http!.method} ${op.http!.path}`),
  );
});

test('every CLI command is unique, its overrides name input keys, no flag fills two keys', () => {
  const bound = ADMIN_OPERATIONS.filter((op) => op.cli);
  expect(duplicates(bound.map((op) => op.cli!.command))).toEqual([]);
  expect(COMMANDS.map((c) => c.command)).toEqual(bound.map((op) => op.cli!.command));
  for (const op of bound) {
    const cli = op.cli!;
    for (const key of Object.keys(cli.flags ?? {})) expect(keysOf(op)).toContain(key);
    for (const key of [...(cli.omit ?? []), ...(cli.groups ?? []).flatMap((g) => g.keys)])
      expect(keysOf(op)).toContain(key);
    if (cli.positional) expect(keysOf(op)).toContain(cli.positional.key);
  }
  for (const c of COMMANDS) expect(duplicates(c.flags.map((f) => f.flag))).toEqual([]);
});

test('the usage text names every command and every flag the parser accepts', () => {
  for (const c of COMMANDS) {
    expect(USAGE).toContain(`  ${c.command}`);
    for (const flag of c.known) expect(USAGE).toMatch(new RegExp(`--${flag}\\b`));
  }
  // Commands as docs/admin.md shows them.
  for (const line of [
    'team create --slug S [--name N]',
    'token revoke --id TOKEN_ID',
    'key revoke --project P --id KEY_ID',
    'authorization grant --project P --upstream A --user U',
    'audit [--project P] [--limit N] [--before ID]',
    'approvals deny ID --comment C',
    'approval-policy set P --file F | --policy JSON',
    'retention run --kind payloads|metadata',
    'bootstrap --file F',
  ])
    expect(USAGE).toContain(line);
});

describe('the CLI reads the table before it touches the store', () => {
  // Every case below is refused while reading the command line: the store is never reached.
  const ctx = { cp: {} as ControlPlaneStore, deps: {}, env: {} };
  const fails = (...args: string[]) => runCommand(COMMANDS, args, ctx);

  test('unknown commands and flags, and flags of another command, are usage errors', async () => {
    await expect(fails('frobnicate')).rejects.toThrow(new UsageError('Unknown command "frobnicate"'));
    await expect(fails('project', 'update', '--project', 'p', '--namspacing', 'off')).rejects.toThrow(
      /Unknown option '--namspacing'/,
    );
    await expect(fails('team', 'create', '--slug', 's', '--url', 'x')).rejects.toThrow(
      /Unknown option '--url'/,
    );
  });

  test('required flags and the one argument are asked for by name', async () => {
    await expect(fails('project', 'show')).rejects.toThrow('--project is required');
    await expect(fails('token', 'revoke')).rejects.toThrow('--id is required');
    await expect(fails('authorization', 'revoke', '--project', 'p', '--upstream', 'a')).rejects.toThrow(
      '--user is required',
    );
    await expect(fails('approvals', 'show')).rejects.toThrow('approvals show: which approval request?');
    await expect(fails('approvals', 'deny', 'apr_1')).rejects.toThrow('--comment is required');
  });

  test("a value the operation's schema refuses is a usage error naming the flag", async () => {
    const refused = fails('approvals', 'list', '--status', 'maybe');
    await expect(refused).rejects.toBeInstanceOf(UsageError);
    await expect(fails('approvals', 'list', '--status', 'maybe')).rejects.toThrow(
      '--status must be one of pending, approved, denied, expired, withdrawn',
    );
    await expect(fails('audit', '--limit', 'ten')).rejects.toThrow('--limit must be a number');
    await expect(fails('retention', 'run', '--kind', 'all')).rejects.toThrow(
      '--kind must be "payloads" or "metadata"',
    );
    await expect(fails('project', 'update', '--project', 'p', '--tasks', 'maybe')).rejects.toThrow(
      '--tasks must be on or off',
    );
  });
});

describe('the admin API reads the table before it touches the store', () => {
  const routes = adminRoutes(ADMIN_OPERATIONS);
  const route = (method: string, path: string) => routes.find((r) => r.method === method && r.path === path)!;
  const admin = { kind: 'admin', via: 'api' } as const;
  const request = (body: Record<string, unknown>, params: string[] = [], actor: Principal = admin) => ({
    actor,
    params,
    body,
    query: new URLSearchParams(),
  });
  const answer = async (reply: Promise<unknown>) => restAnswer(await reply.catch((err: unknown) => err));
  const cp = {} as ControlPlaneStore;

  test('a body field of the wrong type is a 400 invalid naming the field', async () => {
    expect(await answer(route('POST', '/teams').handler(cp, request({ slug: 5, name: 'x' }), {}))).toEqual({
      status: 400,
      code: 'invalid',
      message: expect.stringMatching(/expected string, received number\n {2}→ at slug/),
    });
    expect(
      await answer(route('POST', '/teams').handler(cp, request({ slug: 's', name: 'x', extra: 1 }), {})),
    ).toEqual({
      status: 400,
      code: 'invalid',
      message: expect.stringContaining('Unrecognized key: "extra"'),
    });
    expect(
      await answer(route('POST', '/teams/:team/members').handler(cp, request({ user: 5 }, ['core']), {})),
    ).toEqual({ status: 400, code: 'invalid', message: '"user" must be a non-empty string' });
    expect(
      await answer(route('PATCH', '/teams/:team').handler(cp, request({ team: 'other' }, ['core']), {})),
    ).toMatchObject({ status: 400, code: 'invalid' });
  });

  test('admin-only operations refuse others before reading the input', async () => {
    const alice: Principal = { kind: 'user', userId: 'usr_1' };
    expect(
      await answer(route('POST', '/retention/run').handler(cp, request({ kind: 5 }, [], alice), {})),
    ).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'Only the administrator runs retention',
    });
    expect(await answer(route('POST', '/retention/run').handler(cp, request({ kind: 'all' }), {}))).toEqual({
      status: 400,
      code: 'invalid',
      message: '"kind" must be "payloads" or "metadata"',
    });
    expect(
      await answer(route('POST', '/retention/run').handler(cp, request({ kind: 'payloads' }), {})),
    ).toEqual({
      status: 503,
      code: 'invalid',
      message: 'Retention is not available here',
    });
  });
});
