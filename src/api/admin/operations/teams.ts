/** Teams and their members (store: teams.ts, memberships.ts). */
import { z } from 'zod';
import { nameDefaultsTo, ref, userRef } from './define';
import { members } from './members';
import { rest } from './rest';

const teams = rest({ name: 'team', plural: 'teams', path: '/teams', item: 'team' });
const teamMembers = members(teams.noun);

export const TEAM_OPERATIONS = [
  teams.list({
    who: 'admin: all; user: their own teams',
    run: (_input, { cp, actor }) => cp.listTeams(actor),
  }),
  teams.create({
    who: 'admin',
    audit: 'team.created',
    input: z.strictObject({ slug: z.string(), name: z.string() }),
    run: (input, { cp, actor }) => cp.createTeam(actor, input),
    cli: nameDefaultsTo('slug'),
  }),
  teams.show({
    who: 'admin, members',
    run: ({ team }, { cp, actor }) => cp.getTeam(actor, team),
  }),
  teams.update({
    who: 'admin, members',
    audit: 'team.updated',
    input: z.strictObject({ team: ref, name: z.string().optional() }),
    run: async ({ team, ...patch }, { cp, actor }) => (await cp.updateTeam(actor, team, patch)).record,
    cli: false,
  }),
  teamMembers.add({
    who: 'admin, members',
    run: ({ team, user }, { cp, actor }) => cp.addTeamMember(actor, team, userRef(actor, user)),
  }),
  teamMembers.remove({
    who: 'admin, members',
    run: ({ team, user }, { cp, actor }) => cp.removeTeamMember(actor, team, userRef(actor, user)),
  }),
];
