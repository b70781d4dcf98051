/** The administrator's maintenance: a retention purge now (docs/retention.md), a bootstrap file applied. */
import { z } from 'zod';
import { HttpError } from '../../rest-errors';
import { defineOperation } from './define';

export const MAINTENANCE_OPERATIONS = [
  defineOperation({
    name: 'retention.run',
    who: 'admin',
    audit: 'none (the retention workflow runs)',
    input: z.strictObject({
      kind: z.enum(['payloads', 'metadata'], { error: '"kind" must be "payloads" or "metadata"' }),
    }),
    allow: (actor) => {
      if (actor.kind !== 'admin') throw new HttpError('forbidden', 'Only the administrator runs retention');
    },
    run: ({ kind }, { deps }) => {
      if (!deps.runRetention) throw new HttpError('invalid', 'Retention is not available here', 503);
      return deps.runRetention(kind);
    },
    http: { method: 'POST', path: '/retention/run', status: 202 },
    cli: { command: 'retention run', note: '(needs Temporal: temporal.address)' },
  }),
  defineOperation({
    name: 'bootstrap.apply',
    who: 'admin',
    audit: 'those of the operations it applies',
    input: z.object({ file: z.string() }),
    run: ({ file }, { deps }) => {
      if (!deps.bootstrap) throw new HttpError('invalid', 'Bootstrap files are applied by the CLI', 503);
      return deps.bootstrap(file);
    },
    cli: { command: 'bootstrap' },
  }),
];
