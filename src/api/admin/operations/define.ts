/**
 * How an admin operation is written down (issue 25): one entry per operation, from which the admin API's
 * routes (./http.ts), the CLI's commands and its usage text (src/main/admin-cli*.ts) are derived.
 *
 * An entry says what the operation takes (one zod object: path parameters, body or query, CLI flags,
 * merged), who may call it (for help and docs: the store keeps enforcing the roles table), what it does
 * (the handler, calling the control plane, the approval desk or the process's other ports), which audit
 * event the store writes for it, and how HTTP and the CLI reach it. The input schemas check shapes and
 * types; the store checks its own rules (slug formats, address policy, roles) as it always has. Most
 * entries are written through their noun's REST and CLI conventions (./rest.ts), which fill in the name,
 * the bindings, an input of only path parameters and a read's audit.
 */
import { z } from 'zod';
import type { ApprovalDesk } from '../../../gateway/tasks/approval-desk';
import type { ControlPlaneStore } from '../../../store/control-plane';
import type { Principal } from '../../../store/control-plane/types';
import type { Reply } from '../../route-table';
import { HttpError, InvalidInput } from '../../rest-errors';

/** What the process offers the operations beyond the control plane; each is absent where it cannot. */
export interface OperationDeps {
  /** Calls waiting for approval (docs/approvals.md); absent without a task engine. */
  approvals?: Pick<ApprovalDesk, 'list' | 'show' | 'decide'>;
  /** Triggers a retention schedule now (docs/retention.md); absent without a Temporal client. */
  runRetention?: (kind: 'payloads' | 'metadata') => Promise<unknown>;
  /** Starts (or joins) a project's deletion workflow; absent: the rows are deleted directly. */
  startProjectDeletion?: (projectId: string) => Promise<{ workflowId: string }>;
  /** Probes an upstream and records the outcome in its view; absent: views show the last probe. */
  probeUpstream?: (projectRef: string, alias: string) => Promise<void>;
  /** The tool names this process last read from an upstream (`hosting.unmatched` in views). */
  knownTools?: (upstreamId: string) => readonly string[] | undefined;
  /** Applies a bootstrap file (the CLI's `bootstrap --file F`). */
  bootstrap?: (file: string) => Promise<unknown>;
  logger?: { error(obj: object, msg: string): void };
}

/** What a handler is given: who acts, the control plane, and the process's ports. */
export interface OperationContext {
  actor: Principal;
  cp: ControlPlaneStore;
  deps: OperationDeps;
}

/** The least a handler is given: who acts. An entry may ask for less than OperationContext. */
export type ActorContext = Pick<OperationContext, 'actor'>;

/** The context of the operations that only reach the approval desk (shared with the dashboard). */
export type DeskContext = Pick<OperationContext, 'actor'> & { deps: Pick<OperationDeps, 'approvals'> };

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpBinding<O> {
  method: Method;
  /** Under `/v1/admin`, with `:name` segments that fill the input's keys of those names. */
  path: string;
  /** Status of a successful answer (default 200; an undefined result is 204). */
  status?: number;
  /** The whole request body goes under this key of the input (a body that is itself the value). */
  bodyKey?: string;
  /** How the result becomes the answer (default: the result as the body, with `status`). */
  reply?: (result: O) => Reply;
}

/** The flags' own parsed values (`--name value`), before they become the operation's input. */
export type Flags = Map<string, string>;

/** What a CLI reader may use besides the flags: the acting administrator, the store, the environment. */
export interface CliReadContext {
  actor: Principal;
  cp: ControlPlaneStore;
  env: NodeJS.ProcessEnv;
}

/** How a flag is read: text, `on|off`, JSON, or JSON with `off` for null. */
export type FlagKind = 'string' | 'onOff' | 'json' | 'jsonOrOff';

/** One input key's flag where it differs from what the schema says (the flag is the key in kebab-case). */
export interface FlagOverride {
  /** The flag's name (default: the key in kebab-case). */
  flag?: string;
  /** The placeholder in the usage text (default: from the schema). */
  meta?: string;
  kind?: FlagKind;
  /** Required on the command line although the input allows it to be absent (or the other way). */
  required?: boolean;
  /** Lines at the foot of the usage text explaining the flag's value. */
  help?: readonly string[];
  /** Turns the read value into the input's (e.g. `--tasks on` → `features: { tasks: true }`). */
  to?: (value: unknown) => unknown;
}

/**
 * Flags read together into input keys (an upstream's auth, a credential from the environment or a
 * file): the flags they accept, their lines in the usage text, and how they are read.
 */
export interface FlagGroup {
  /** `[auth]`, `<credential>`: how command lines name the group. */
  label: string;
  flags: readonly string[];
  /** The group's lines at the foot of the usage text (naming every flag; shared lines are shown once). */
  help: readonly string[];
  /** The input keys it fills, replacing their derived flags. */
  keys: readonly string[];
  read(flags: Flags, ctx: CliReadContext): Promise<Record<string, unknown>> | Record<string, unknown>;
}

export interface CliBinding<I, O> {
  /** `noun verb` (or a noun alone: `audit`, `bootstrap`). */
  command: string;
  /** The one argument before the flags fills this key (`approvals show ID`). */
  positional?: { key: string; meta: string; what: string };
  flags?: { [K in keyof I]?: FlagOverride };
  groups?: readonly FlagGroup[];
  /** Keys not read from flags (left to the handler or to `defaults`). */
  omit?: readonly (keyof I & string)[];
  /** Input derived from the other flags (`--name` defaults to `--slug`). */
  defaults?: (input: Partial<I>) => Partial<I>;
  /** The usage line's arguments where deriving them would not say it (alternatives). */
  synopsis?: string;
  /** A note after the usage line. */
  note?: string;
  /** What is printed (default: the result). */
  print?: (result: O, input: I) => unknown;
}

export interface Operation<S extends z.ZodObject = z.ZodObject, O = unknown, C = OperationContext> {
  /** `noun.verb`, unique. */
  name: string;
  /** Who may call it, as help and docs say it (the store enforces the roles table). */
  who: string;
  /** The audit event the store writes (documentation; `none` for reads). */
  audit: string;
  input: S;
  /**
   * A refusal answered before the input is read (the admin-only routes of the API); the store's roles
   * table covers everything else.
   */
  allow?: (actor: Principal) => void;
  run: (input: z.output<S>, ctx: C) => Promise<O>;
  http?: HttpBinding<O>;
  cli?: CliBinding<z.output<S>, O>;
}

/** An operation as the table holds it (its types erased). */
export interface AdminOperation {
  name: string;
  who: string;
  audit: string;
  input: z.ZodObject;
  allow?: (actor: Principal) => void;
  run: (input: Record<string, unknown>, ctx: OperationContext) => Promise<unknown>;
  http?: HttpBinding<unknown>;
  cli?: CliBinding<Record<string, unknown>, unknown>;
}

export function defineOperation<S extends z.ZodObject, O, C extends ActorContext = OperationContext>(
  op: Operation<S, O, C>,
): AdminOperation & { typed: Operation<S, O, C> } {
  return { ...(op as unknown as AdminOperation), typed: op };
}

/** Reads the operation's input; a rejected one is `InvalidInput` (400 `invalid`, or the CLI's error). */
export function readInput<S extends z.ZodObject>(schema: S, raw: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(raw);
  if (!result.success) throw new InvalidInput(result.error);
  return result.data;
}

/** Runs an operation on input not yet checked (the dashboard's shared operations). */
export async function invoke<S extends z.ZodObject, O, C extends ActorContext>(
  op: { typed: Operation<S, O, C> },
  raw: Record<string, unknown>,
  ctx: C,
): Promise<O> {
  op.typed.allow?.(ctx.actor);
  return op.typed.run(readInput(op.typed.input, raw), ctx);
}

// ------------------------------------------------------------------ input pieces

/** A path parameter or reference (slug, handle, id). */
export const ref = z.string();

/** A query string page: `limit` (at most `digits` digits) and `before`. */
export function limitSchema(digits: number) {
  return z
    .string()
    .regex(new RegExp(`^\\d{1,${digits}}$`), '"limit" must be a number')
    .transform(Number)
    .optional();
}

/** `me` names the calling user wherever a user is expected. */
export function userRef(actor: Principal, value: string): string {
  if (value !== 'me') return value;
  if (actor.kind !== 'user') throw new HttpError('invalid', 'The administrator is not a user');
  return actor.userId;
}

/** `--name` may be left out: the name is then `key`'s value (`team create --slug S [--name N]`). */
export function nameDefaultsTo<K extends string>(key: K) {
  return {
    flags: { name: { required: false } },
    defaults: (input: Partial<Record<K | 'name', string>>) => ({ name: input.name ?? input[key] }),
  };
}

/** A handler's reply helpers. */
export const ok = (body: unknown): Reply => ({ body });
/** 201 when the membership is new, 200 when it was already there. */
export const membership = (r: { changed: boolean; record: unknown }): Reply => ({
  status: r.changed ? 201 : 200,
  body: r.record,
});
