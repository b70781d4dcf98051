/**
 * Project API keys (`trk_…`): a credential of one project, for callers that are not users (CI, other
 * services). A key is shown once when created; only its hash is stored. Project managers create, list
 * and revoke keys; a revoked key, or any key of a project being deleted, no longer authenticates.
 */
import { z } from 'zod';
import { API_KEY_PREFIX, digestsEqual, hashToken, mintToken, tokenHint } from './tokens';
import { requireAdmin, requireManagedProject } from './access';
import { actorId, auditBy } from './audit';
import type { StoreContext } from './context';
import { insertUnique, newId } from './context';
import { ControlPlaneError } from './errors';
import { NameSchema, parse } from './schemas';
import { alreadyStored, requireWellFormed, revokeOnce } from './secrets';
import type { Principal } from './types';
import type { ApiKeyView, Updated } from './views';

/** The principal an API key stands for; undefined if unknown, revoked, or its project is being deleted. */
export async function apiKeyPrincipal(ctx: StoreContext, key: string): Promise<Principal | undefined> {
  const hash = hashToken(key);
  const row = await ctx.db
    .selectFrom('api_keys')
    .innerJoin('projects', 'projects.id', 'api_keys.project_id')
    .select(['api_keys.id', 'api_keys.project_id', 'api_keys.key_hash'])
    .where('api_keys.key_hash', '=', hash)
    .where('api_keys.revoked_at', 'is', null)
    .where('projects.deleting_at', 'is', null)
    .executeTakeFirst();
  if (!row || !digestsEqual(row.key_hash, hash)) return undefined;
  return { kind: 'api_key', keyId: row.id, projectId: row.project_id };
}

/** A new project API key, returned once in `key`; only its hash is stored. */
export async function createApiKey(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
  input: { name: string },
): Promise<{ key: string; record: ApiKeyView }> {
  const { name } = parse(z.strictObject({ name: NameSchema }), input);
  const project = await requireManagedProject(ctx, actor, projectRef);
  const key = mintToken(API_KEY_PREFIX);
  return { key, record: await insertApiKey(ctx, actor, project.id, name, key) };
}

/** Admin only (bootstrap): makes sure an API key chosen in advance exists for the project. */
export async function ensureApiKey(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
  input: { name: string; key: string },
): Promise<Updated<ApiKeyView>> {
  requireAdmin(actor);
  const { name, key } = parse(z.strictObject({ name: NameSchema, key: z.string() }), input);
  requireWellFormed(key, API_KEY_PREFIX, `API key "${name}"`);
  const project = await requireManagedProject(ctx, actor, projectRef);
  const existing = await ctx.db
    .selectFrom('api_keys')
    .selectAll()
    .where('key_hash', '=', hashToken(key))
    .executeTakeFirst();
  if (existing) {
    return alreadyStored(existing.project_id === project.id, `API key "${name}"`, toApiKeyView(existing));
  }
  return { record: await insertApiKey(ctx, actor, project.id, name, key), changed: true };
}

export async function listApiKeys(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
): Promise<ApiKeyView[]> {
  const project = await requireManagedProject(ctx, actor, projectRef);
  const rows = await ctx.db
    .selectFrom('api_keys')
    .selectAll()
    .where('project_id', '=', project.id)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toApiKeyView);
}

export async function revokeApiKey(
  ctx: StoreContext,
  actor: Principal,
  projectRef: string,
  keyId: string,
): Promise<ApiKeyView> {
  const project = await requireManagedProject(ctx, actor, projectRef);
  const row = await ctx.db
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', keyId)
    .where('project_id', '=', project.id)
    .executeTakeFirst();
  if (!row) throw new ControlPlaneError('not_found', `No API key "${keyId}" in project "${project.slug}"`);
  const revoked = await revokeOnce(ctx, 'api_keys', row, (trx) =>
    auditBy(ctx, trx, actor, project.id, 'api_key.revoked', { keyId: row.id, name: row.name }),
  );
  return toApiKeyView(revoked);
}

async function insertApiKey(
  ctx: StoreContext,
  actor: Principal,
  projectId: string,
  name: string,
  key: string,
): Promise<ApiKeyView> {
  const row = {
    id: newId('key'),
    project_id: projectId,
    name,
    key_hash: hashToken(key),
    hint: tokenHint(key),
    created_at: ctx.nowIso(),
    revoked_at: null,
  };
  await ctx.transaction(async (trx) => {
    // Who created it: a call with the key is their own call for self-approval (docs/approvals.md).
    const values = { ...row, created_by: actorId(actor) };
    await insertUnique(trx.insertInto('api_keys').values(values), 'API key already exists');
    await auditBy(ctx, trx, actor, projectId, 'api_key.created', { keyId: row.id, name });
  });
  return toApiKeyView(row);
}

function toApiKeyView(row: {
  id: string;
  project_id: string;
  name: string;
  hint: string;
  created_at: string;
  revoked_at: string | null;
}): ApiKeyView {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    hint: row.hint,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
