/**
 * Bearer secrets of the control plane: user personal access tokens (`trp_`) and project API keys
 * (`trk_`). A secret is a recognisable prefix plus 32 random bytes in base64url (43 characters); it is
 * shown once at creation and only its SHA-256 (hex) is stored. Lookups go by that digest, so the
 * database never holds anything a caller could present.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const USER_TOKEN_PREFIX = 'trp_';
export const API_KEY_PREFIX = 'trk_';
export type TokenPrefix = typeof USER_TOKEN_PREFIX | typeof API_KEY_PREFIX;

/** Secrets given in a bootstrap file must still be long enough to be unguessable (≥ 128 bits-ish). */
const MIN_BODY_CHARS = 22;
const BODY = /^[A-Za-z0-9_-]+$/;

export function mintToken(prefix: TokenPrefix): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** SHA-256 hex of a secret: the only form in which tokens and keys are stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A short, non-secret hint for listings: the prefix and the first four characters (e.g. `trp_Ab3x…`). */
export function tokenHint(token: string): string {
  const prefix = token.startsWith(USER_TOKEN_PREFIX) || token.startsWith(API_KEY_PREFIX) ? 4 : 0;
  return `${token.slice(0, prefix + 4)}…`;
}

/** Whether `token` looks like a secret of this kind: the prefix, then ≥ 22 base64url characters. */
export function isWellFormedToken(token: string, prefix: TokenPrefix): boolean {
  if (!token.startsWith(prefix) || token.length > 512) return false;
  const body = token.slice(prefix.length);
  return body.length >= MIN_BODY_CHARS && BODY.test(body);
}

/** Constant-time equality of two secrets, compared as SHA-256 digests (so lengths never leak). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** Constant-time equality of two hex digests of the same algorithm. */
export function digestsEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
