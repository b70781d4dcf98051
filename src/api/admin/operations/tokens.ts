/** Users' personal access tokens (store: user-tokens.ts); a token is shown once, when issued. */
import { z } from 'zod';
import { HttpError } from '../../rest-errors';
import { ref, userRef } from './define';
import { rest } from './rest';

const tokens = rest({ name: 'token', plural: 'tokens', path: '/users/:user/tokens', item: 'token' });

export const TOKEN_OPERATIONS = [
  tokens.list({
    who: 'admin, self',
    run: ({ user }, { cp, actor }) => cp.listUserTokens(actor, userRef(actor, user)),
  }),
  tokens.create({
    verb: 'issue',
    who: 'admin, self',
    audit: 'user.token_issued',
    input: z.strictObject({ user: ref, name: z.string(), expiresAt: z.string().optional() }),
    run: async ({ user, ...input }, { cp, actor }) => {
      const { token, record } = await cp.issueUserToken(actor, userRef(actor, user), input);
      return { ...record, token };
    },
    cli: { flags: { expiresAt: { meta: 'ISO' } } },
  }),
  tokens.remove({
    verb: 'revoke',
    who: 'admin, self',
    audit: 'user.token_revoked',
    // The CLI names the token alone; the API names its user too, and refuses a token not theirs.
    input: z.object({ user: ref.optional(), token: ref }),
    run: async ({ user, token }, { cp, actor }) => {
      if (user !== undefined) {
        const theirs = await cp.listUserTokens(actor, userRef(actor, user));
        if (!theirs.some((t) => t.id === token)) throw new HttpError('not_found', `No token "${token}"`);
      }
      return cp.revokeToken(actor, token);
    },
    cli: { omit: ['user'], flags: { token: { flag: 'id', meta: 'TOKEN_ID' } } },
  }),
];
