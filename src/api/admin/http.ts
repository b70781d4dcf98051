/** HTTP plumbing of the admin API: the caller's principal, JSON bodies, and the one error format. */
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type { ControlPlaneErrorCode } from '../../store/control-plane';
import { ControlPlaneError } from '../../store/control-plane';
import type { ControlPlane, Principal } from '../../store/control-plane/types';
import { API_KEY_PREFIX, secretsEqual, USER_TOKEN_PREFIX } from '../../store/tokens';
import { bearerToken } from '../authenticate';

const STATUS: Record<ControlPlaneErrorCode, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
};

export class AdminHttpError extends ControlPlaneError {
  constructor(
    code: ControlPlaneErrorCode,
    message: string,
    readonly status: number = STATUS[code],
  ) {
    super(code, message);
  }
}

export function sendError(ctx: Context, err: ControlPlaneError, realm = 'taskrouter-admin'): void {
  ctx.status = err instanceof AdminHttpError ? err.status : STATUS[err.code];
  if (err.code === 'unauthorized') ctx.set('WWW-Authenticate', `Bearer realm="${realm}"`);
  ctx.body = { error: { code: err.code, message: err.message } };
}

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
  if (!token)
    throw new AdminHttpError('unauthorized', 'Send "Authorization: Bearer <admin token or user token>"');
  // Always compared, configured or not, so timing does not reveal whether an admin token exists.
  const isAdmin = secretsEqual(token, adminToken ?? '') && adminToken !== undefined;
  if (isAdmin) return { kind: 'admin', via: 'api' };
  if (token.startsWith(API_KEY_PREFIX)) {
    throw new AdminHttpError('unauthorized', 'Project API keys cannot use the admin API; use a user token');
  }
  if (token.startsWith(USER_TOKEN_PREFIX)) {
    const principal = await controlPlane.authenticate(token);
    if (principal?.kind === 'user') return principal;
  }
  throw new AdminHttpError('unauthorized', 'Unknown, revoked or expired token');
}

/** A JSON object body (empty body = `{}`). */
export async function readJson(ctx: Context, limit: number): Promise<Record<string, unknown>> {
  const length = ctx.get('content-length');
  const chunked = ctx.get('transfer-encoding') !== '';
  if ((length === '' || length === '0') && !chunked) return {};
  if (!ctx.is('application/json'))
    throw new AdminHttpError('invalid', 'Content-Type must be application/json', 415);
  let raw: string;
  try {
    raw = await getRawBody(ctx.req, { limit, encoding: 'utf8' });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') {
      throw new AdminHttpError('invalid', `Request body exceeds ${limit} bytes`, 413);
    }
    throw new AdminHttpError('invalid', 'Could not read the request body');
  }
  if (raw.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new AdminHttpError('invalid', 'The request body is not valid JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new AdminHttpError('invalid', 'The request body must be a JSON object');
  }
  return json as Record<string, unknown>;
}
