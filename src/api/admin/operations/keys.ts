/** A project's API keys (store: api-keys.ts); a key is shown once, when created. */
import { z } from 'zod';
import { ref } from './define';
import { rest } from './rest';

const keys = rest({ name: 'key', plural: 'keys', path: '/projects/:project/keys', item: 'key' });

export const KEY_OPERATIONS = [
  keys.list({
    who: 'managers',
    run: ({ project }, { cp, actor }) => cp.listApiKeys(actor, project),
  }),
  keys.create({
    who: 'managers',
    audit: 'api_key.created',
    input: z.strictObject({ project: ref, name: z.string() }),
    run: async ({ project, ...input }, { cp, actor }) => {
      const { key, record } = await cp.createApiKey(actor, project, input);
      return { ...record, key };
    },
  }),
  keys.remove({
    verb: 'revoke',
    who: 'managers',
    audit: 'api_key.revoked',
    run: ({ project, key }, { cp, actor }) => cp.revokeApiKey(actor, project, key),
    cli: { flags: { key: { flag: 'id', meta: 'KEY_ID' } } },
  }),
];
