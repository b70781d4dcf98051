/** Users, the caller's own profile (store: users.ts). */
import { z } from 'zod';
import { defineOperation, nameDefaultsTo, ref, userRef } from './define';
import { rest } from './rest';

const users = rest({ name: 'user', plural: 'users', path: '/users', item: 'user' });

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
  users.list({
    who: 'admin',
    run: (_input, { cp, actor }) => cp.listUsers(actor),
  }),
  users.create({
    who: 'admin',
    audit: 'user.created',
    input: z.strictObject({ handle: z.string(), name: z.string() }),
    run: (input, { cp, actor }) => cp.createUser(actor, input),
    cli: nameDefaultsTo('handle'),
  }),
  users.show({
    who: 'admin, self',
    run: ({ user }, { cp, actor }) => cp.getUser(actor, userRef(actor, user)),
  }),
  users.update({
    who: 'admin, self',
    audit: 'user.updated',
    input: z.strictObject({ user: ref, name: z.string().optional() }),
    run: async ({ user, ...patch }, { cp, actor }) =>
      (await cp.updateUser(actor, userRef(actor, user), patch)).record,
    cli: false,
  }),
];
