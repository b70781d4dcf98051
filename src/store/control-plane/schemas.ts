/**
 * The control plane's input schemas, shared by the admin API, the CLI and the bootstrap file so all
 * three accept exactly the same things, and `parse`, which turns a rejected input into an `invalid`
 * error naming the field. Names are checked here once; the operations trust what these return.
 */
import { z } from 'zod';
import { CacheConfigSchema, LimitsConfigSchema } from '../../config/config';
import { HostingPolicySchema } from '../../config/hosting';
import { TokenExchangeInputSchema } from '../../config/upstream';
import type { UpstreamsTable } from '../schema';
import type { StoreContext } from './context';
import { ControlPlaneError } from './errors';

export const SlugSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,49}$/, 'lowercase letters, digits and "-"');
export const HandleSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,49}$/, 'lowercase letters, digits, ".", "_" and "-"');
export const AliasSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,49}$/, 'lowercase letters, digits, "_", "-"');
export const NameSchema = z.string().trim().min(1).max(200);
export const FutureTimestampSchema = z.iso.datetime({ offset: true });

/** Headers a credential may not be sent in: framing, routing and the MCP protocol's own headers. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'accept',
  'cookie',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'mcp-session-id',
]);
export const HeaderNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'an HTTP header name')
  .refine((h) => !RESERVED_HEADERS.has(h.toLowerCase()), 'a reserved header cannot carry a credential');
export const CredentialSchema = z
  .string()
  .min(1)
  .max(16_384)
  .regex(/^[\x21-\x7e][\x20-\x7e]*$/, 'printable ASCII without leading whitespace');

/**
 * A `per_user` upstream that users connect with OAuth (docs/oauth.md): `{}` registers the gateway
 * dynamically at the upstream's authorization server; `clientId` (and `clientSecret` for a confidential
 * client) is a client registered there beforehand, for servers without dynamic registration. For a
 * patch, an omitted `clientSecret` keeps the stored one while `clientId` stays the same.
 */
export const UpstreamOAuthInputSchema = z
  .strictObject({
    clientId: z
      .string()
      .min(1)
      .max(500)
      .regex(/^[\x20-\x7e]+$/, 'printable ASCII')
      .optional(),
    clientSecret: CredentialSchema.optional(),
  })
  .refine((o) => o.clientSecret === undefined || o.clientId !== undefined, {
    message: 'clientSecret needs clientId',
    path: ['clientSecret'],
  });

export const UpstreamAuthInputSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('none') }),
  z.strictObject({
    mode: z.literal('project'),
    header: HeaderNameSchema.optional(),
    credential: CredentialSchema.optional(),
  }),
  z
    .strictObject({
      mode: z.literal('per_user'),
      header: HeaderNameSchema.optional(),
      oauth: UpstreamOAuthInputSchema.optional(),
      /**
       * RFC 8693 token exchange (docs/oauth.md): each caller's OAuth access token is exchanged at
       * `issuer` for their credential. For a patch, an omitted `clientSecret` keeps the stored one while
       * `issuer` and `clientId` stay the same.
       */
      tokenExchange: TokenExchangeInputSchema.optional(),
    })
    .refine((a) => !(a.oauth && a.tokenExchange), {
      message: 'an upstream is connected with OAuth or uses token exchange, not both',
      path: ['tokenExchange'],
    }),
]);
export type UpstreamAuthInput = z.infer<typeof UpstreamAuthInputSchema>;

/** An HTTP(S) URL, or a local process named by the operator's catalog: `stdio:<entry>?<value>=…`. */
const UrlSchema = z.union([
  z.url({ protocol: /^https?$/ }),
  z
    .string()
    .max(2000)
    .regex(/^stdio:[a-z0-9][a-z0-9_-]{0,49}(\?.*)?$/, 'an http(s) URL or stdio:<catalog entry>'),
]);

export const NewUpstreamSchema = z.strictObject({
  alias: AliasSchema,
  url: UrlSchema,
  enabled: z.boolean().default(true),
  auth: UpstreamAuthInputSchema.default({ mode: 'none' }),
  /** Which of its ordinary tools the gateway hosts as its own tasks (src/config/hosting.ts). */
  hosting: HostingPolicySchema.optional(),
});
export type NewUpstream = z.input<typeof NewUpstreamSchema>;

export const UpstreamPatchSchema = z.strictObject({
  url: UrlSchema.optional(),
  enabled: z.boolean().optional(),
  /** Replaces the auth settings. For mode `project`, an omitted credential keeps the stored one. */
  auth: UpstreamAuthInputSchema.optional(),
  /** Replaces the hosting policy (omitted fields take their defaults); `null` removes it. */
  hosting: HostingPolicySchema.nullable().optional(),
});
export type UpstreamPatch = z.input<typeof UpstreamPatchSchema>;

/**
 * One part of applying a patch's `auth` to an upstream (patchOAuth, patchTokenExchange): what changes
 * is written into `next`, a copy of `row`, and each changed field named in `fields`.
 */
export type AuthPatchStep = (
  ctx: StoreContext,
  row: UpstreamsTable,
  next: UpstreamsTable,
  a: NonNullable<z.output<typeof UpstreamPatchSchema>['auth']>,
  fields: string[],
) => void;

export const AuthModeSchema = z.enum(['required', 'anonymous']);
export const ToolProfileSchema = z.enum(['tasks', 'standard']);

export const NewProjectSchema = z.strictObject({
  slug: SlugSchema,
  /** Owning team: slug or id. */
  team: z.string().min(1),
  authMode: AuthModeSchema.default('required'),
  toolProfile: ToolProfileSchema.default('tasks'),
  features: z.strictObject({ tasks: z.boolean().default(true) }).prefault({}),
  namespacing: z.boolean().default(true),
  cache: CacheConfigSchema.prefault({}),
  limits: LimitsConfigSchema.prefault({}),
});
export type NewProject = z.input<typeof NewProjectSchema>;

/** A partial update; `cache`, `limits` and `features` are merged into the current values. */
export const ProjectPatchSchema = z.strictObject({
  team: z.string().min(1).optional(),
  authMode: AuthModeSchema.optional(),
  toolProfile: ToolProfileSchema.optional(),
  features: z.strictObject({ tasks: z.boolean().optional() }).optional(),
  namespacing: z.boolean().optional(),
  cache: z.record(z.string(), z.unknown()).optional(),
  limits: z.record(z.string(), z.unknown()).optional(),
});
export type ProjectPatch = z.input<typeof ProjectPatchSchema>;

/** Validates input with a schema; a failure is an `invalid` error naming the field. */
export function parse<S extends z.ZodType>(schema: S, input: unknown, path?: string): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const message = z.prettifyError(result.error);
    throw new ControlPlaneError('invalid', path ? `${path}: ${message}` : message);
  }
  return result.data;
}
