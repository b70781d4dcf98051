/** Per-user upstream authorizations (store: authorizations.ts): grant, revoke, list. */
import { z } from 'zod';
import type { ControlPlaneStore } from '../../../store/control-plane';
import type { ActorContext } from './define';
import { credentialGroup } from './cli-groups';
import { defineOperation, ref, userRef } from './define';
import { rest } from './rest';

/** Whose authorization, when not the caller's own (admin, or managers to revoke). */
const onBehalfOf = z.string({ error: '"user" must be a string' }).min(1, '"user" must be a string').nullish();

const upstreamFlag = { flag: 'upstream', meta: 'A' } as const;

/**
 * Revoking one's own authorization (no `user`) is also the dashboard's "Disconnect"
 * (src/api/dashboard/project-routes.ts), which needs only this of the control plane.
 */
export const AUTHORIZATION_REVOKE = defineOperation({
  name: 'authorization.revoke',
  who: 'the user; `user`: admin and managers',
  audit: 'authorization.revoked',
  input: z.object({ project: ref, alias: ref, user: onBehalfOf }),
  run: (
    { project, alias, user },
    { cp, actor }: ActorContext & { cp: Pick<ControlPlaneStore, 'revokeUpstreamAuthorization'> },
  ) =>
    cp.revokeUpstreamAuthorization(actor, project, alias, {
      ...(user != null && { user: userRef(actor, user) }),
    }),
  http: { method: 'DELETE', path: '/projects/:project/upstreams/:alias/authorization' },
  cli: { command: 'authorization revoke', flags: { alias: upstreamFlag, user: { required: true } } },
});

/** Listed per project; granted and revoked at the upstream (`…/upstreams/:alias/authorization`). */
const authorizations = rest({
  name: 'authorization',
  plural: 'authorizations',
  path: '/projects/:project/authorizations',
});

export const AUTHORIZATION_OPERATIONS = [
  defineOperation({
    name: 'authorization.grant',
    who: 'the user (who may call the project); `user`: admin only',
    audit: 'authorization.granted',
    input: z.strictObject({
      project: ref,
      alias: ref,
      user: onBehalfOf,
      credential: z.string(),
      expiresAt: z.string().optional(),
    }),
    run: ({ project, alias, user, ...grant }, { cp, actor }) =>
      cp.grantUpstreamAuthorization(actor, project, alias, {
        ...grant,
        ...(user != null && { user: userRef(actor, user) }),
      }),
    http: { method: 'PUT', path: '/projects/:project/upstreams/:alias/authorization' },
    cli: {
      command: 'authorization grant',
      flags: { alias: upstreamFlag, user: { required: true }, expiresAt: { meta: 'ISO' } },
      groups: [credentialGroup],
    },
  }),
  AUTHORIZATION_REVOKE,
  authorizations.list({
    who: 'managers: all; callers: their own',
    run: ({ project }, { cp, actor }) => cp.listUpstreamAuthorizations(actor, project),
  }),
];
