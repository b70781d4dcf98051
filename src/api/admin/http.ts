/** HTTP plumbing of the admin API (JSON bodies are shared with the dashboard API): the caller's principal and request bodies. */
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type { ControlPlane, Principal } from '../../store/control-plane/types';
import { API_KEY_PREFIX, secretsEqual, USER_TOKEN_PREFIX } from '../../store/control-plane/tokens';
import { bearerToken } from '../authenticate';
import { HttpError } from '../rest-errors';

/**
 * The admin token (compared as SHA-256 digests in constant time) or a user's personal access token.
 * Project API keys are credentials for the MCP endpoint only.
 */
export async function principalOf(
  ctx: Context,
  controlPlane: Pick<ControlPlane, 'authenticate'>,
  adminToken: string | undefined,
): Promise<Principal> {
  const token = bearerToken(ctx.get('authorization'));
  if (!token) throw new HttpError('unauthorized', 'Send "Authorization: Bearer <admin token or user token>"');
  // Always compared, configured or not, so timing does not reveal whether an admin token exists.
  const isAdmin = secretsEqual(token, adminToken ?? '') && adminToken !== undefined;
  if (isAdmin) return { kind: 'admin', via: 'api' };
  if (token.startsWith(API_KEY_PREFIX)) {
    throw new HttpError('unauthorized', 'Project API keys cannot use the admin API; use a user token');
  }
  if (token.startsWith(USER_TOKEN_PREFIX)) {
    const principal = await controlPlane.authenticate(token);
    if (principal?.kind === 'user') return principal;
  }
  throw new HttpError('unauthorized', 'Unknown, revoked or expired token');
}

/** A JSON object body (empty body = `{}`). */
export async function readJson(ctx: Context, limit: number): Promise<Record<string, unknown>> {
  const length = ctx.get('content-length');
  const chunked = ctx.get('transfer-encoding') !== '';
  if ((length === '' || length === '0') && !chunked) return {};
  if (!ctx.is('application/json'))
    throw new HttpError('invalid', 'Content-Type must be application/json', 415);
  let raw: string;
  try {
    raw = await getRawBody(ctx.req, { limit, encoding: 'utf8' });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') {
      throw new HttpError('invalid', `Request body exceeds ${limit} bytes`, 413);
    }
    throw new HttpError('invalid', 'Could not read the request body');
  }
  if (raw.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new HttpError('invalid', 'The request body is not valid JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new HttpError('invalid', 'The request body must be a JSON object');
  }
  return json as Record<string, unknown>;
}
