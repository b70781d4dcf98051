/**
 * The admin CLI's commands, derived from the table of admin operations (src/api/admin/operations): each
 * operation with a CLI binding is a command (`noun verb`), its flags are its input's keys in kebab-case
 * (read as text, `on|off` for a boolean, JSON for an object, unless the entry says otherwise), and the
 * usage text is written from the same entries, so the parser accepts exactly the flags the usage names.
 */
import { z } from 'zod';
import type { AdminOperation, OperationDeps } from '../api/admin/operations';
import { json, need, onOff, parseFlags, UsageError } from '../api/admin/operations/cli-flags';
import type { CliBinding, FlagGroup, FlagKind, Flags } from '../api/admin/operations/define';
import { readInput } from '../api/admin/operations/define';
import { InvalidInput } from '../api/rest-errors';
import type { ControlPlaneStore } from '../store/control-plane';
import { ControlPlaneError } from '../store/control-plane';
import type { Principal } from '../store/control-plane/types';

/** One flag of a command: which input key it fills and how it is read. */
export interface FlagSpec {
  key: string;
  flag: string;
  kind: FlagKind;
  meta: string;
  required: boolean;
  help: readonly string[];
  to?: (value: unknown) => unknown;
}

export interface Command {
  command: string;
  operation: AdminOperation;
  binding: CliBinding<Record<string, unknown>, unknown>;
  flags: FlagSpec[];
  groups: readonly FlagGroup[];
  /** Every flag the parser accepts for this command. */
  known: string[];
}

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The schema inside optional / nullable / default wrappers. */
function core(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault)
    s = s.unwrap() as z.ZodType;
  return s;
}

function kindOf(schema: z.ZodType): FlagKind {
  const s = core(schema);
  if (s instanceof z.ZodBoolean) return 'onOff';
  if (s instanceof z.ZodRecord || s instanceof z.ZodObject) return 'json';
  return 'string';
}

function metaOf(key: string, schema: z.ZodType, kind: FlagKind): string {
  const s = core(schema);
  if (s instanceof z.ZodEnum) return (s.options as string[]).join('|');
  if (kind === 'onOff') return 'on|off';
  if (kind !== 'string') return 'JSON';
  return key === 'limit' ? 'N' : key.charAt(0).toUpperCase();
}

function commandOf(operation: AdminOperation): Command | undefined {
  const binding = operation.cli;
  if (!binding) return undefined;
  const groups = binding.groups ?? [];
  const skipped = new Set<string>([
    ...(binding.omit ?? []),
    ...groups.flatMap((g) => g.keys),
    ...(binding.positional ? [binding.positional.key] : []),
  ]);
  const shape = operation.input.shape as Record<string, z.ZodType>;
  const flags = Object.entries(shape)
    .filter(([key]) => !skipped.has(key))
    .map(([key, schema]): FlagSpec => {
      const o = binding.flags?.[key] ?? {};
      const kind = o.kind ?? kindOf(schema);
      return {
        key,
        flag: o.flag ?? kebab(key),
        kind,
        meta: o.meta ?? metaOf(key, schema, kind),
        required: o.required ?? !schema.safeParse(undefined).success,
        help: o.help ?? [],
        ...(o.to && { to: o.to }),
      };
    });
  const known = [...new Set([...flags.map((f) => f.flag), ...groups.flatMap((g) => g.flags)])];
  return { command: binding.command, operation, binding, flags, groups, known };
}

export function cliCommands(operations: readonly AdminOperation[]): Command[] {
  return operations.map(commandOf).filter((c): c is Command => c !== undefined);
}

/** `team create --slug S [--name N]`: one command's line. */
export function synopsis(c: Command): string {
  const b = c.binding;
  const parts = [c.command, ...(b.positional ? [b.positional.meta] : [])];
  if (b.synopsis !== undefined) parts.push(b.synopsis);
  for (const f of c.flags) parts.push(f.required ? `--${f.flag} ${f.meta}` : `[--${f.flag} ${f.meta}]`);
  for (const g of c.groups) parts.push(g.label);
  return parts.join(' ') + (b.note ? `   ${b.note}` : '');
}

/** A line past 100 columns continues on the next, indented, before one of its optional flags. */
function wrap(line: string): string {
  if (line.length <= 100) return line;
  const cut = line.lastIndexOf(' [', 100);
  return cut <= 0 ? line : `${line.slice(0, cut)}\n${wrap(`        ${line.slice(cut + 1)}`)}`;
}

export function usageText(commands: readonly Command[]): string {
  const lines = commands.map((c) => wrap(`  ${synopsis(c)}`));
  const foot = [
    ...new Set(
      commands.flatMap((c) => [...c.flags.flatMap((f) => f.help), ...c.groups.flatMap((g) => g.help)]),
    ),
  ];
  return `usage: taskrouter admin <command> [--flag value ...]\n\n${lines.join('\n')}\n\n${foot
    .map((l) => `  ${l}`)
    .join('\n')}\n`;
}

function readFlag(flags: Flags, f: FlagSpec): unknown {
  switch (f.kind) {
    case 'onOff':
      return onOff(flags, f.flag);
    case 'json':
      return json(flags, f.flag);
    case 'jsonOrOff':
      return flags.get(f.flag) === 'off' ? null : json(flags, f.flag);
    default:
      return flags.get(f.flag);
  }
}

const defined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * A rejected input: where the operation worded the check for people (`"status" must be one of …`) it is
 * a usage error naming the flag (exit 2); otherwise it is the `invalid` the store would have said (exit 1).
 */
function cliInputError(c: Command, err: InvalidInput): Error {
  const worded = /^"(\w+)"/.exec(err.message);
  if (!worded) return new ControlPlaneError('invalid', err.message);
  const key = worded[1] as string;
  const flag = c.flags.find((f) => f.key === key)?.flag ?? kebab(key);
  return new UsageError(err.message.replace(/"(\w+)"/g, (m, k: string) => (k === key ? `--${flag}` : m)));
}

export interface CliContext {
  cp: ControlPlaneStore;
  deps: OperationDeps;
  env: NodeJS.ProcessEnv;
}

/** Runs one command line (`noun verb [ARG] [--flag value ...]`) as the administrator; returns what to print. */
export async function runCommand(
  commands: readonly Command[],
  args: string[],
  ctx: CliContext,
): Promise<unknown> {
  const [noun, verb] = args;
  if (noun === undefined || noun === 'help' || noun === '--help') throw new UsageError('');
  // `audit` and `bootstrap` have no verb.
  const alone = commands.find((c) => c.command === noun);
  const c = alone ?? commands.find((x) => x.command === `${noun} ${verb ?? ''}`);
  if (!c) throw new UsageError(`Unknown command "${args.join(' ')}"`);
  let rest = args.slice(alone ? 1 : 2);
  const input: Record<string, unknown> = {};
  const positional = c.binding.positional;
  // The request or project is the one argument before the flags.
  if (positional && rest[0] !== undefined && !rest[0].startsWith('--')) {
    input[positional.key] = rest[0];
    rest = rest.slice(1);
  }
  const flags = parseFlags(rest, c.known);
  if (positional && (input[positional.key] === undefined || input[positional.key] === ''))
    throw new UsageError(`${c.command}: which ${positional.what}?`);
  for (const f of c.flags) if (f.required) need(flags, f.flag);
  const actor: Principal = { kind: 'admin', via: 'cli' };
  for (const f of c.flags) {
    const value = readFlag(flags, f);
    input[f.key] = value !== undefined && f.to ? f.to(value) : value;
  }
  for (const g of c.groups)
    Object.assign(input, defined(await g.read(flags, { actor, cp: ctx.cp, env: ctx.env })));
  Object.assign(input, defined(c.binding.defaults?.(defined(input)) ?? {}));
  c.operation.allow?.(actor);
  let parsed: Record<string, unknown>;
  try {
    parsed = readInput(c.operation.input, defined(input));
  } catch (err) {
    throw err instanceof InvalidInput ? cliInputError(c, err) : err;
  }
  const result = await c.operation.run(parsed, { actor, cp: ctx.cp, deps: ctx.deps });
  return c.binding.print ? c.binding.print(result, parsed) : result;
}
