/** Users, the caller's own profile (store: users.ts). */
import { z } from 'zod';
import { defineOperation, ok, ref, userRef } from './define';

export const USER_OPERATIONS = [
  defineOperation({
    name: 'me.show',
    who: 'any',
    audit: 'none',
    input: z.object({}),
    run: async (_input, { cp, actor }) =>
      actor.kind === 'admin'
        ? { kind: 'admin' as const }
        : { kind: 'user' as const, user: await cp.getUser(actor, userRef(actor, 'me')) },
    http: { method: 'GET', path: '/me' },
  }),
  defineOperation({
    name: 'user.list',
    who: 'admin',
    audit: 'none',
    input: z.object({}),
    run: (_input, { cp, actor }) => cp.listUsers(actor),
    http: { method: 'GET', path: '/users', reply: (users) => ok({ users }) },
    cli: { command: 'user list' },
  }),
  defineOperation({
    name: 'user.create',
    who: 'admin',
    audit: 'user.created',
    input: z.strictObject({ handle: z.string(), name: z.string() }),
    run: (input, { cp, actor }) => cp.createUser(actor, input),
    http: { method: 'POST', path: '/users', status: 201 },
    cli: {
      command: 'user create',
      flags: { name: { required: false } },
      defaults: (input) => ({ name: input.name ?? input.handle }),
    },
  }),
  defineOperation({
    name: 'user.show',
    who: 'admin, self',
    audit: 'none',
    input: z.object({ user: ref }),
    run: ({ user }, { cp, actor }) => cp.getUser(actor, userRef(actor, user)),
    http: { method: 'GET', path: '/users/:user' },
    cli: { command: 'user show' },
  }),
  defineOperation({
    name: 'user.update',
    who: 'admin, self',
    audit: 'user.updated',
    input: z.strictObject({ user: ref, name: z.string().optional() }),
    run: async ({ user, ...patch }, { cp, actor }) =>
      (await cp.updateUser(actor, userRef(actor, user), patch)).record,
    http: { method: 'PATCH', path: '/users/:user' },
  }),
];
