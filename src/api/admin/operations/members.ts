/**
 * The direct members of a team or project (store: memberships.ts), under its item: listed at
 * `GET /projects/:project/members`, added by `POST …/members` with `{ user }` (201 when new, 200 when
 * already there; CLI `project add-member`, which prints the membership) and removed at
 * `DELETE …/members/:user` (CLI `project remove-member`). The input is the parent's parameter and the
 * user; an entry says who may call it and what it does.
 */
import { z } from 'zod';
import type { OperationContext } from './define';
import { defineOperation, membership, ok, ref } from './define';
import type { Noun } from './rest';
import { itemPath } from './rest';

/** `"user" must be a non-empty string`: the member to add, named in the body. */
export const memberUser = z
  .string({ error: '"user" must be a non-empty string' })
  .min(1, '"user" must be a non-empty string');

interface MemberEntry<I, O> {
  who: string;
  run: (input: I, ctx: OperationContext) => Promise<O>;
}

export function members<K extends string>(parent: Noun & { item: K }) {
  const key = parent.item;
  const path = `${itemPath(parent)}/members`;
  const command = (verb: string) => `${parent.cli ?? parent.name} ${verb}`;
  return {
    list: <O>({ who, run }: MemberEntry<Record<K, string>, O>) =>
      defineOperation({
        name: `${parent.name}.members`,
        who,
        audit: 'none',
        input: z.object({ [key]: ref }),
        run: (input, ctx) => run(input as Record<K, string>, ctx),
        http: { method: 'GET', path, reply: (list) => ok({ members: list }) },
      }),
    add: <R>({ who, run }: MemberEntry<Record<K | 'user', string>, { changed: boolean; record: R }>) =>
      defineOperation({
        name: `${parent.name}.addMember`,
        who,
        audit: `${parent.name}.member_added`,
        input: z.object({ [key]: ref, user: memberUser }),
        run: (input, ctx) => run(input as Record<K | 'user', string>, ctx),
        http: { method: 'POST', path, reply: membership },
        cli: { command: command('add-member'), print: (r) => r.record },
      }),
    remove: ({ who, run }: MemberEntry<Record<K | 'user', string>, void>) =>
      defineOperation({
        name: `${parent.name}.removeMember`,
        who,
        audit: `${parent.name}.member_removed`,
        input: z.object({ [key]: ref, user: ref }),
        run: (input, ctx) => run(input as Record<K | 'user', string>, ctx),
        http: { method: 'DELETE', path: `${path}/:user` },
        cli: { command: command('remove-member'), print: () => ({ removed: true }) },
      }),
  };
}
