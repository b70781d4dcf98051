/**
 * The declarative bootstrap file (`bootstrapFile` in configuration, or `taskrouter admin bootstrap
 * --file`): teams, users, projects, applied idempotently at start through the same control-plane
 * operations as the admin API. Missing things are created, differing settings updated, nothing is
 * duplicated. Sets (members, tokens, keys, upstreams) are additive: what the file does not mention is
 * left alone, so changes made through the API survive a restart. Settings the file omits are left as
 * they are (defaults apply only when a project is created). Tokens and API keys written in the file are
 * stored as hashes, so a demo can know them in advance. See docs/admin.md.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ApprovalPolicySchema } from '../config/approvals';
import { HostingPolicySchema } from '../config/hosting';
import type { ControlPlaneStore, NewProject, ProjectPatch, UpstreamPatch } from '../store/control-plane';
import {
  ProjectPatchSchema,
  AliasSchema,
  ControlPlaneError,
  HandleSchema,
  NameSchema,
  SlugSchema,
  UpstreamAuthInputSchema,
} from '../store/control-plane';
import type { Principal } from '../store/control-plane/types';

const SecretSchema = z.strictObject({ name: NameSchema, token: z.string().min(1) });
const KeySchema = z.strictObject({ name: NameSchema, key: z.string().min(1) });

export const BootstrapDocumentSchema = z.strictObject({
  teams: z
    .array(
      z.strictObject({
        slug: SlugSchema,
        name: NameSchema.optional(),
        members: z.array(HandleSchema).default([]),
      }),
    )
    .default([]),
  users: z
    .array(
      z.strictObject({
        handle: HandleSchema,
        name: NameSchema.optional(),
        tokens: z.array(SecretSchema).default([]),
        /** Subjects at OpenID issuers that sign in as this user (docs/oauth.md). */
        identities: z.array(z.strictObject({ issuer: z.url(), subject: z.string().min(1) })).default([]),
      }),
    )
    .default([]),
  projects: z
    .array(
      // The settings are a project patch (only the keys given are set; validated in full after merging
      // with the current values), plus what the document declares around the project.
      ProjectPatchSchema.extend({
        slug: SlugSchema,
        team: SlugSchema,
        members: z.array(HandleSchema).default([]),
        apiKeys: z.array(KeySchema).default([]),
        /** Replaces the approval policy (docs/approvals.md); `null` removes it; omitted, left as it is. */
        approvals: ApprovalPolicySchema.nullable().optional(),
        upstreams: z
          .array(
            z.strictObject({
              alias: AliasSchema,
              // http(s), or `stdio:<catalog entry>?…` (checked against stdio.catalog when it is added).
              url: z.union([
                z.url({ protocol: /^https?$/ }),
                z.string().regex(/^stdio:[a-z0-9][a-z0-9_-]{0,49}(\?.*)?$/),
              ]),
              enabled: z.boolean().optional(),
              auth: UpstreamAuthInputSchema.optional(),
              /** Replaces the hosting policy; `null` removes it; omitted, it is left as it is. */
              hosting: HostingPolicySchema.nullable().optional(),
            }),
          )
          .default([]),
      }),
    )
    .default([]),
});
export type BootstrapDocument = z.input<typeof BootstrapDocumentSchema>;

export interface BootstrapResult {
  /** Human-readable descriptions of what was created or changed (empty when nothing was). */
  changes: string[];
}

export function parseBootstrapDocument(input: unknown): z.output<typeof BootstrapDocumentSchema> {
  const result = BootstrapDocumentSchema.safeParse(input);
  if (!result.success) throw new Error(`Invalid bootstrap document:\n${z.prettifyError(result.error)}`);
  return result.data;
}

export function loadBootstrapFile(file: string): z.output<typeof BootstrapDocumentSchema> {
  return parseBootstrapDocument(JSON.parse(readFileSync(file, 'utf8')) as unknown);
}

export async function applyBootstrap(cp: ControlPlaneStore, input: unknown): Promise<BootstrapResult> {
  const doc = parseBootstrapDocument(input);
  const admin: Principal = { kind: 'admin', via: 'bootstrap' };
  const changes: string[] = [];

  // Users first: teams and projects refer to them.
  for (const u of doc.users) {
    const existing = await find(() => cp.getUser(admin, u.handle));
    if (!existing) {
      await cp.createUser(admin, { handle: u.handle, name: u.name ?? u.handle });
      changes.push(`user ${u.handle} created`);
    } else if (u.name !== undefined && (await cp.updateUser(admin, u.handle, { name: u.name })).changed) {
      changes.push(`user ${u.handle} updated`);
    }
    for (const t of u.tokens) {
      if ((await cp.ensureUserToken(admin, u.handle, t)).changed)
        changes.push(`user ${u.handle}: token ${t.name}`);
    }
    const linked = u.identities.length > 0 ? await cp.listIdentities(admin, u.handle) : [];
    for (const i of u.identities) {
      if (linked.some((l) => l.issuer === i.issuer && l.subject === i.subject)) continue;
      await cp.linkIdentity(admin, u.handle, i);
      changes.push(`user ${u.handle}: identity ${i.subject} at ${i.issuer}`);
    }
  }

  for (const t of doc.teams) {
    const existing = await find(() => cp.getTeam(admin, t.slug));
    if (!existing) {
      await cp.createTeam(admin, { slug: t.slug, name: t.name ?? t.slug });
      changes.push(`team ${t.slug} created`);
    } else if (t.name !== undefined && (await cp.updateTeam(admin, t.slug, { name: t.name })).changed) {
      changes.push(`team ${t.slug} updated`);
    }
    for (const handle of t.members) {
      if ((await cp.addTeamMember(admin, t.slug, handle)).changed)
        changes.push(`team ${t.slug}: member ${handle}`);
    }
  }

  for (const p of doc.projects) {
    const settings: ProjectPatch = {
      team: p.team,
      ...(p.authMode !== undefined && { authMode: p.authMode }),
      ...(p.toolProfile !== undefined && { toolProfile: p.toolProfile }),
      ...(p.features !== undefined && { features: p.features }),
      ...(p.namespacing !== undefined && { namespacing: p.namespacing }),
      ...(p.cache !== undefined && { cache: p.cache }),
      ...(p.limits !== undefined && { limits: p.limits }),
    };
    const existing = await find(() => cp.getProject(admin, p.slug));
    if (!existing) {
      await cp.createProject(admin, { ...settings, slug: p.slug, team: p.team } as NewProject);
      changes.push(`project ${p.slug} created`);
    } else if ((await cp.updateProject(admin, p.slug, settings)).changed) {
      changes.push(`project ${p.slug} updated`);
    }
    for (const handle of p.members) {
      if ((await cp.addProjectMember(admin, p.slug, handle)).changed) {
        changes.push(`project ${p.slug}: member ${handle}`);
      }
    }
    for (const k of p.apiKeys) {
      if ((await cp.ensureApiKey(admin, p.slug, k)).changed)
        changes.push(`project ${p.slug}: API key ${k.name}`);
    }
    if (p.approvals !== undefined) {
      const before = await cp.approvalPolicies.get(admin, p.slug);
      const after = await cp.approvalPolicies.set(admin, p.slug, p.approvals);
      if (after.version !== before.version)
        changes.push(`project ${p.slug}: approval policy version ${after.version}`);
    }
    const upstreams = existing?.upstreams ?? [];
    for (const u of p.upstreams) {
      if (!upstreams.some((x) => x.alias === u.alias)) {
        const { hosting, ...rest } = u;
        await cp.addUpstream(admin, p.slug, { ...rest, ...(hosting && { hosting }) });
        changes.push(`project ${p.slug}: upstream ${u.alias} added`);
        continue;
      }
      const patch: UpstreamPatch = {
        url: u.url,
        ...(u.enabled !== undefined && { enabled: u.enabled }),
        ...(u.auth !== undefined && { auth: u.auth }),
        ...(u.hosting !== undefined && { hosting: u.hosting }),
      };
      if ((await cp.updateUpstream(admin, p.slug, u.alias, patch)).changed) {
        changes.push(`project ${p.slug}: upstream ${u.alias} updated`);
      }
    }
  }
  return { changes };
}

async function find<T>(get: () => Promise<T>): Promise<T | undefined> {
  try {
    return await get();
  } catch (err) {
    if (err instanceof ControlPlaneError && err.code === 'not_found') return undefined;
    throw err;
  }
}
