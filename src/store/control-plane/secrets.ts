/**
 * What personal access tokens (user-tokens.ts) and project API keys (api-keys.ts) have in common. Both
 * are bearer secrets stored only as a SHA-256 hash with a non-secret hint (src/store/control-plane/tokens.ts). A
 * secret given in advance (the bootstrap file) must look like one the store would mint, and one that
 * is already stored is never handed to a second owner. A secret is revoked once: revoking it again
 * changes nothing and writes no audit record.
 *
 * Also here: the client secrets an upstream's settings hold sealed (its OAuth client's, its token exchange
 * client's), as a patch of those settings keeps, replaces or drops them.
 */
import type { TokenPrefix } from './tokens';
import { isWellFormedToken, secretsEqual } from './tokens';
import type { Db, StoreContext } from './context';
import { ControlPlaneError } from './errors';
import type { Updated } from './views';

/** `what` names the secret in the message: `Token "ci"`, `API key "ci"`. */
export function requireWellFormed(secret: string, prefix: TokenPrefix, what: string): void {
  if (!isWellFormedToken(secret, prefix)) {
    throw new ControlPlaneError(
      'invalid',
      `${what} must be "${prefix}" followed by at least 22 base64url characters`,
    );
  }
}

/** A secret given in advance that is already stored: unchanged for its owner, a conflict for anyone else. */
export function alreadyStored<V>(sameOwner: boolean, what: string, record: V): Updated<V> {
  if (!sameOwner) throw new ControlPlaneError('conflict', `${what} is already in use`);
  return { record, changed: false };
}

/** The row revoked now (and `audit` written with it), or as it is if it was revoked already. */
export async function revokeOnce<R extends { id: string; revoked_at: string | null }>(
  ctx: StoreContext,
  table: 'user_tokens' | 'api_keys',
  row: R,
  audit: (trx: Db) => Promise<void>,
): Promise<R> {
  if (row.revoked_at !== null) return row;
  const revokedAt = ctx.nowIso();
  await ctx.transaction(async (trx) => {
    await trx.updateTable(table).set({ revoked_at: revokedAt }).where('id', '=', row.id).execute();
    await audit(trx);
  });
  return { ...row, revoked_at: revokedAt };
}

/**
 * A sealed client secret after a patch: a `given` secret replaces it (given again, the stored one changes
 * nothing); none given, the stored one stays while the client is the same and goes otherwise. Undefined:
 * it does not change.
 */
export function patchedClientSecret(
  stored: Buffer | null,
  sameClient: boolean,
  given: string | undefined,
  sealing: { open(sealed: Buffer): string; seal(secret: string): Buffer },
): Buffer | null | undefined {
  let secret = sameClient ? stored : null;
  if (given !== undefined) {
    const same = stored !== null && secretsEqual(sealing.open(stored), given);
    secret = same ? stored : sealing.seal(given);
  }
  return secret === stored ? undefined : secret;
}
