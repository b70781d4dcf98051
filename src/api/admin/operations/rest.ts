/**
 * The REST and CLI conventions of a noun's operations, said once: a noun's collection path
 * (`/projects/:project/keys`) and its item parameter (`key`) give each of list, create, show, update,
 * remove and an action on an item its operation name (`key.list`), HTTP method and path, success status
 * (201 on create), list reply (`{ keys: [...] }`), CLI command (`key list`) and, for the reads,
 * `audit: 'none'`. A noun without an item parameter is one resource (a project's approval policy): its
 * show, update and remove act on its path. An operation that takes nothing but its path's parameters
 * (`key.list`: `project`) need not say its input.
 *
 * An entry still says who may call it (every entry, so that authorization is read where the operation
 * is), what it does, what else it takes, and the audit event of a write. Where an operation differs from the
 * convention the entry says so: `verb` names it otherwise (`token.issue` is a create, `key.revoke` a
 * remove), `http` and `cli` override parts of the derived bindings, and `cli: false` gives it no command.
 */
import type {
  ActorContext,
  AdminOperation,
  CliBinding,
  HttpBinding,
  Method,
  Operation,
  OperationContext,
} from './define';
import { z } from 'zod';
import { defineOperation, ok, ref } from './define';
import { pathNames } from './http';

export interface Noun {
  /** In operation names: `team` (`team.create`). */
  name: string;
  /** The list reply's key: `teams` (`{ teams: [...] }`); a noun that is listed has one. */
  plural?: string;
  /** The collection under `/v1/admin`, with the `:name` segments of its parents. */
  path: string;
  /** The item's path parameter (`/teams/:team`); none: the noun is one resource, at `path`. */
  item?: string;
  /** The CLI's noun where it is not `name` (`approvals`). */
  cli?: string;
}

/** `'/projects/:project/keys/:key'` → `'project' | 'key'`. */
type ParamsOf<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamsOf<Rest>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** The input of an operation that takes only its path's parameters. */
type PathInput<Names extends string> = z.ZodObject<Record<Names, typeof ref>, z.core.$strip>;

type CollectionParams<N extends Noun> = ParamsOf<N['path']>;
type ItemParams<N extends Noun> =
  CollectionParams<N> | (N extends { item: infer I extends string } ? I : never);

/** An entry of a noun's operation: everything but what the convention derives. */
export type NounEntry<S extends z.ZodObject, O, C> = Omit<
  Operation<S, O, C>,
  'name' | 'input' | 'audit' | 'http' | 'cli'
> & {
  /** What it takes (default: its path's parameters). */
  input?: S;
  /** The operation's verb, in its name and command, where it is not the convention's (`issue`). */
  verb?: string;
  /** The audit event (reads: `none` unless said). */
  audit?: string;
  /** Overrides of the derived HTTP binding. */
  http?: Partial<HttpBinding<O>>;
  /** Overrides of the derived CLI binding; `false`: no command. */
  cli?: Partial<CliBinding<z.output<S>, O>> | false;
};

type Built<S extends z.ZodObject, O, C> = AdminOperation & { typed: Operation<S, O, C> };

type Verb = 'list' | 'create' | 'show' | 'update' | 'remove' | 'action';

/**
 * Each verb's method, where it acts (the collection, the item, or the item's path followed by the
 * verb: `/approvals/:approval/approve`), and its success status where it is not 200.
 */
const CONVENTIONS: Record<Verb, { method: Method; on: 'collection' | 'item' | 'verb'; status?: number }> = {
  list: { method: 'GET', on: 'collection' },
  create: { method: 'POST', on: 'collection', status: 201 },
  show: { method: 'GET', on: 'item' },
  update: { method: 'PATCH', on: 'item' },
  remove: { method: 'DELETE', on: 'item' },
  action: { method: 'POST', on: 'verb' },
};

/** The path of one of the noun's items: `/teams/:team` (the noun's path where it is one resource). */
export function itemPath(noun: Noun): string {
  return noun.item === undefined ? noun.path : `${noun.path}/:${noun.item}`;
}

function pathOf(noun: Noun, verb: Verb, named: string): string {
  const { on } = CONVENTIONS[verb];
  if (on === 'collection') return noun.path;
  return on === 'item' ? itemPath(noun) : `${itemPath(noun)}/${named}`;
}

/** `{ teams: [...] }`: a list answers its items under the noun's plural. */
function listReply(noun: Noun) {
  const { plural } = noun;
  if (plural === undefined) throw new Error(`"${noun.name}" is listed but has no plural`);
  return (result: unknown) => ok({ [plural]: result });
}

function build<S extends z.ZodObject, O, C extends ActorContext>(
  noun: Noun,
  verb: Verb,
  entry: NounEntry<S, O, C>,
): Built<S, O, C> {
  const { method, status } = CONVENTIONS[verb];
  const { verb: named = verb, input, audit = 'none', http, cli, ...rest } = entry;
  const path = pathOf(noun, verb, named);
  return defineOperation<S, O, C>({
    ...rest,
    name: `${noun.name}.${named}`,
    input: input ?? (z.object(Object.fromEntries(pathNames(path).map((name) => [name, ref]))) as S),
    audit,
    http: {
      method,
      path,
      ...(status !== undefined && { status }),
      ...(verb === 'list' && { reply: listReply(noun) }),
      ...http,
    },
    ...(cli !== false && { cli: { command: `${noun.cli ?? noun.name} ${named}`, ...cli } }),
  });
}

/** A write says what it audits; an action, its verb (`approve`: `POST /approvals/:approval/approve`). */
type Write = { audit: string };
type Action = Write & { verb: string };

/** One verb of a noun: an entry (with what the verb asks for, `Extra`) in, the operation out. */
type VerbOf<Names extends string, Extra> = <
  O,
  C extends ActorContext = OperationContext,
  S extends z.ZodObject = PathInput<Names>,
>(
  entry: NounEntry<S, O, C> & Extra,
) => Built<S, O, C>;

function verbOf<Names extends string, Extra = unknown>(noun: Noun, verb: Verb): VerbOf<Names, Extra> {
  return (entry) => build(noun, verb, entry);
}

/** The conventional operations of a noun (see above); reads may leave `audit` out, writes may not. */
export function rest<const N extends Noun>(noun: N) {
  return {
    noun,
    list: verbOf<CollectionParams<N>>(noun, 'list'),
    show: verbOf<ItemParams<N>>(noun, 'show'),
    create: verbOf<CollectionParams<N>, Write>(noun, 'create'),
    update: verbOf<ItemParams<N>, Write>(noun, 'update'),
    remove: verbOf<ItemParams<N>, Write>(noun, 'remove'),
    action: verbOf<ItemParams<N>, Action>(noun, 'action'),
  };
}
