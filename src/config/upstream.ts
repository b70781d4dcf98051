/**
 * One upstream of a project in the configuration file (the bootstrap file and the admin API take the
 * same shape: src/store/control-plane/schemas.ts), and the RFC 8693 token exchange a `per_user`
 * upstream may obtain each caller's credential with (docs/oauth.md, "Token exchange").
 */
import { z } from 'zod';
import { HostingPolicySchema } from './hosting';

/**
 * `auth.tokenExchange` of a `per_user` upstream: the gateway exchanges the caller's own OAuth access token
 * at `issuer`'s token endpoint (found through its metadata) for a token for this upstream. `audience`
 * and `scope` are sent as given; the upstream's URL always goes as `resource` (RFC 8707). The client
 * authenticates with `clientSecret` when given (a confidential client), else as a public client.
 */
export const TokenExchangeInputSchema = z.strictObject({
  issuer: z.url({ protocol: /^https?$/ }),
  clientId: z
    .string()
    .min(1)
    .max(500)
    .regex(/^[\x20-\x7e]+$/, 'printable ASCII'),
  clientSecret: z
    .string()
    .min(1)
    .max(16_384)
    .regex(/^[\x21-\x7e][\x20-\x7e]*$/, 'printable ASCII without leading whitespace')
    .optional(),
  audience: z.string().min(1).max(2000).optional(),
  scope: z
    .string()
    .regex(/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/, 'space-separated scope tokens')
    .max(2000)
    .optional(),
});
export type TokenExchangeInput = z.infer<typeof TokenExchangeInputSchema>;

export const UpstreamConfigSchema = z.strictObject({
  /** Short name used in tool namespacing, logs and search attributes. */
  alias: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,49}$/),
  url: z.url(),
  /** A disabled upstream is left out of lists and refuses calls. */
  enabled: z.boolean().default(true),
  /**
   * How the upstream is authorized: no credential, one project credential (sent as `Authorization:
   * Bearer …` or in `header`), or each user's own authorization. Same shape as the bootstrap file.
   */
  auth: z
    .discriminatedUnion('mode', [
      z.strictObject({ mode: z.literal('none') }),
      z.strictObject({
        mode: z.literal('project'),
        header: z.string().optional(),
        credential: z.string().optional(),
      }),
      z
        .strictObject({
          mode: z.literal('per_user'),
          header: z.string().optional(),
          /**
           * Users connect this upstream with OAuth from the dashboard (docs/oauth.md): `{}` lets the
           * gateway choose (its client metadata document, else dynamic registration); `clientId`
           * (+ `clientSecret`) names a client registered beforehand, which always comes first.
           */
          oauth: z
            .strictObject({
              clientId: z.string().min(1).optional(),
              clientSecret: z.string().min(1).optional(),
            })
            .optional(),
          /** Each caller's credential by token exchange of their OAuth access token (docs/oauth.md). */
          tokenExchange: TokenExchangeInputSchema.optional(),
        })
        .refine((a) => !(a.oauth && a.tokenExchange), {
          message: 'an upstream is connected with OAuth or uses token exchange, not both',
          path: ['tokenExchange'],
        }),
    ])
    .optional(),
  /**
   * Which of its ordinary tools the gateway hosts as its own durable tasks (docs/admin.md, "Hosted
   * tools"); `null` removes a policy set before. Omitted: left as it is.
   */
  hosting: HostingPolicySchema.nullable().optional(),
});
export type UpstreamConfig = z.infer<typeof UpstreamConfigSchema>;
