/** Users' personal access tokens (store: user-tokens.ts); a token is shown once, when issued. */
import { z } from 'zod';
import { HttpError } from '../../rest-errors';
import { defineOperation, ok, ref, userRef } from './define';

export const TOKEN_OPERATIONS = [
  defineOperation({
    name: 'token.list',
    who: 'admin, self',
    audit: 'none',
    input: z.object({ user: ref }),
    run: ({ user }, { cp, actor }) => cp.listUserTokens(actor, userRef(actor, user)),
    http: { method: 'GET', path: '/users/:user/tokens', reply: (tokens) => ok({ tokens }) },
    cli: { command: 'token list' },
  }),
  defineOperation({
    name: 'token.issue',
    who: 'admin, self',
    audit: 'user.token_issued',
    input: z.strictObject({ user: ref, name: z.string(), expiresAt: z.string().optional() }),
    run: async ({ user, ...input }, { cp, actor }) => {
      const { token, record } = await cp.issueUserToken(actor, userRef(actor, user), input);
      return { ...record, token };
    },
    http: { method: 'POST', path: '/users/:user/tokens', status: 201 },
    cli: { command: 'token issue', flags: { expiresAt: { meta: 'ISO' } } },
  }),
  defineOperation({
    name: 'token.revoke',
    who: 'admin, self',
    audit: 'user.token_revoked',
    // The CLI names the token alone; the API names its user too, and refuses a token not theirs.
    input: z.object({ user: ref.optional(), token: ref }),
    run: async ({ user, token }, { cp, actor }) => {
      if (user !== undefined) {
        const tokens = await cp.listUserTokens(actor, userRef(actor, user));
        if (!tokens.some((t) => t.id === token)) throw new HttpError('not_found', `No token "${token}"`);
      }
      return cp.revokeToken(actor, token);
    },
    http: { method: 'DELETE', path: '/users/:user/tokens/:token' },
    cli: { command: 'token revoke', omit: ['user'], flags: { token: { flag: 'id', meta: 'TOKEN_ID' } } },
  }),
];
