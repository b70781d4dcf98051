/** The audit trail (store: audit-log.ts): a project's, and the instance-wide one. */
import { z } from 'zod';
import { HttpError } from '../../rest-errors';
import { defineOperation, limitSchema, ok, ref } from './define';

const page = { limit: limitSchema(4), before: z.string().optional() };
const events = (list: unknown) => ok({ events: list });

export const AUDIT_OPERATIONS = [
  defineOperation({
    name: 'audit.project',
    who: 'managers',
    audit: 'none',
    input: z.object({ project: ref, ...page }),
    run: (query, { cp, actor }) => cp.listAudit(actor, query),
    http: { method: 'GET', path: '/projects/:project/audit', reply: events },
  }),
  defineOperation({
    name: 'audit.list',
    who: 'admin',
    audit: 'none',
    input: z.object({ project: z.string().optional(), ...page }),
    // The instance-wide trail is the administrator's, filtered or not; managers read their project's
    // trail at /projects/{project}/audit (docs/admin.md).
    allow: (actor) => {
      if (actor.kind !== 'admin') throw new HttpError('forbidden', 'Only the administrator reads /audit');
    },
    run: ({ project, ...query }, { cp, actor }) =>
      cp.listAudit(actor, { ...(project && { project }), ...query }),
    http: { method: 'GET', path: '/audit', reply: events },
    cli: { command: 'audit', flags: { before: { meta: 'ID' } } },
  }),
];
