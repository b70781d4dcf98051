/**
 * The `oauth` section of the configuration (docs/oauth.md): the OpenID Connect / OAuth 2.1 issuers whose
 * access tokens the MCP endpoint accepts (the gateway as a protected resource, each project's resource
 * named after `http.publicBaseUrl`), and the optional dashboard sign-in through one of those issuers.
 */
import { z } from 'zod';

/**
 * Signature algorithms accepted on access tokens: asymmetric only. `none` and the HMAC family (whose key
 * would be a secret shared with every resource server) are never accepted.
 */
export const JWS_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

const HttpUrl = z.url({ protocol: /^https?$/ });

export const OAuthIssuerSchema = z.strictObject({
  /** The issuer identifier, exactly as it appears in the tokens' `iss` claim. */
  issuer: HttpUrl,
  /** Where the issuer's signing keys are; discovered from its metadata when omitted. */
  jwksUri: HttpUrl.optional(),
  /**
   * Audiences accepted besides the project's own resource URL (`<publicBaseUrl>/v1/mcp/<project>`), for
   * issuers that stamp one deployment-wide audience (Entra ID's `api://…`, an Auth0 API identifier).
   */
  audiences: z.array(z.string().min(1)).default([]),
  /** The claim that identifies the user (its value is the external subject linked to a TaskRouter user). */
  userClaim: z.string().min(1).default('sub'),
  /** Claims a new user's handle and name are taken from. */
  handleClaim: z.string().min(1).default('preferred_username'),
  nameClaim: z.string().min(1).default('name'),
  /** The claim listing the user's groups, and which team each group means (group → team slug). */
  groupsClaim: z.string().min(1).default('groups'),
  groupTeams: z.record(z.string(), z.string()).default({}),
  /** Scopes every token must carry (advertised in the 401 challenge and the resource metadata). */
  requiredScopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/)).default([]),
  /** Create a TaskRouter user the first time an unknown subject presents a valid token. */
  provisionUsers: z.boolean().default(true),
  /** Link an unknown subject to the existing user whose handle equals its handle claim (trust the issuer's usernames). */
  linkExistingUsers: z.boolean().default(false),
  algorithms: z.array(z.enum(JWS_ALGORITHMS)).min(1).default(['RS256', 'PS256', 'ES256', 'EdDSA']),
  /** Clock skew tolerated on `exp`, `nbf` and `iat`. */
  clockToleranceSec: z.int().min(0).max(300).default(30),
  /** After fetching the keys, how long a token with an unknown `kid` waits before the keys are fetched again. */
  jwksCooldownMs: z.int().min(0).max(600_000).default(30_000),
  /** Longest the fetched keys are kept without being fetched again. */
  jwksMaxAgeMs: z.int().positive().default(600_000),
});
export type OAuthIssuerConfig = z.infer<typeof OAuthIssuerSchema>;

export const OAuthConfigSchema = z
  .strictObject({
    issuers: z.array(OAuthIssuerSchema).min(1),
    /**
     * Dashboard sign-in through one of `issuers` (OpenID Connect authorization code + PKCE), next to
     * token sign-in. The client is registered at the issuer with the redirect URI
     * `<http.publicBaseUrl>/v1/session/sso/callback`.
     */
    dashboard: z
      .strictObject({
        issuer: HttpUrl,
        clientId: z.string().min(1),
        /** Omitted: a public client (PKCE only). */
        clientSecret: z.string().min(1).optional(),
        scopes: z.array(z.string().min(1)).default(['openid', 'profile', 'email']),
        /** The label of the sign-in button. */
        label: z.string().min(1).max(60).default('Sign in with single sign-on'),
      })
      .optional(),
  })
  .refine((o) => !o.dashboard || o.issuers.some((i) => i.issuer === o.dashboard?.issuer), {
    message: 'oauth.dashboard.issuer must be one of oauth.issuers',
    path: ['dashboard', 'issuer'],
  })
  .refine((o) => new Set(o.issuers.map((i) => i.issuer)).size === o.issuers.length, {
    message: 'each issuer may be listed once',
    path: ['issuers'],
  });
export type OAuthConfig = z.infer<typeof OAuthConfigSchema>;
