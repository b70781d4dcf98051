/**
 * What the gateway asks the control plane while serving MCP requests: who a bearer token is, which
 * project a request addresses, and which credential a call to an upstream may use. Every answer is
 * cached until the next control-plane change anywhere (serving-cache.ts), with token and authorization
 * expiry checked on every use. A project being deleted no longer serves.
 */
import type { UpstreamAuthorizationsTable } from '../schema';
import { API_KEY_PREFIX, hashToken, USER_TOKEN_PREFIX } from './tokens';
import { canCallProject } from './access';
import { apiKeyPrincipal } from './api-keys';
import { authorizationStatus, openAuthorization } from './authorizations';
import type { StoreContext } from './context';
import type { CachedEntry } from './serving-cache';
import { toProjectRecord } from './projects';
import { renewalDue, renewAuthorization, validUntil } from './renewal';
import type { Principal, ProjectRecord, UpstreamCredential, UpstreamRecord } from './types';
import { connectsWithOAuth, openUpstreamCredential, toAuth } from './upstreams';
import type { CredentialSubject } from './token-exchange';
import { exchangedAuthorizationValid, exchangedCredential } from './token-exchange';
import { userToken } from './user-tokens';

/** A bearer token (user personal access token or project API key); undefined if unknown or revoked. */
export async function authenticate(ctx: StoreContext, token: string): Promise<Principal | undefined> {
  if (token.length > 512) return undefined;
  const cached = (load: () => Promise<CachedEntry<Principal | undefined>>) =>
    ctx.serving.get('token', hashToken(token), load);
  if (token.startsWith(USER_TOKEN_PREFIX)) {
    return cached(async () => {
      const user = await userToken(ctx, token);
      return { value: user && { kind: 'user', userId: user.userId }, expiresAt: user?.expiresAt ?? null };
    });
  }
  if (token.startsWith(API_KEY_PREFIX))
    return cached(async () => ({ value: await apiKeyPrincipal(ctx, token) }));
  return undefined;
}

/** The project a request addresses. */
export function projectBySlug(ctx: StoreContext, slug: string): Promise<ProjectRecord | undefined> {
  return ctx.serving.get('project', slug, async () => {
    // A project being deleted no longer serves (docs/retention.md).
    const row = await ctx.db
      .selectFrom('projects')
      .selectAll()
      .where('slug', '=', slug)
      .where('deleting_at', 'is', null)
      .executeTakeFirst();
    return { value: row ? await toProjectRecord(ctx.db, row) : undefined };
  });
}

export async function projectById(ctx: StoreContext, id: string): Promise<ProjectRecord | undefined> {
  const row = await ctx.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toProjectRecord(ctx.db, row) : undefined;
}

/**
 * `projectById`, cached like every other serving read: a running task's every upstream request (the
 * watch hub's polls: thousands a second with many tasks in flight) resolves its endpoint by project id,
 * and read the project and its upstreams from the store each time.
 */
export function servedProjectById(ctx: StoreContext, id: string): Promise<ProjectRecord | undefined> {
  return ctx.serving.get('projectById', id, async () => ({ value: await projectById(ctx, id) }));
}

/** The credential `principal` is entitled to for `upstream`, never another one; or why there is none. */
export function upstreamCredential(
  ctx: StoreContext,
  principal: Principal,
  project: ProjectRecord,
  upstream: UpstreamRecord,
  subject: CredentialSubject = {},
): Promise<UpstreamCredential> {
  // Whether the caller brought an OAuth access token (or is a task) decides what token exchange gives.
  const how = subject.accessToken !== undefined ? 'oauth' : subject.task ? 'task' : 'token';
  const key = `${principalKey(principal)}|${project.id}|${upstream.id}|${how}`;
  const read = async () => {
    const expiry = { at: null as string | null };
    const value = await readCredential(ctx, principal, project, upstream, expiry, subject);
    return { value, expiresAt: expiry.at };
  };
  return ctx.serving.get('credential', key, read);
}

/** Whether `principal` may call `project` (cached like every other serving read). */
export function mayCall(ctx: StoreContext, principal: Principal, project: ProjectRecord): Promise<boolean> {
  return ctx.serving.get('access', `${principalKey(principal)}|${project.id}`, async () => ({
    value: await canCallProject(ctx, principal, project),
  }));
}

/** The credential (see upstreamCredential); `expiry.at` is set to when a per-user one stops being valid. */
async function readCredential(
  ctx: StoreContext,
  principal: Principal,
  project: ProjectRecord,
  upstream: UpstreamRecord,
  expiry: { at: string | null },
  subject: CredentialSubject,
): Promise<UpstreamCredential> {
  const name = `Upstream "${upstream.alias}"`;
  // No credential to look up: the (briefly cached) project record already says all that is needed.
  if (upstream.auth.mode === 'none' && upstream.enabled) {
    if (principal.kind !== 'admin' && !(await canCallProject(ctx, principal, project))) {
      return { ok: false, reason: `${name}: the caller may not call project "${project.slug}"` };
    }
    return { ok: true, headers: {}, authorizationId: null };
  }
  const row = await ctx.db
    .selectFrom('upstreams')
    .selectAll()
    .where('id', '=', upstream.id)
    .where('project_id', '=', project.id)
    .executeTakeFirst();
  if (!row) return { ok: false, reason: `${name} is not configured for project "${project.slug}"` };
  if (!row.enabled) return { ok: false, reason: `${name} is disabled` };
  // The admin principal never reaches the MCP endpoint (the admin token is not an MCP credential); it
  // asks here only for the gateway's own configuration checks, which use the project's credential.
  if (principal.kind !== 'admin' && !(await canCallProject(ctx, principal, project))) {
    return { ok: false, reason: `${name}: the caller may not call project "${project.slug}"` };
  }
  const auth = toAuth(row);
  if (auth.mode === 'none') return { ok: true, headers: {}, authorizationId: null };
  if (auth.mode === 'project') {
    if (!row.credential) {
      return { ok: false, reason: `${name} needs a project credential; none is configured` };
    }
    const secret = openUpstreamCredential(ctx, row.id, row.credential);
    return {
      ok: true,
      headers: credentialHeaders(auth.header, secret),
      authorizationId: null,
      boundTo: row.url,
    };
  }
  // per_user
  const exchange = auth.tokenExchange;
  if (exchange) {
    if (principal.kind !== 'user') {
      const who = principal.kind === 'api_key' ? 'API key' : principal.kind;
      return {
        ok: false,
        reason: `${name} obtains each caller's credential by exchanging their OAuth access token; ${who} callers have none (sign in with OAuth)`,
        tokenExchange: 'oauth_sign_in_required',
      };
    }
    return exchangedCredential(ctx, principal.userId, row, exchange, subject, expiry);
  }
  if (principal.kind !== 'user') {
    const who = principal.kind === 'api_key' ? 'API key callers' : `${principal.kind} callers`;
    return {
      ok: false,
      reason: `${name} needs each user's own authorization; ${who} have none (call with a user token)`,
    };
  }
  const auths = await ctx.db
    .selectFrom('upstream_authorizations')
    .selectAll()
    .where('upstream_id', '=', row.id)
    .where('user_id', '=', principal.userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  let active: UpstreamAuthorizationsTable | undefined = auths.find(
    (a) => authorizationStatus(a, ctx.nowIso()) === 'active',
  );
  const latest = auths[0];
  if (latest && renewalDue(ctx, latest)) {
    const renewed = await renewAuthorization(ctx, latest);
    if (renewed && authorizationStatus(renewed, ctx.nowIso()) === 'active') active = renewed;
  }
  if (!active) {
    const base = ctx.options.connectBaseUrl;
    const connectUrl =
      base === undefined || !connectsWithOAuth({ auth }, ctx.options.connectAllPerUser)
        ? undefined
        : `${base}/v1/connect/${project.slug}/${encodeURIComponent(row.alias)}`;
    const connect = connectUrl === undefined ? '' : `; connect it at ${connectUrl}`;
    const why = !latest
      ? 'none granted'
      : latest.revoked_at !== null
        ? 'yours was revoked'
        : `yours expired at ${latest.expires_at}`;
    return {
      ok: false,
      reason: `${name} needs your authorization; ${why}${connect}`,
      ...(connectUrl !== undefined && { connectUrl }),
    };
  }
  const secret = openAuthorization(ctx, active);
  expiry.at = validUntil(active);
  return {
    ok: true,
    headers: credentialHeaders(auth.header, secret),
    authorizationId: active.id,
    boundTo: row.url,
  };
}

/**
 * Whether the upstream authorization a task started with is still valid (not revoked, not expired). A
 * connection that renews itself is renewed here when due, so a task outliving one access token is not
 * taken for withdrawn between its token's expiry and the next upstream request that would renew it.
 */
export function authorizationValid(ctx: StoreContext, authorizationId: string): Promise<boolean> {
  if (authorizationId.startsWith('utx_')) return exchangedAuthorizationValid(ctx, authorizationId);
  const read = async () => {
    let row: UpstreamAuthorizationsTable | undefined = await ctx.db
      .selectFrom('upstream_authorizations')
      .selectAll()
      .where('id', '=', authorizationId)
      .executeTakeFirst();
    if (row && renewalDue(ctx, row)) row = (await renewAuthorization(ctx, row)) ?? row;
    return {
      value: row !== undefined && authorizationStatus(row, ctx.nowIso()) === 'active',
      expiresAt: row ? validUntil(row) : null,
    };
  };
  return ctx.serving.get('authorization', authorizationId, read);
}

/** A principal as a cache key part (ids only; nothing secret). */
function principalKey(p: Principal): string {
  switch (p.kind) {
    case 'user':
      return `user:${p.userId}`;
    case 'api_key':
      return `api_key:${p.keyId}:${p.projectId}`;
    default:
      return p.kind;
  }
}

function credentialHeaders(header: string | undefined, secret: string): Record<string, string> {
  return header === undefined ? { Authorization: `Bearer ${secret}` } : { [header]: secret };
}
