/** A project's API keys (store: api-keys.ts); a key is shown once, when created. */
import { z } from 'zod';
import { defineOperation, ok, ref } from './define';

export const KEY_OPERATIONS = [
  defineOperation({
    name: 'key.list',
    who: 'managers',
    audit: 'none',
    input: z.object({ project: ref }),
    run: ({ project }, { cp, actor }) => cp.listApiKeys(actor, project),
    http: { method: 'GET', path: '/projects/:project/keys', reply: (keys) => ok({ keys }) },
    cli: { command: 'key list' },
  }),
  defineOperation({
    name: 'key.create',
    who: 'managers',
    audit: 'api_key.created',
    input: z.strictObject({ project: ref, name: z.string() }),
    run: async ({ project, ...input }, { cp, actor }) => {
      const { key, record } = await cp.createApiKey(actor, project, input);
      return { ...record, key };
    },
    http: { method: 'POST', path: '/projects/:project/keys', status: 201 },
    cli: { command: 'key create' },
  }),
  defineOperation({
    name: 'key.revoke',
    who: 'managers',
    audit: 'api_key.revoked',
    input: z.object({ project: ref, key: ref }),
    run: ({ project, key }, { cp, actor }) => cp.revokeApiKey(actor, project, key),
    http: { method: 'DELETE', path: '/projects/:project/keys/:key' },
    cli: { command: 'key revoke', flags: { key: { flag: 'id', meta: 'KEY_ID' } } },
  }),
];
