/** Teams and their members (store: teams.ts, memberships.ts). */
import { z } from 'zod';
import { defineOperation, membership, ok, ref, userRef } from './define';

/** `"user" must be a non-empty string`: the member to add, named in the body. */
export const memberUser = z
  .string({ error: '"user" must be a non-empty string' })
  .min(1, '"user" must be a non-empty string');

export const TEAM_OPERATIONS = [
  defineOperation({
    name: 'team.list',
    who: 'admin: all; user: their own teams',
    audit: 'none',
    input: z.object({}),
    run: (_input, { cp, actor }) => cp.listTeams(actor),
    http: { method: 'GET', path: '/teams', reply: (teams) => ok({ teams }) },
    cli: { command: 'team list' },
  }),
  defineOperation({
    name: 'team.create',
    who: 'admin',
    audit: 'team.created',
    input: z.strictObject({ slug: z.string(), name: z.string() }),
    run: (input, { cp, actor }) => cp.createTeam(actor, input),
    http: { method: 'POST', path: '/teams', status: 201 },
    cli: {
      command: 'team create',
      flags: { name: { required: false } },
      defaults: (input) => ({ name: input.name ?? input.slug }),
    },
  }),
  defineOperation({
    name: 'team.show',
    who: 'admin, members',
    audit: 'none',
    input: z.object({ team: ref }),
    run: ({ team }, { cp, actor }) => cp.getTeam(actor, team),
    http: { method: 'GET', path: '/teams/:team' },
    cli: { command: 'team show' },
  }),
  defineOperation({
    name: 'team.update',
    who: 'admin, members',
    audit: 'team.updated',
    input: z.strictObject({ team: ref, name: z.string().optional() }),
    run: async ({ team, ...patch }, { cp, actor }) => (await cp.updateTeam(actor, team, patch)).record,
    http: { method: 'PATCH', path: '/teams/:team' },
  }),
  defineOperation({
    name: 'team.addMember',
    who: 'admin, members',
    audit: 'team.member_added',
    input: z.object({ team: ref, user: memberUser }),
    run: ({ team, user }, { cp, actor }) => cp.addTeamMember(actor, team, userRef(actor, user)),
    http: { method: 'POST', path: '/teams/:team/members', reply: membership },
    cli: { command: 'team add-member', print: (r) => r.record },
  }),
  defineOperation({
    name: 'team.removeMember',
    who: 'admin, members',
    audit: 'team.member_removed',
    input: z.object({ team: ref, user: ref }),
    run: ({ team, user }, { cp, actor }) => cp.removeTeamMember(actor, team, userRef(actor, user)),
    http: { method: 'DELETE', path: '/teams/:team/members/:user' },
    cli: { command: 'team remove-member', print: () => ({ removed: true }) },
  }),
];
