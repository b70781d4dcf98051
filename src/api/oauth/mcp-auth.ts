/**
 * OAuth on the MCP endpoint: an access token's refusal as the JSON-RPC error and the `WWW-Authenticate`
 * challenge that go with it (401 `invalid_token`, 403 `insufficient_scope`, 401 without an error code
 * when no token was sent), the same for 2026 and 2025-era clients.
 */
import { ProtocolError } from '../../protocol';
import type { Principal } from '../../store/control-plane/types';
import type { Challenge, OAuthResourceServer } from './resource-server';
import { IssuerUnavailable, TokenRefusal } from './verifier';

/** A refused access token: the error the client gets, and what its challenge says. */
export class BearerRefusal extends ProtocolError {
  constructor(
    kind: 'Unauthorized' | 'Forbidden',
    message: string,
    readonly challenge: Challenge,
  ) {
    super(kind, message);
  }
}

/** Resolves an access token presented for `resource` to its user (null: valid, but no user). */
export function tokenPrincipal(
  oauth: OAuthResourceServer,
  resource: string,
): (token: string) => Promise<Principal | null> {
  return async (token) => {
    try {
      return await oauth.principal(token, resource);
    } catch (err) {
      if (err instanceof TokenRefusal) {
        const kind = err.error === 'insufficient_scope' ? 'Forbidden' : 'Unauthorized';
        throw new BearerRefusal(kind, err.message, { error: err.error, description: err.message });
      }
      if (err instanceof IssuerUnavailable) throw new ProtocolError('IssuerUnavailable', err.message);
      throw err;
    }
  };
}

/** The `WWW-Authenticate` header of a refused MCP request, if it needs one. */
export function challengeHeader(
  oauth: OAuthResourceServer | undefined,
  slug: string,
  err: unknown,
  status: number,
): string | undefined {
  const challenge = err instanceof BearerRefusal ? err.challenge : undefined;
  if (status !== 401 && !challenge) return undefined;
  return oauth ? oauth.challenge(slug, challenge) : 'Bearer';
}
