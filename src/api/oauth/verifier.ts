/**
 * Access tokens from the configured OpenID Connect / OAuth issuers, validated with `jose` (docs/oauth.md):
 * the issuer is one the deployment trusts (exact `iss`), the signature verifies with that issuer's keys
 * (asymmetric algorithms only: never `none` nor a shared secret), the audience is this project's resource
 * URL or a configured audience (RFC 8707), the token is within its lifetime (bounded clock skew), names
 * its user, and carries the required scopes.
 *
 * Keys: each issuer's JWKS is fetched on first use (from `jwksUri`, or its discovered metadata), kept for
 * `jwksMaxAgeMs`, and fetched again when a token names an unknown key id (a rotation), at most once per
 * `jwksCooldownMs`. A verified token is remembered by its SHA-256 and resource until it expires, so a
 * client's repeated calls cost one hash and a map lookup.
 */
import { createHash } from 'node:crypto';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import type { OAuthIssuerConfig } from '../../config/oauth';
import { authorizationServerMetadata } from '../../upstream/oauth/metadata';

/** Why a token is refused, in RFC 6750 terms. */
export class TokenRefusal extends Error {
  override readonly name = 'TokenRefusal';
  constructor(
    readonly error: 'invalid_token' | 'insufficient_scope',
    message: string,
  ) {
    super(message);
  }
}

/** The issuer's keys could not be fetched: the token may be fine, the gateway cannot tell. */
export class IssuerUnavailable extends Error {
  override readonly name = 'IssuerUnavailable';
}

export interface VerifiedToken {
  issuer: OAuthIssuerConfig;
  claims: JWTPayload;
  /** The value of the issuer's user claim. */
  subject: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

const MAX_TOKEN_CHARS = 16_384;
const MAX_REMEMBERED = 10_000;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Whether a bearer token is shaped like a JWS compact serialisation (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return token.length <= MAX_TOKEN_CHARS && JWT_SHAPE.test(token);
}

interface Remembered {
  token: VerifiedToken;
  /** Epoch ms after which the token is expired, tolerance included. */
  until: number;
}

export class AccessTokenVerifier {
  private readonly issuers = new Map<string, OAuthIssuerConfig>();
  private readonly keys = new Map<string, Promise<JWTVerifyGetKey>>();
  private readonly remembered = new Map<string, Remembered>();

  constructor(issuers: readonly OAuthIssuerConfig[]) {
    for (const issuer of issuers) this.issuers.set(issuer.issuer, issuer);
  }

  /** Every scope some issuer requires (for the resource metadata and the challenge). */
  requiredScopes(): string[] {
    return [...new Set([...this.issuers.values()].flatMap((i) => i.requiredScopes))];
  }

  issuerIds(): string[] {
    return [...this.issuers.keys()];
  }

  /** The verified token, or a TokenRefusal (never anything else for what a client sends). */
  async verify(token: string, resource: string): Promise<VerifiedToken> {
    const key = `${createHash('sha256').update(token).digest('base64url')} ${resource}`;
    const hit = this.remembered.get(key);
    if (hit) {
      if (Date.now() <= hit.until) return hit.token;
      this.remembered.delete(key);
      throw new TokenRefusal('invalid_token', 'The access token has expired');
    }
    const verified = await this.verifyAnew(token, resource);
    if (this.remembered.size >= MAX_REMEMBERED) {
      const oldest = this.remembered.keys().next().value;
      if (oldest !== undefined) this.remembered.delete(oldest);
    }
    const until = verified.expiresAt + verified.issuer.clockToleranceSec * 1000;
    this.remembered.set(key, { token: verified, until });
    return verified;
  }

  private async verifyAnew(token: string, resource: string): Promise<VerifiedToken> {
    if (!looksLikeJwt(token)) throw new TokenRefusal('invalid_token', 'The access token is malformed');
    let alg: string | undefined;
    let iss: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
      iss = decodeJwt(token).iss;
    } catch {
      throw new TokenRefusal('invalid_token', 'The access token is malformed');
    }
    const issuer = iss === undefined ? undefined : this.issuers.get(iss);
    if (!issuer)
      throw new TokenRefusal('invalid_token', 'The access token is not from an issuer this gateway trusts');
    if (alg === undefined || !(issuer.algorithms as readonly string[]).includes(alg)) {
      throw new TokenRefusal(
        'invalid_token',
        `The access token's algorithm (${alg ?? 'none'}) is not accepted`,
      );
    }
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, await this.keysOf(issuer), {
        issuer: issuer.issuer,
        audience: [resource, ...issuer.audiences],
        algorithms: issuer.algorithms,
        clockTolerance: issuer.clockToleranceSec,
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      throw refusalOf(err);
    }
    const raw = claims[issuer.userClaim];
    const subject = typeof raw === 'string' || typeof raw === 'number' ? String(raw) : '';
    if (subject === '' || subject.length > 512) {
      throw new TokenRefusal('invalid_token', `The access token has no "${issuer.userClaim}" claim`);
    }
    const granted = scopesOf(claims);
    const missing = issuer.requiredScopes.filter((s) => !granted.has(s));
    if (missing.length > 0) {
      throw new TokenRefusal('insufficient_scope', `The access token lacks the scope ${missing.join(' ')}`);
    }
    return { issuer, claims, subject, expiresAt: (claims.exp as number) * 1000 };
  }

  /**
   * An OpenID Connect ID token from a dashboard sign-in: signed by `issuerId` with an accepted algorithm,
   * for `clientId`, unexpired, carrying the `nonce` the flow sent and the issuer's user claim.
   */
  async verifyIdToken(
    token: string,
    issuerId: string,
    clientId: string,
    nonce: string,
  ): Promise<VerifiedToken> {
    const issuer = this.issuers.get(issuerId);
    if (!issuer || !looksLikeJwt(token)) throw new TokenRefusal('invalid_token', 'The ID token is malformed');
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, await this.keysOf(issuer), {
        issuer: issuer.issuer,
        audience: clientId,
        algorithms: issuer.algorithms,
        clockTolerance: issuer.clockToleranceSec,
        requiredClaims: ['exp', 'nonce'],
      }));
    } catch (err) {
      throw refusalOf(err);
    }
    if (claims['nonce'] !== nonce)
      throw new TokenRefusal('invalid_token', 'The ID token is not for this sign-in');
    const raw = claims[issuer.userClaim];
    const subject = typeof raw === 'string' || typeof raw === 'number' ? String(raw) : '';
    if (subject === '' || subject.length > 512) {
      throw new TokenRefusal('invalid_token', `The ID token has no "${issuer.userClaim}" claim`);
    }
    return { issuer, claims, subject, expiresAt: (claims.exp as number) * 1000 };
  }

  /** The issuer's key set: fetched lazily, refetched on an unknown key id after the cooldown. */
  private keysOf(issuer: OAuthIssuerConfig): Promise<JWTVerifyGetKey> {
    let keys = this.keys.get(issuer.issuer);
    if (!keys) {
      keys = (async () => {
        const uri = issuer.jwksUri ?? (await authorizationServerMetadata(issuer.issuer)).jwksUri;
        if (uri === undefined) throw new IssuerUnavailable(`${issuer.issuer} publishes no jwks_uri`);
        return createRemoteJWKSet(new URL(uri), {
          cooldownDuration: issuer.jwksCooldownMs,
          cacheMaxAge: issuer.jwksMaxAgeMs,
          timeoutDuration: 5_000,
        });
      })();
      this.keys.set(issuer.issuer, keys);
      // A failed discovery is tried again by the next token rather than remembered.
      keys.catch(() => this.keys.delete(issuer.issuer));
    }
    return keys.catch((err: unknown) => {
      throw err instanceof IssuerUnavailable
        ? err
        : new IssuerUnavailable(`The keys of ${issuer.issuer} could not be fetched`);
    });
  }
}

/** `scope` (RFC 8693/9068, space-separated) or `scp` (Entra ID: a string or an array). */
function scopesOf(claims: JWTPayload): Set<string> {
  const out = new Set<string>();
  for (const claim of [claims['scope'], claims['scp']]) {
    if (typeof claim === 'string') for (const s of claim.split(' ')) if (s !== '') out.add(s);
    if (Array.isArray(claim)) for (const s of claim) if (typeof s === 'string') out.add(s);
  }
  return out;
}

/** A jose failure as what the client is told; key-fetching failures are the gateway's problem. */
function refusalOf(err: unknown): Error {
  if (err instanceof IssuerUnavailable) return err;
  if (err instanceof errors.JWTExpired)
    return new TokenRefusal('invalid_token', 'The access token has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    const what =
      err.claim === 'aud'
        ? 'is not for this resource (audience)'
        : err.claim === 'nbf'
          ? 'is not valid yet'
          : `has an unacceptable "${err.claim}" claim`;
    return new TokenRefusal('invalid_token', `The access token ${what}`);
  }
  if (err instanceof errors.JWKSNoMatchingKey) {
    return new TokenRefusal(
      'invalid_token',
      'The access token is signed with a key the issuer does not publish',
    );
  }
  // Key-set fetches that fail (timeout, an answer that is not a key set, not 200) say nothing of the token.
  const generic = err instanceof errors.JOSEError && err.code === 'ERR_JOSE_GENERIC';
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || generic) {
    return new IssuerUnavailable("The issuer's keys could not be fetched");
  }
  if (err instanceof errors.JOSEError) {
    return new TokenRefusal(
      'invalid_token',
      'The access token is malformed or its signature does not verify',
    );
  }
  // fetch failures of the key set (network) are not the token's fault.
  return new IssuerUnavailable("The issuer's keys could not be fetched");
}
